/**
 * A load generator for the API server benchmarks, run as its own process so
 * the client's CPU is not the server's: `node dist/bench/lib/api-load.js`
 * with a JSON job in the KCM_LOAD env variable. Runs `count` ConfigMap
 * creates or gets in `namespace` from `concurrency` HTTPS connections (one
 * request in flight on each, HTTP/1.1 keep-alive), and prints one JSON line:
 * requests/s, p50 and p99 latency in ms, failures, and the client's own CPU
 * per request.
 *
 * The client shares the machine with the server it measures, so its own CPU
 * is taken from the server's: by default it writes HTTP/1.1 requests on TLS
 * sockets itself and reads only the status and the body's length
 * (`RawClient`, about half of undici's CPU per request); `client: 'undici'`
 * measures with undici, as the benchmarks did before.
 */
import { connect, type TLSSocket } from 'node:tls';
import { Agent, request } from 'undici';

export interface LoadJob {
  url: string;
  caPem: string;
  token: string;
  namespace: string;
  op: 'create' | 'get';
  count: number;
  concurrency: number;
  /** Names are `${prefix}${i}`. */
  prefix: string;
  /**
   * Operations run first and not counted, so both the client's and a
   * JIT-compiled server's code is warm (steady-state throughput): creates of
   * `${prefix}warm-${i}`, or gets of the first names (default: count).
   */
  warmup?: number;
  /** The HTTP client: 'raw' (default, RawClient) or 'undici'. */
  client?: 'raw' | 'undici';
}

export interface LoadResult {
  rate: number;
  p50: number;
  p99: number;
  failures: number;
  firstFailure?: string;
  /** The load generator's own CPU (user + system) per counted request, in microseconds. */
  clientCpuUs: number;
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

/** A response as the load needs it: the status, and the body only as bytes. */
export interface RawResponse {
  status: number;
  body: Buffer;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Where the HTTP/1.1 response at the start of `buf` ends, with its status:
 * undefined while incomplete. Reads Content-Length or chunked bodies; throws
 * on anything else (the load only talks to API servers).
 */
export function parseResponse(buf: Buffer): { status: number; end: number; body: Buffer } | undefined {
  const headEnd = buf.indexOf(HEADER_END);
  if (headEnd < 0) return undefined;
  const head = buf.toString('latin1', 0, headEnd);
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  if (!m) throw new Error(`not an HTTP/1.1 response: ${JSON.stringify(head.slice(0, 40))}`);
  const status = Number(m[1]);
  const start = headEnd + 4;
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  if (length) {
    const end = start + Number(length[1]);
    return buf.length >= end ? { status, end, body: buf.subarray(start, end) } : undefined;
  }
  if (/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at, 'latin1');
      if (lineEnd < 0) return undefined;
      const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
      if (Number.isNaN(size)) throw new Error('bad chunk size');
      const dataEnd = lineEnd + 2 + size;
      if (buf.length < dataEnd + 2) return undefined;
      if (size === 0) {
        // no trailers from an API server: the last chunk's line, then CRLF
        return { status, end: dataEnd + 2, body: Buffer.concat(parts) };
      }
      parts.push(buf.subarray(lineEnd + 2, dataEnd));
      at = dataEnd + 2;
    }
  }
  if (status === 204 || status === 304) return { status, end: start, body: Buffer.alloc(0) };
  throw new Error(`response ${status} has neither Content-Length nor chunked encoding`);
}

/** One keep-alive HTTPS connection with one request in flight, framing requests and responses itself. */
export class RawClient {
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (r: RawResponse) => void; reject: (e: Error) => void } | undefined;
  private failed: Error | undefined;

  private constructor(
    private readonly socket: TLSSocket,
    private readonly host: string,
  ) {
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static open(url: string, caPem: string): Promise<RawClient> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: u.hostname, port: Number(u.port || 443), ca: caPem, ...(/^[\d.]+$|:/.test(u.hostname) ? {} : { servername: u.hostname }) });
      socket.once('secureConnect', () => {
        socket.off('error', reject);
        resolve(new RawClient(socket, u.host));
      });
      socket.once('error', reject);
    });
  }

  /** Sends one request and resolves with its response (rejects if the connection fails). */
  send(method: string, path: string, headers: string, body?: string): Promise<RawResponse> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.waiting) return Promise.reject(new Error('a request is in flight'));
    const length = body === undefined ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${this.host}\r\n${headers}${length}\r\n${body ?? ''}`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    let parsed;
    try {
      parsed = parseResponse(this.buf);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    if (!parsed) return;
    this.buf = this.buf.subarray(parsed.end);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve({ status: parsed.status, body: parsed.body });
  }

  private fail(err: Error): void {
    this.failed ??= err;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(err);
    this.socket.destroy();
  }
}

/** One operation: resolves with the status and the body's text. */
type Send = (conn: number, op: 'create' | 'get', name: string) => Promise<{ status: number; text: () => string }>;

async function rawSender(job: LoadJob): Promise<{ send: Send; close: () => void }> {
  const conns = await Promise.all(Array.from({ length: job.concurrency }, () => RawClient.open(job.url, job.caPem)));
  const base = `/api/v1/namespaces/${job.namespace}/configmaps`;
  const auth = `Authorization: Bearer ${job.token}\r\nAccept: application/json\r\n`;
  const post = `${auth}Content-Type: application/json\r\n`;
  // Warm the connections first (as the undici client does).
  await Promise.all(conns.map((c) => c.send('GET', '/version', auth)));
  return {
    send: async (conn, op, name) => {
      const r =
        op === 'create'
          ? await conns[conn]!.send('POST', base, post, createBody(name))
          : await conns[conn]!.send('GET', `${base}/${name}`, auth);
      return { status: r.status, text: () => r.body.toString('utf8') };
    },
    close: () => conns.forEach((c) => c.close()),
  };
}

async function undiciSender(job: LoadJob): Promise<{ send: Send; close: () => Promise<void> }> {
  const agent = new Agent({ connect: { ca: job.caPem }, connections: job.concurrency, pipelining: 1 });
  const base = `${job.url}/api/v1/namespaces/${job.namespace}/configmaps`;
  const auth = `Bearer ${job.token}`;
  // Warm the connections first so TLS handshakes are not in the numbers.
  await Promise.all(Array.from({ length: job.concurrency }, () => request(`${job.url}/version`, { dispatcher: agent, headers: { authorization: auth } }).then((r) => r.body.dump())));
  return {
    send: async (_conn, op, name) => {
      const r =
        op === 'create'
          ? await request(base, { method: 'POST', dispatcher: agent, headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json' }, body: createBody(name) })
          : await request(`${base}/${name}`, { method: 'GET', dispatcher: agent, headers: { authorization: auth, accept: 'application/json' } });
      const text = await r.body.text();
      return { status: r.statusCode, text: () => text };
    },
    close: () => agent.close(),
  };
}

function createBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { bench: 'yes' } }, data: { key: 'v'.repeat(200) } });
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const sender = job.client === 'undici' ? await undiciSender(job) : await rawSender(job);
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const one = async (conn: number, name: string): Promise<void> => {
    const r = await sender.send(conn, job.op, name);
    if (r.status >= 300) {
      failures++;
      firstFailure ??= `${job.op} ${name}: HTTP ${r.status} ${r.text().slice(0, 200)}`;
    }
  };
  const warmup = job.warmup ?? job.count;
  let w = 0;
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, conn) => {
      for (let i = w++; i < warmup; i = w++) await one(conn, job.op === 'create' ? `${job.prefix}warm-${i}` : `${job.prefix}${i % job.count}`);
    }),
  );
  let next = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, conn) => {
      for (let i = next++; i < job.count; i = next++) {
        const t = performance.now();
        await one(conn, `${job.prefix}${i}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await sender.close();
  latencies.sort((a, b) => a - b);
  return {
    rate: job.count / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failures,
    ...(firstFailure ? { firstFailure } : {}),
    clientCpuUs: (cpu.user + cpu.system) / job.count,
  };
}

if (process.env.KCM_LOAD && import.meta.url === `file://${process.argv[1]}`) {
  runLoad(JSON.parse(process.env.KCM_LOAD) as LoadJob).then(
    (r) => console.log(JSON.stringify(r)),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
