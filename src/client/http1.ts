/**
 * A small HTTP/1.1 client for the REST client: requests whose response is
 * read whole on kept-alive connections per origin, at most `connections` of
 * them at once, requests beyond that queued in order, one request at a time
 * on a connection; and streams (watches), each on a connection of its own,
 * whose body is handed over chunk by chunk as it arrives.
 *
 * Why not undici for these: a controller manager sends thousands of small
 * requests, and undici's general machinery (a request object with its
 * validation, its dispatcher chain, the WebAssembly parser and its callbacks)
 * cost as much CPU per request as the TLS exchange itself. A whole response
 * needs little: the status line and headers, then Content-Length or chunked
 * framing (or the body to the end of the connection).
 *
 * Connection reuse follows Go's transport and undici: an idle connection
 * closes after `keepAliveTimeoutMs`, or a second before the server's own
 * `Keep-Alive: timeout=N` hint; a GET or HEAD whose reused connection closes
 * before any byte of the answer (the server closed it as idle meanwhile) is
 * sent again once on a new connection; any other failure rejects with the
 * socket's error (a close before the answer is complete: code ECONNRESET).
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type SecureContext } from 'node:tls';

/** A whole response: status, headers (lower-case names; repeated ones as arrays) and the body. */
export interface BufferedResponse {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

export interface Http1Request {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Aborts the request at any point: it rejects with the signal's reason and its connection closes. */
  signal?: AbortSignal;
}

export interface Http1AgentOptions {
  /** Connections per origin. */
  connections: number;
  /** How long an idle connection is kept (default 30 s). */
  keepAliveTimeoutMs?: number;
  /** How long connecting (and the TLS handshake) may take (default 10 s, as undici's). */
  connectTimeoutMs?: number;
  /** Connect to this Unix socket instead of the URL's host and port. */
  socketPath?: string;
  /** For https: origins. */
  tls?: { secureContext?: SecureContext; rejectUnauthorized?: boolean; servername?: string };
}

/** A response whose body is read as it arrives. */
export interface StreamedResponse {
  statusCode: number;
  headers: Record<string, string | string[]>;
  /** The body's chunks (de-chunked); iteration fails when the connection breaks before the body's end. */
  body: AsyncIterable<Buffer>;
  /** Closes the connection; an iteration in progress fails with code ABORT_ERR. */
  abort(): void;
}

export interface Http1Agent {
  request(url: string, req: Http1Request): Promise<BufferedResponse>;
  /** A request on a connection of its own (not counted in `connections`), resolved once the headers are in. */
  stream(url: string, req: Http1Request): Promise<StreamedResponse>;
  /** Stops taking requests; resolves once those queued and in flight are answered and every connection is closed. */
  close(): Promise<void>;
  /** Closes every connection now; requests queued or in flight reject. */
  destroy(): Promise<void>;
}

const DEFAULT_KEEP_ALIVE_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Go's http.Transport limit on a response's header block. */
const MAX_HEAD_BYTES = 1 << 20;
/** The margin kept below a server's keep-alive timeout hint (undici's keepAliveTimeoutThreshold). */
const KEEP_ALIVE_HINT_MARGIN_MS = 1000;
/** Header values undici and Go accept (visible ASCII, tab, space, obs-text); ASCII-only ones are the common case. */
const NOT_ASCII_VALUE = /[^\t\x20-\x7e]/;
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_NAME = /[^!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
/** A length JavaScript numbers hold exactly. */
const DIGITS = /^\d{1,15}$/;

/** An error with a Node-style code, for callers that tell resets and timeouts apart. */
function codedError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

export function newHttp1Agent(opts: Http1AgentOptions): Http1Agent {
  const pools = new Map<string, Pool>();
  let state: 'open' | 'closing' | 'destroyed' = 'open';
  const send = (url: string, req: Http1Request, stream: boolean): Promise<unknown> => {
    if (state !== 'open') return Promise.reject(new Error(state === 'closing' ? 'the client is closed' : 'the client is destroyed'));
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    let ex: Exchange;
    let pool: Pool;
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported protocol ${u.protocol}`);
      pool = pools.get(u.origin) ?? newPool(u);
      ex = new Exchange(req, requestHead(req, u), stream);
    } catch (err) {
      return Promise.reject(err);
    }
    const done = ex.promise;
    pool.submit(ex);
    return done;
  };
  return {
    request: (url, req) => send(url, req, false) as Promise<BufferedResponse>,
    stream: (url, req) => send(url, req, true) as Promise<StreamedResponse>,
    async close() {
      if (state === 'open') state = 'closing';
      await Promise.all([...pools.values()].map((p) => p.close()));
    },
    async destroy() {
      state = 'destroyed';
      await Promise.all([...pools.values()].map((p) => p.destroy()));
    },
  };

  function newPool(u: URL): Pool {
    const pool = new Pool(u, opts);
    pools.set(u.origin, pool);
    return pool;
  }
}

/**
 * Header names and ASCII values already checked: most requests repeat the same ones (the bearer token is a
 * kilobyte), and a string's hash is kept with it, so looking one up costs less than checking it again.
 */
const checkedNames = new Set<string>();
const checkedValues = new Set<string>();
const MAX_CHECKED = 1024;

function remember(set: Set<string>, s: string): void {
  if (set.size >= MAX_CHECKED) set.clear();
  set.add(s);
}

/** The request line and headers, with Host and Content-Length, as one latin1 string (URL has percent-encoded the path). */
function requestHead(req: Http1Request, u: URL): { text: string; ascii: boolean } {
  const path = u.search ? u.pathname + u.search : u.pathname;
  let ascii = true;
  let text = `${req.method} ${path} HTTP/1.1\r\nhost: ${u.host}\r\nconnection: keep-alive\r\n`;
  for (const name in req.headers) {
    const value = req.headers[name]!;
    if (!checkedNames.has(name)) {
      if (INVALID_NAME.test(name) || name === '') throw new Error(`invalid header name ${JSON.stringify(name)}`);
      remember(checkedNames, name);
    }
    if (!checkedValues.has(value)) {
      if (NOT_ASCII_VALUE.test(value)) {
        if (INVALID_VALUE.test(value)) throw new Error(`invalid value for header ${name}`);
        ascii = false;
      } else remember(checkedValues, value);
    }
    text += `${name}: ${value}\r\n`;
  }
  if (req.body !== undefined) text += `content-length: ${Buffer.byteLength(req.body)}\r\n`;
  return { text: text + '\r\n', ascii };
}

/** One request and its settlement: the whole response, or for a stream the response once its headers are in. */
class Exchange {
  readonly promise: Promise<BufferedResponse | StreamedResponse>;
  resolve!: (res: BufferedResponse | StreamedResponse) => void;
  reject!: (err: unknown) => void;
  /** A stream's body, once its headers are in. */
  body: BodyStream | undefined;
  settled = false;
  /** Sent again after a reused connection closed without answering. */
  resent = false;
  conn: Conn | undefined;
  /** The listener on the request's signal, added by the pool and removed once settled. */
  onAbort: (() => void) | undefined;

  constructor(
    readonly req: Http1Request,
    readonly head: { text: string; ascii: boolean },
    readonly stream: boolean,
  ) {
    this.promise = new Promise<BufferedResponse | StreamedResponse>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  get idempotentRead(): boolean {
    return this.req.method === 'GET' || this.req.method === 'HEAD';
  }

  finish(err: unknown, res?: BufferedResponse | StreamedResponse): void {
    if (this.settled) return;
    this.settled = true;
    // A stream's signal still aborts its body.
    if (!res || !this.stream) this.unlisten();
    if (res) this.resolve(res);
    else this.reject(err);
  }

  /** A stream's body ended. */
  ended(): void {
    this.unlisten();
  }

  private unlisten(): void {
    if (this.onAbort) this.req.signal?.removeEventListener('abort', this.onAbort);
    this.onAbort = undefined;
  }
}

class Pool {
  readonly idle: Conn[] = [];
  readonly queue: Exchange[] = [];
  /** Connections open or opening, for requests read whole. */
  readonly conns = new Set<Conn>();
  /** Connections of streams. */
  readonly streams = new Set<Conn>();
  closing = false;
  private closed: (() => void) | undefined;
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;

  constructor(
    u: URL,
    readonly opts: Http1AgentOptions,
  ) {
    this.secure = u.protocol === 'https:';
    this.host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    this.port = u.port ? Number(u.port) : this.secure ? 443 : 80;
  }

  submit(ex: Exchange): void {
    if (this.closing && this.conns.size === 0) {
      ex.finish(new Error('the client is closed'));
      return;
    }
    const signal = ex.req.signal;
    if (signal && !ex.onAbort) {
      ex.onAbort = () => {
        const i = this.queue.indexOf(ex);
        if (i >= 0) this.queue.splice(i, 1);
        ex.finish(signal.reason);
        ex.body?.end(signal.reason);
        ex.conn?.destroy();
      };
      signal.addEventListener('abort', ex.onAbort, { once: true });
    }
    if (ex.stream) {
      const conn = new Conn(this);
      this.streams.add(conn);
      conn.run(ex);
      return;
    }
    let conn = this.idle.pop();
    while (conn && conn.dead) conn = this.idle.pop();
    if (conn) conn.run(ex);
    else if (this.conns.size < this.opts.connections) this.open().run(ex);
    else this.queue.push(ex);
  }

  /** A connection whose answer is complete and which may be kept. */
  release(conn: Conn): void {
    let next = this.queue.shift();
    while (next && next.settled) next = this.queue.shift();
    if (next) conn.run(next);
    else if (this.closing) conn.destroy();
    else {
      conn.idleFor();
      this.idle.push(conn);
    }
  }

  private open(): Conn {
    const conn = new Conn(this);
    this.conns.add(conn);
    return conn;
  }

  /** A connection that closed. */
  gone(conn: Conn): void {
    if (this.streams.delete(conn)) {
      if (this.conns.size === 0 && this.streams.size === 0 && this.closed) this.closed();
      return;
    }
    this.conns.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    let next = this.queue.shift();
    while (next && next.settled) next = this.queue.shift();
    if (next) this.open().run(next);
    else if (this.conns.size === 0 && this.streams.size === 0 && this.closed) this.closed();
  }

  /** Streams in progress go on to their end. */
  close(): Promise<void> {
    this.closing = true;
    for (const c of this.idle.splice(0)) c.destroy();
    if (this.conns.size === 0 && this.streams.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.closed = resolve));
  }

  destroy(): Promise<void> {
    this.closing = true;
    for (const ex of this.queue.splice(0)) ex.finish(new Error('the client is destroyed'));
    const done = this.conns.size === 0 && this.streams.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.closed = resolve));
    for (const c of [...this.conns, ...this.streams]) c.destroy();
    return done;
  }
}

const enum Body {
  None,
  Length,
  Chunked,
  UntilClose,
}

const enum Chunk {
  Size,
  Data,
  DataEnd,
  Trailer,
}

class Conn {
  readonly socket: Socket;
  dead = false;
  private ex: Exchange | undefined;
  /** Requests answered on this connection. */
  private served = 0;
  private keepAliveMs: number;
  private timer: NodeJS.Timeout | undefined;
  // The answer being read.
  private received = false;
  private head: Buffer | undefined;
  private headDone = false;
  private statusCode = 0;
  private headers: Record<string, string | string[]> = {};
  private mode = Body.None;
  private remaining = 0;
  private chunks: Buffer[] = [];
  private reusable = true;
  private chunk = Chunk.Size;
  private line = '';
  /** A stream's reader closed it. */
  private aborted = false;

  constructor(private readonly pool: Pool) {
    const o = pool.opts;
    this.keepAliveMs = o.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_MS;
    const where = o.socketPath ? { path: o.socketPath } : { host: pool.host, port: pool.port };
    if (pool.secure) {
      const servername = o.tls?.servername ?? (isIP(pool.host) ? undefined : pool.host);
      this.socket = tlsConnect({
        ...where,
        ...(o.tls?.secureContext ? { secureContext: o.tls.secureContext } : {}),
        rejectUnauthorized: o.tls?.rejectUnauthorized ?? true,
        ...(servername ? { servername } : {}),
        ALPNProtocols: ['http/1.1'],
      });
    } else {
      this.socket = netConnect(where);
    }
    const s = this.socket;
    // As undici: no Nagle delay for small requests, TCP keep-alive probes on long idle connections.
    s.setNoDelay(true);
    s.setKeepAlive(true, 60_000);
    const connectMs = o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.timer = setTimeout(() => this.lost(codedError(`connecting timed out after ${connectMs} ms`, 'ETIMEDOUT')), connectMs);
    s.once(pool.secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(this.timer);
      this.timer = undefined;
    });
    s.on('data', (d: Buffer) => this.onData(d));
    s.on('end', () => this.lost(undefined));
    s.on('error', (err) => this.lost(err));
    s.on('close', () => this.lost(undefined));
  }

  run(ex: Exchange): void {
    this.ex = ex;
    ex.conn = this;
    if (this.timer && this.served > 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.socket.ref();
    }
    this.received = false;
    this.headDone = false;
    this.head = undefined;
    this.chunks = [];
    const s = this.socket;
    const { text, ascii } = ex.head;
    const body = ex.req.body;
    if (body === undefined) s.write(text, 'latin1');
    else if (typeof body === 'string' && ascii) s.write(text + body);
    else {
      s.cork();
      s.write(text, 'latin1');
      s.write(body);
      s.uncork();
    }
  }

  /** Keeps the idle connection until the keep-alive time passes; it does not hold the process open. */
  idleFor(): void {
    this.socket.unref();
    this.timer = setTimeout(() => this.destroy(), this.keepAliveMs);
    this.timer.unref();
  }

  destroy(): void {
    this.socket.destroy();
    this.lost(undefined);
  }

  private onData(d: Buffer): void {
    if (!this.ex) {
      // Bytes nobody asked for: the connection cannot be trusted for another request.
      this.destroy();
      return;
    }
    this.received = true;
    if (this.headDone) this.onBody(d);
    else this.onHead(d);
  }

  private onHead(d: Buffer): void {
    const buf = this.head ? Buffer.concat([this.head, d]) : d;
    const end = buf.indexOf('\r\n\r\n', this.head ? Math.max(0, this.head.length - 3) : 0, 'latin1');
    if (end < 0) {
      if (buf.length > MAX_HEAD_BYTES) this.fail(codedError('response headers too large', 'HPE_HEADER_OVERFLOW'));
      else this.head = buf;
      return;
    }
    this.head = undefined;
    const text = buf.toString('latin1', 0, end);
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const m = STATUS_LINE.exec(text.slice(0, eol));
    if (!m) {
      this.fail(codedError(`malformed response status line ${JSON.stringify(text.slice(0, Math.min(eol, 100)))}`, 'HPE_INVALID_CONSTANT'));
      return;
    }
    const code = Number(m[2]);
    const rest = buf.subarray(end + 4);
    if (code < 200) {
      // Informational (100 Continue, 103 Early Hints): the answer follows.
      if (code === 101) this.fail(codedError('unexpected protocol switch', 'HPE_INVALID_CONSTANT'));
      else if (rest.length > 0) this.onHead(rest);
      return;
    }
    // A plain object (one shape for a server's usual headers, unlike a null-prototype dictionary); a header named
    // __proto__ is dropped rather than let through as the prototype.
    const headers: Record<string, string | string[]> = {};
    for (let at = eol + 2; at < text.length; ) {
      let next = text.indexOf('\r\n', at);
      if (next < 0) next = text.length;
      const colon = text.indexOf(':', at);
      if (colon <= at || colon > next) {
        this.fail(codedError(`malformed response header ${JSON.stringify(text.slice(at, Math.min(next, at + 100)))}`, 'HPE_INVALID_HEADER_TOKEN'));
        return;
      }
      const name = headerName(text.slice(at, colon));
      const value = text.slice(colon + 1, next).trim();
      at = next + 2;
      if (name === '__proto__') continue;
      const had = headers[name];
      if (had === undefined) headers[name] = value;
      else if (typeof had === 'string') headers[name] = [had, value];
      else had.push(value);
    }
    this.statusCode = code;
    this.headers = headers;
    this.reusable = m[1] === '1' && (headers['connection'] === undefined || !tokens(headers['connection']).includes('close'));
    if (headers['keep-alive'] !== undefined) {
      const hint = /timeout=(\d+)/i.exec(String(headers['keep-alive']));
      const ms = hint ? Number(hint[1]) * 1000 - KEEP_ALIVE_HINT_MARGIN_MS : Infinity;
      if (ms <= 0) this.reusable = false;
      else this.keepAliveMs = Math.min(this.keepAliveMs, ms);
    }
    const te = headers['transfer-encoding'] === undefined ? [] : tokens(headers['transfer-encoding']);
    const cl = headers['content-length'];
    if (this.ex!.req.method === 'HEAD' || code === 204 || code === 304) this.mode = Body.None;
    else if (te.length > 0) {
      if (te[te.length - 1] !== 'chunked') {
        this.mode = Body.UntilClose;
        this.reusable = false;
      } else {
        this.mode = Body.Chunked;
        this.chunk = Chunk.Size;
        this.line = '';
      }
    } else if (cl !== undefined) {
      const n = contentLength(cl);
      if (n < 0) {
        this.fail(codedError(`invalid content-length ${JSON.stringify(cl)}`, 'HPE_INVALID_CONTENT_LENGTH'));
        return;
      }
      this.mode = n === 0 ? Body.None : Body.Length;
      this.remaining = n;
    } else {
      this.mode = Body.UntilClose;
      this.reusable = false;
    }
    this.headDone = true;
    const ex = this.ex!;
    if (ex.stream) {
      const body = (ex.body = new BodyStream(this.socket, () => ex.ended()));
      ex.finish(undefined, {
        statusCode: code,
        headers,
        body,
        abort: () => {
          this.aborted = true;
          this.destroy();
        },
      });
    }
    if (this.mode === Body.None) {
      if (rest.length > 0) this.reusable = false;
      this.complete();
    } else if (rest.length > 0) this.onBody(rest);
  }

  private onBody(d: Buffer): void {
    switch (this.mode) {
      case Body.Length:
        if (d.length < this.remaining) {
          this.take(d);
          this.remaining -= d.length;
        } else {
          if (d.length > this.remaining) this.reusable = false;
          this.take(d.length === this.remaining ? d : d.subarray(0, this.remaining));
          this.remaining = 0;
          this.complete();
        }
        return;
      case Body.Chunked:
        this.onChunked(d);
        return;
      case Body.UntilClose:
        this.take(d);
        return;
      default:
        // After a body-less answer: bytes nobody asked for.
        this.destroy();
    }
  }

  private onChunked(d: Buffer): void {
    while (d.length > 0) {
      if (this.chunk === Chunk.Data) {
        const take = Math.min(this.remaining, d.length);
        this.take(take === d.length ? d : d.subarray(0, take));
        this.remaining -= take;
        d = d.subarray(take);
        if (this.remaining === 0) this.chunk = Chunk.DataEnd;
        continue;
      }
      // The other states read a line.
      const nl = d.indexOf(0x0a);
      if (nl < 0) {
        this.line += d.toString('latin1');
        if (this.line.length > 8192) this.fail(codedError('chunk header too long', 'HPE_INVALID_CHUNK_SIZE'));
        return;
      }
      let line = this.line + d.toString('latin1', 0, nl);
      this.line = '';
      d = d.subarray(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (this.chunk === Chunk.Size) {
        const size = line.split(';', 1)[0]!.trim();
        if (!/^[0-9a-fA-F]{1,12}$/.test(size)) {
          this.fail(codedError(`invalid chunk size ${JSON.stringify(size.slice(0, 20))}`, 'HPE_INVALID_CHUNK_SIZE'));
          return;
        }
        this.remaining = parseInt(size, 16);
        this.chunk = this.remaining === 0 ? Chunk.Trailer : Chunk.Data;
      } else if (this.chunk === Chunk.DataEnd) {
        if (line !== '') {
          this.fail(codedError('chunk data not followed by CRLF', 'HPE_INVALID_CHUNK_SIZE'));
          return;
        }
        this.chunk = Chunk.Size;
      } else if (line === '') {
        // The end of the trailer: the answer is complete.
        if (d.length > 0) this.reusable = false;
        this.complete();
        return;
      }
    }
  }

  /** A piece of the body: kept, or handed to the stream. */
  private take(d: Buffer): void {
    if (this.ex!.body) this.ex!.body.push(d);
    else this.chunks.push(d);
  }

  private complete(): void {
    const ex = this.ex!;
    this.ex = undefined;
    ex.conn = undefined;
    this.served++;
    if (ex.body) {
      // A stream's connection is its own: it ends with the body.
      ex.body.end(undefined);
      this.destroy();
      return;
    }
    ex.finish(undefined, this.response());
    if (this.dead) return;
    if (this.reusable) this.pool.release(this);
    else this.destroy();
  }

  private response(): BufferedResponse {
    const chunks = this.chunks;
    this.chunks = [];
    return { statusCode: this.statusCode, headers: this.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
  }

  private fail(err: Error): void {
    this.socket.destroy();
    this.lost(err);
  }

  /** The connection ended (err: why, when it failed). */
  private lost(err: Error | undefined): void {
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.timer);
    this.socket.destroy();
    const ex = this.ex;
    this.ex = undefined;
    if (ex) {
      ex.conn = undefined;
      // The end of the connection is the end of an answer read to the close.
      const clean = !err && this.headDone && this.mode === Body.UntilClose;
      if (ex.body) {
        ex.body.end(clean ? undefined : (err ?? codedError(this.aborted ? 'the stream was aborted' : 'connection closed before the response was complete', this.aborted ? 'ABORT_ERR' : 'ECONNRESET')));
      } else if (clean) {
        ex.finish(undefined, this.response());
      } else if (!this.received && this.served > 0 && ex.idempotentRead && !ex.resent && !ex.settled) {
        // The server closed the kept connection as idle while the request was on its way: send it on a new one.
        ex.resent = true;
        this.pool.gone(this);
        this.pool.submit(ex);
        return;
      } else ex.finish(err ?? codedError(this.received ? 'connection closed before the response was complete' : 'connection closed before a response', 'ECONNRESET'));
    }
    this.pool.gone(this);
  }
}

/**
 * Header names as received mapped to their lower-case form, kept once made (a server sends the same few):
 * lower-casing a fresh slice and using it as a property key cost more than the rest of a response's parse.
 */
const lowerNames = new Map<string, string>();
const MAX_NAMES = 512;

function headerName(raw: string): string {
  let name = lowerNames.get(raw);
  if (name === undefined) {
    name = raw.toLowerCase();
    if (lowerNames.size < MAX_NAMES) lowerNames.set(raw, name);
  }
  return name;
}

/** Chunks a stream reads before its connection pauses (TCP then holds the sender back). */
const STREAM_HIGH_WATER = 16;

/** A stream's body: chunks queued as they arrive, for one reader. */
class BodyStream implements AsyncIterable<Buffer> {
  private readonly queue: Buffer[] = [];
  private ended = false;
  private error: unknown;
  private waiter: { resolve: (r: IteratorResult<Buffer>) => void; reject: (err: unknown) => void } | undefined;
  private paused = false;
  private iterated = false;

  constructor(
    private readonly socket: Socket,
    private readonly onEnd: () => void,
  ) {}

  push(d: Buffer): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve({ value: d, done: false });
      return;
    }
    this.queue.push(d);
    if (!this.paused && this.queue.length >= STREAM_HIGH_WATER) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** The body is complete (no error) or broke. */
  end(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
    this.error = err;
    const w = this.waiter;
    if (!w) return;
    this.waiter = undefined;
    if (err) w.reject(err);
    else w.resolve({ value: undefined, done: true });
  }

  private next(): Promise<IteratorResult<Buffer>> {
    const d = this.queue.shift();
    if (d) {
      if (this.paused && this.queue.length === 0) {
        this.paused = false;
        this.socket.resume();
      }
      return Promise.resolve({ value: d, done: false });
    }
    if (this.ended) return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    if (this.iterated) throw new Error('a response body can be read only once');
    this.iterated = true;
    return {
      next: () => this.next(),
      // A reader that stops early (break, return) closes the connection.
      return: () => {
        if (!this.ended) this.socket.destroy();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/** A Content-Length's value; repeated or listed values must agree (RFC 9110 8.6); -1 when invalid. */
function contentLength(h: string | string[]): number {
  if (typeof h === 'string' && DIGITS.test(h)) return Number(h);
  const values = new Set(tokens(h));
  const [v] = values;
  return values.size === 1 && DIGITS.test(v!) ? Number(v) : -1;
}

/** A header's comma-separated tokens, lower-cased. */
function tokens(h: string | string[] | undefined): string[] {
  if (h === undefined) return [];
  return (Array.isArray(h) ? h.join(',') : h)
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
}
