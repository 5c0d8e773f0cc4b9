/**
 * TLS for the API server on a second thread. Node serves HTTPS on one
 * thread: decrypting requests and encrypting responses was about half the
 * cost of a trivial request on the event loop that also runs every handler
 * (a get of a ConfigMap cost 135 us of the main thread, of which 50 to 60 us
 * was what a trivial node:https server costs; through this front the main
 * thread's share of a trivial request is 24 to 29 us).
 *
 * A worker thread (tls-front-worker.ts) accepts the TLS connections on the
 * API server's port and forwards each one's plain bytes to the main thread's
 * node:http server, which listens on a private Unix domain socket. Each
 * forwarded connection starts with a preamble line: a secret only the two
 * threads know (the socket lives in the private data directory, and a
 * connection without the secret is cut), then the peer's address and
 * certificate chain. The main thread gives that to the connection's socket
 * (`remoteAddress`, `remotePort`, ...; frontPeer for the certificates), so
 * request handling, authentication and logs see what they see on a TLS socket.
 */
import { randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../util/log/logger.js';
import { listenOnSocket } from './unix-socket.js';
import { FRONT_ACK, type FrontControlMessage, type FrontPreamble, type FrontWorkerData, type FrontWorkerMessage } from './tls-front-worker.js';

const workerEntry = new URL('./tls-front-worker.js', import.meta.url);

/** What the TLS front learned of a forwarded connection's peer. */
export interface FrontPeer {
  /** The client's certificate chain, leaf first; undefined when it sent none. */
  certificates(): X509Certificate[] | undefined;
}

const peers = new WeakMap<object, FrontPeer>();

/** The TLS peer of a connection the front forwarded; undefined for any other socket. */
export function frontPeer(socket: object): FrontPeer | undefined {
  return peers.get(socket);
}

/**
 * Starts the front's worker thread, which then waits for startTlsFront: its
 * boot (tens of milliseconds) overlaps the rest of the API server's start.
 * Undefined when no worker can be started (the caller serves TLS itself).
 */
export function bootTlsFront(log: Logger): BootedFront | undefined {
  let worker: Worker;
  try {
    worker = new Worker(workerEntry, { workerData: { kcmTlsFront: true } });
  } catch (err) {
    log.warn({ error: err instanceof Error ? err.message : String(err) }, 'cannot start the TLS thread; serving TLS on the main thread');
    return undefined;
  }
  // It does not keep the process alive (the main thread's server does; close() holds it while draining).
  worker.unref();
  const ended = new Promise<Error>((resolve) => {
    worker.once('error', resolve);
    worker.once('exit', (code) => resolve(new Error(`the TLS thread exited with code ${code}`)));
  });
  return { worker, ended };
}

/** A booted front worker; `ended` settles when it fails or exits. */
export interface BootedFront {
  worker: Worker;
  ended: Promise<Error>;
}

export interface TlsFrontOptions {
  /** From bootTlsFront. */
  boot: BootedFront;
  key: string;
  cert: string;
  ca: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The plain HTTP server to hand connections to; startTlsFront makes it listen on socketPath. */
  server: HttpServer;
  /** A Unix domain socket path in a private directory (a stale socket file there is replaced). */
  socketPath: string;
  logger: Logger;
}

export interface TlsFront {
  /** The TLS port. */
  port: number;
  /** Stops accepting TLS connections (those open stay). */
  stopAccepting(): void;
  /** Waits up to timeoutMs for the forwarded connections to close, then stops the worker. */
  close(timeoutMs: number): Promise<void>;
}

/** The TLS listener failed (the port is taken, the address is not local, ...): as node:https's listen error. */
export class FrontListenError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'Error';
  }
}

const MAX_PREAMBLE_BYTES = 256 * 1024;
const PREAMBLE_TIMEOUT_MS = 10_000;

/**
 * Starts the worker and makes `server` listen on the socket, taking the
 * preamble of each connection before node:http sees it. Rejects with
 * FrontListenError when the TLS port cannot be listened on, with another
 * error when the front itself cannot start (the caller may serve TLS itself).
 */
export async function startTlsFront(opts: TlsFrontOptions): Promise<TlsFront> {
  const { server, logger: log } = opts;
  const secret = randomBytes(32).toString('hex');
  const secretBytes = Buffer.from(secret);
  // node:http handles a connection in its one 'connection' listener; the preamble is read before it runs.
  const handlers = server.listeners('connection');
  if (handlers.length !== 1) throw new Error(`the HTTP server has ${handlers.length} connection listeners, expected node:http's one`);
  const httpConnection = handlers[0] as (socket: Socket) => void;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    let buffered: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), PREAMBLE_TIMEOUT_MS).unref();
    socket.once('close', () => clearTimeout(timer));
    const onData = (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      const nl = buffered.indexOf(0x0a);
      if (nl < 0) {
        if (buffered.length > MAX_PREAMBLE_BYTES) socket.destroy();
        return;
      }
      clearTimeout(timer);
      socket.off('data', onData);
      // The worker sends nothing else before the ACK.
      const preamble = parsePreamble(buffered.subarray(0, nl), secretBytes);
      if (!preamble || nl !== buffered.length - 1) {
        log.v(2).info('refused a connection on the TLS front socket without its preamble');
        socket.destroy();
        return;
      }
      adoptPeer(socket, preamble);
      httpConnection.call(server, socket);
      socket.write(Buffer.of(FRONT_ACK));
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  });
  try {
    await listenOnSocket(server, opts.socketPath);
  } catch (err) {
    await opts.boot.worker.terminate();
    throw err;
  }

  const data: FrontWorkerData = { key: opts.key, cert: opts.cert, ca: opts.ca, host: opts.host, port: opts.port, socketPath: opts.socketPath, secret };
  const { worker, ended } = opts.boot;
  let closing = false;
  let drained: (() => void) | undefined;
  let isDrained = false;
  const port = await new Promise<number>((resolve, reject) => {
    let started = false;
    const fail = (err: Error) => {
      if (started) return;
      started = true;
      // The worker's exit that follows is not a failure to log.
      closing = true;
      server.close();
      void worker.terminate();
      reject(err);
    };
    void ended.then((err) => {
      if (!started) fail(err);
      else if (!closing) log.error(err, 'the TLS thread failed; HTTPS is no longer served');
    });
    worker.postMessage({ kind: 'serve', data } satisfies FrontControlMessage);
    worker.on('message', (m: FrontWorkerMessage) => {
      switch (m.kind) {
        case 'listening':
          started = true;
          resolve(m.port);
          return;
        case 'listenError':
          fail(new FrontListenError(m.message, m.code));
          return;
        case 'tlsClientError':
          log.v(4).info({ error: m.message }, 'TLS handshake failed');
          return;
        case 'drained':
          isDrained = true;
          drained?.();
          return;
      }
    });
  });
  let stopped = false;
  const stopAccepting = () => {
    if (stopped) return;
    stopped = true;
    worker.postMessage({ kind: 'stop' } satisfies FrontControlMessage);
  };
  return {
    port,
    stopAccepting,
    async close(timeoutMs) {
      closing = true;
      // Held until the worker answers or the time is up.
      worker.ref();
      let timer: NodeJS.Timeout | undefined;
      const done = new Promise<void>((resolve) => {
        drained = resolve;
        if (isDrained) return resolve();
        timer = setTimeout(resolve, timeoutMs);
      });
      stopAccepting();
      await done;
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}

function parsePreamble(line: Buffer, secret: Buffer): FrontPreamble | undefined {
  let p: FrontPreamble;
  try {
    p = JSON.parse(line.toString('utf8')) as FrontPreamble;
  } catch {
    return undefined;
  }
  if (typeof p?.secret !== 'string') return undefined;
  const given = Buffer.from(p.secret);
  return given.length === secret.length && timingSafeEqual(given, secret) ? p : undefined;
}

/** The socket answers for the TLS connection it carries: its address properties, and frontPeer. */
function adoptPeer(socket: Socket, p: FrontPreamble): void {
  const own = (value: unknown) => ({ value, configurable: true, enumerable: false });
  Object.defineProperties(socket, {
    remoteAddress: own(p.remoteAddress),
    remotePort: own(p.remotePort),
    remoteFamily: own(p.remoteFamily),
    localAddress: own(p.localAddress),
    localPort: own(p.localPort),
  });
  let parsed: X509Certificate[] | undefined;
  peers.set(socket, {
    certificates() {
      if (!p.certificates) return undefined;
      parsed ??= p.certificates.map((der) => new X509Certificate(Buffer.from(der, 'base64')));
      return parsed;
    },
  });
}
