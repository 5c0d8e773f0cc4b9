/**
 * The kubelet's remotecommand server (pkg/kubelet/cri/streaming/remotecommand)
 * for exec and attach, over SPDY/3.1 or WebSocket.
 *
 * SPDY (X-Stream-Protocol-Version, client order, first supported):
 * v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io
 * (none offered = channel.k8s.io). The client opens one stream per channel
 * with header `streamtype` = error | stdin | stdout | stderr | resize; the
 * server waits (30 s) for error + the requested stdin/stdout/stderr (+ resize
 * with a tty, v3+), then runs the command.
 *
 * WebSocket (Sec-WebSocket-Protocol): v5.channel.k8s.io, v4.channel.k8s.io,
 * v4.base64.channel.k8s.io, channel.k8s.io, base64.channel.k8s.io (or none).
 * Channels 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; binary frames
 * carry the channel in the first byte, base64 text frames a digit then
 * base64. v5 adds the close signal [255, channel] (the client closed stdin).
 * As the kubelet, an empty message on the lowest writable channel tells the
 * client the streams are ready.
 *
 * The outcome goes on the error channel: v4/v5 write a metav1.Status JSON
 * always (Success, NonZeroExitCode with an ExitCode cause, or InternalError);
 * older protocols write the Status message text on failure only. Then the
 * streams are closed (SPDY: FIN + GOAWAY; WebSocket: close frame 1000).
 *
 * Usage, in the kubelet's upgrade handler:
 *
 *   serveRemoteCommand(req, socket, head, parseExecQuery(url.searchParams), async (s) => {
 *     for await (const chunk of s.stdin ?? []) s.stdout?.(chunk);
 *     return { exitCode: 0 };
 *   });
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SpdySession, type SpdyStream } from './spdy.js';
import { acceptWebSocket, isWebSocketRequest, type WebSocketConn } from '../../../util/net/websocket.js';

export interface TerminalSize {
  width: number;
  height: number;
}

/** What the command sees. Writes after the client went away are dropped. */
export interface ExecStreams {
  /** The client's stdin (when requested); ends when the client closes stdin or goes away. */
  stdin?: AsyncIterable<Buffer>;
  stdout?: (chunk: string | Buffer) => void;
  /** Absent with a tty (the kubelet never opens stderr then). */
  stderr?: (chunk: string | Buffer) => void;
  tty: boolean;
  /** Terminal size changes (tty only); the latest known size is replayed to a late subscriber. */
  onResize(cb: (size: TerminalSize) => void): void;
  /** True once the client went away. */
  readonly closed: boolean;
  onClose(cb: () => void): void;
}

/** An exit code (0 = success), or a failure that is not an exit code (e.g. container not running). */
export type ExecOutcome = { exitCode: number } | { error: string };

export interface ExecRequestOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  command: string[];
}

/** SPDY subprotocols, preferred first. */
export const SPDY_REMOTECOMMAND_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
/** WebSocket subprotocols ("" = none requested, served as channel.k8s.io). */
export const WEBSOCKET_REMOTECOMMAND_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io', ''];

const STREAM_CREATION_TIMEOUT_MS = 30_000;
const CH_STDIN = 0;
const CH_STDOUT = 1;
const CH_STDERR = 2;
const CH_ERROR = 3;
const CH_RESIZE = 4;
const CH_CLOSE = 255;

function flag(q: URLSearchParams, kubeletName: string, apiName: string): boolean {
  const v = q.get(kubeletName) ?? q.get(apiName);
  return v === '1' || v === 'true';
}

/**
 * Parses the kubelet exec/attach query (command=..&command=..&input=1&output=1&error=1&tty=1),
 * also accepting the API server's names (stdin/stdout/stderr=true). As the
 * kubelet, stderr is dropped with a tty.
 */
export function parseExecQuery(q: URLSearchParams): ExecRequestOptions {
  const tty = flag(q, 'tty', 'tty');
  const stderr = flag(q, 'error', 'stderr');
  return {
    stdin: flag(q, 'input', 'stdin'),
    stdout: flag(q, 'output', 'stdout'),
    stderr: stderr && !tty,
    tty,
    command: q.getAll('command'),
  };
}

/** The metav1.Status the kubelet writes for an outcome (exec.go ServeExec). */
export function outcomeStatus(outcome: ExecOutcome, command: string[]): Record<string, unknown> {
  if ('error' in outcome) {
    const err = `error executing command in container: ${outcome.error}`;
    return { metadata: {}, status: 'Failure', message: `Internal error occurred: ${err}`, reason: 'InternalError', details: { causes: [{ message: err }] }, code: 500 };
  }
  if (outcome.exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${outcome.exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(outcome.exitCode) }] },
  };
}

/** The bytes written on the error channel: JSON for v4+, the message text (failures only) before. */
function statusBytes(outcome: ExecOutcome, command: string[], jsonStatus: boolean): Buffer | undefined {
  const st = outcomeStatus(outcome, command);
  if (jsonStatus) return Buffer.from(JSON.stringify(st));
  if (st.status === 'Success') return undefined;
  return Buffer.from(String(st.message));
}

/** A minimal async queue usable as AsyncIterable. */
class ByteQueue implements AsyncIterable<Buffer> {
  private items: Buffer[] = [];
  private done = false;
  private waiter: (() => void) | undefined;
  push(b: Buffer): void {
    if (this.done || b.length === 0) return;
    this.items.push(b);
    this.wake();
  }
  end(): void {
    this.done = true;
    this.wake();
  }
  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.done) return;
      await new Promise<void>((r) => (this.waiter = r));
    }
  }
}

/** Parses a stream of concatenated JSON TerminalSize objects. */
class ResizeDecoder {
  private text = '';
  constructor(private readonly emit: (s: TerminalSize) => void) {}
  push(b: Buffer): void {
    this.text += b.toString('utf8');
    let end: number;
    while ((end = this.text.indexOf('}')) >= 0) {
      const piece = this.text.slice(0, end + 1);
      this.text = this.text.slice(end + 1);
      try {
        const v = JSON.parse(piece.slice(piece.indexOf('{'))) as { Width?: number; Height?: number };
        this.emit({ width: Number(v.Width ?? 0), height: Number(v.Height ?? 0) });
      } catch {
        // ignore malformed sizes, as the kubelet's decoder stops on them
      }
    }
  }
}

class Streams implements ExecStreams {
  stdin?: ByteQueue;
  stdout?: (chunk: string | Buffer) => void;
  stderr?: (chunk: string | Buffer) => void;
  closed = false;
  private resizeCbs: ((s: TerminalSize) => void)[] = [];
  private closeCbs: (() => void)[] = [];
  private lastSize: TerminalSize | undefined;
  readonly resize = new ResizeDecoder((s) => {
    this.lastSize = s;
    for (const cb of this.resizeCbs) cb(s);
  });
  constructor(readonly tty: boolean) {}
  onResize(cb: (size: TerminalSize) => void): void {
    this.resizeCbs.push(cb);
    if (this.lastSize) cb(this.lastSize);
  }
  onClose(cb: () => void): void {
    if (this.closed) queueMicrotask(cb);
    else this.closeCbs.push(cb);
  }
  markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.stdin?.end();
    for (const cb of this.closeCbs.splice(0)) cb();
  }
}

const toBuf = (c: string | Buffer): Buffer => (typeof c === 'string' ? Buffer.from(c) : c);

async function runSafely(run: (s: ExecStreams) => Promise<ExecOutcome>, s: ExecStreams): Promise<ExecOutcome> {
  try {
    return await run(s);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** Writes a plain HTTP error with a metav1.Status body and ends the socket. */
export function writeHttpError(socket: Duplex, code: number, reason: string, message: string): void {
  const text: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 500: 'Internal Server Error' };
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  socket.end(`HTTP/1.1 ${code} ${text[code] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export function isSpdyRequest(req: IncomingMessage): boolean {
  const conn = String(req.headers.connection ?? '').toLowerCase();
  return conn.split(',').some((t) => t.trim() === 'upgrade') && String(req.headers.upgrade ?? '').toLowerCase() === 'spdy/3.1';
}

/** The X-Stream-Protocol-Version values the client offered, in order. */
export function offeredStreamProtocols(req: IncomingMessage): string[] {
  return (req.headersDistinct?.['x-stream-protocol-version'] ?? []).flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
}

/**
 * httpstream.Handshake: answers 101 with the negotiated protocol, or 403 and
 * undefined. No offered protocol negotiates "" (legacy).
 */
export function spdyHandshake(req: IncomingMessage, socket: Duplex, supported: string[]): string | undefined {
  const offered = offeredStreamProtocols(req);
  const protocol = offered.length === 0 ? '' : offered.find((p) => supported.includes(p));
  if (protocol === undefined) {
    const msg = `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server supports [${supported.join(' ')}]`;
    socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(msg) + 1}\r\nConnection: close\r\n\r\n${msg}\n`);
    return undefined;
  }
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', 'Upgrade: SPDY/3.1'];
  if (protocol) lines.push(`X-Stream-Protocol-Version: ${protocol}`);
  socket.write(lines.join('\r\n') + '\r\n\r\n');
  return protocol;
}

/**
 * Serves an upgraded exec/attach request: negotiates SPDY or WebSocket from
 * the request headers, waits for the client's streams, calls run, writes the
 * status, closes. Answers 400 with a Status JSON body when neither protocol
 * is requested.
 */
export function serveRemoteCommand(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  opts: ExecRequestOptions,
  run: (s: ExecStreams) => Promise<ExecOutcome>,
): void {
  if (!opts.stdin && !opts.stdout && !opts.stderr) {
    writeHttpError(socket, 400, 'BadRequest', 'you must specify at least 1 of stdin, stdout, stderr');
    return;
  }
  if (isWebSocketRequest(req)) serveWebSocket(req, socket, head, opts, run);
  else if (isSpdyRequest(req)) serveSpdy(req, socket, head, opts, run);
  else writeHttpError(socket, 400, 'BadRequest', 'Upgrade request required: use SPDY/3.1 (X-Stream-Protocol-Version) or a WebSocket (Sec-WebSocket-Protocol)');
}

function serveSpdy(req: IncomingMessage, socket: Duplex, head: Buffer, opts: ExecRequestOptions, run: (s: ExecStreams) => Promise<ExecOutcome>): void {
  const protocol = spdyHandshake(req, socket, SPDY_REMOTECOMMAND_PROTOCOLS);
  if (protocol === undefined) return;
  const version = protocol === '' || protocol === 'channel.k8s.io' ? 1 : Number(protocol[1]);
  const session = new SpdySession(socket, head);
  const expected = 1 + Number(opts.stdin) + Number(opts.stdout) + Number(opts.stderr) + Number(opts.tty && version >= 3);
  const got = new Map<string, SpdyStream>();
  const s = new Streams(opts.tty);
  let started = false;
  const timer = setTimeout(() => {
    if (!started) session.close();
  }, STREAM_CREATION_TIMEOUT_MS);
  timer.unref();
  session.on('close', () => {
    clearTimeout(timer);
    s.markClosed();
  });
  session.on('stream', (st: SpdyStream) => {
    const type = st.headers['streamtype'] ?? '';
    if (started || !['error', 'stdin', 'stdout', 'stderr', 'resize'].includes(type) || got.has(type)) {
      st.reset();
      return;
    }
    got.set(type, st);
    if (got.size === expected) start();
  });

  const start = (): void => {
    started = true;
    clearTimeout(timer);
    const stdinStream = got.get('stdin');
    if (opts.stdin && stdinStream) {
      const q = new ByteQueue();
      s.stdin = q;
      stdinStream.on('data', (b: Buffer) => q.push(b));
      stdinStream.on('end', () => q.end());
    } else stdinStream?.resume();
    const out = got.get('stdout');
    if (out) {
      out.resume();
      s.stdout = (c) => {
        if (!s.closed) out.write(toBuf(c));
      };
    }
    const err = got.get('stderr');
    if (err) {
      err.resume();
      s.stderr = (c) => {
        if (!s.closed) err.write(toBuf(c));
      };
    }
    const resize = got.get('resize');
    resize?.on('data', (b: Buffer) => s.resize.push(b));
    const errorStream = got.get('error')!;
    errorStream.resume();
    void runSafely(run, s).then((outcome) => {
      const bytes = statusBytes(outcome, opts.command, version >= 4);
      if (bytes && !s.closed) errorStream.write(bytes);
      session.close();
    });
  };
}

function serveWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, opts: ExecRequestOptions, run: (s: ExecStreams) => Promise<ExecOutcome>): void {
  const ws = acceptWebSocket(req, socket, head, WEBSOCKET_REMOTECOMMAND_PROTOCOLS);
  if (!ws) return;
  const base64 = ws.protocol.includes('base64');
  const v5 = ws.protocol === 'v5.channel.k8s.io';
  const jsonStatus = ws.protocol.startsWith('v4.') || v5;
  const s = new Streams(opts.tty);
  const send = (ch: number, data: Buffer): void => sendChannel(ws, base64, ch, data);
  if (opts.stdin) s.stdin = new ByteQueue();
  if (opts.stdout) s.stdout = (c) => !s.closed && send(CH_STDOUT, toBuf(c));
  if (opts.stderr) s.stderr = (c) => !s.closed && send(CH_STDERR, toBuf(c));
  ws.on('close', () => s.markClosed());
  ws.on('message', (data: Buffer, binary: boolean) => {
    const m = decodeChannelMessage(data, binary, base64);
    if (!m) return;
    if (v5 && m.channel === CH_CLOSE) {
      if (m.data[0] === CH_STDIN) s.stdin?.end();
      return;
    }
    if (m.channel === CH_STDIN) s.stdin?.push(m.data);
    else if (m.channel === CH_RESIZE) s.resize.push(m.data);
  });
  // the kubelet's "streams ready" signal
  send(opts.stdout ? CH_STDOUT : opts.stderr ? CH_STDERR : CH_ERROR, Buffer.alloc(0));
  // The command starts a turn of the event loop later, as a real exec starts after the ready signal: client-go's
  // WebSocket executor before its readyChan fix read the connection while still making its streams, and dropped a
  // message for a stream not made yet ("Unknown stream id"), so output written at once could be lost.
  setImmediate(() =>
    void runSafely(run, s).then((outcome) => {
      const bytes = statusBytes(outcome, opts.command, jsonStatus);
      if (bytes && !s.closed) send(CH_ERROR, bytes);
      ws.close(1000, '');
    }),
  );
}

/** Sends `data` on a channel: binary [ch, ...data] or base64 text "<digit><base64>". */
export function sendChannel(ws: WebSocketConn, base64: boolean, ch: number, data: Buffer): void {
  if (base64) ws.send(String.fromCharCode(48 + ch) + data.toString('base64'), false);
  else ws.send(Buffer.concat([Buffer.from([ch]), data]), true);
}

/** Decodes a channel message; undefined for empty or malformed ones. */
export function decodeChannelMessage(data: Buffer, binary: boolean, base64: boolean): { channel: number; data: Buffer } | undefined {
  if (data.length === 0) return undefined;
  if (base64 && !binary) {
    const ch = data[0]! - 48;
    if (ch < 0 || ch > 9) return undefined;
    return { channel: ch, data: Buffer.from(data.subarray(1).toString('latin1'), 'base64') };
  }
  return { channel: data[0]!, data: data.subarray(1) };
}
