/**
 * The API server's TLS front, in a worker thread (tls-front.ts starts it):
 * accepts TLS connections on the API server's port and forwards each one's
 * decrypted bytes over a connection of its own to the main thread's plain
 * HTTP server on a private Unix domain socket.
 *
 * Each forwarded connection first sends one line, the preamble: the shared
 * secret and what the main thread would otherwise read from the TLS socket
 * (the peer's address and port, its certificate chain). The client's bytes
 * follow only once the main thread answers with one ACK byte, so nothing of
 * the request is read with the preamble. Then the two sockets are piped both
 * ways; either side's end or error ends the other.
 *
 * Imports only Node's modules and util/cert/peer-chain.ts: it is its own
 * entry (scripts/bundle.mjs).
 */
import { createServer } from 'node:tls';
import { connect } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { peerCertificateChainDer } from '../../util/cert/peer-chain.js';

export interface FrontWorkerData {
  key: string;
  cert: string;
  /** CAs to ask client certificates of (certificate requests name them); verification is the main thread's. */
  ca: string;
  host: string;
  port: number;
  /** The main thread's HTTP server. */
  socketPath: string;
  secret: string;
}

/** The first line of a forwarded connection (JSON). */
export interface FrontPreamble {
  secret: string;
  remoteAddress?: string;
  remotePort?: number;
  remoteFamily?: string;
  localAddress?: string;
  localPort?: number;
  /** The peer's certificate chain as it sent it, leaf first, DER in base64; absent when it sent none. */
  certificates?: string[];
}

/** Worker to main. */
export type FrontWorkerMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'listenError'; message: string; code?: string }
  | { kind: 'tlsClientError'; message: string }
  | { kind: 'drained' };

/**
 * Main to worker: `serve` once (the worker boots before the main thread has
 * its keys); `stop` accepting connections, answered `drained` once every
 * forwarded connection has closed.
 */
export type FrontControlMessage = { kind: 'serve'; data: FrontWorkerData } | { kind: 'stop' };

/** The byte the main thread answers a preamble with. */
export const FRONT_ACK = 0x06;

function serve(data: FrontWorkerData): { stop(): void } {
  const post = (m: FrontWorkerMessage) => parentPort!.postMessage(m);
  const server = createServer(
    {
      key: data.key,
      cert: data.cert,
      ca: data.ca,
      // As node:https: HTTP/1.1 only, no Nagle delay. Certificates are asked for, never refused at the handshake.
      ALPNProtocols: ['http/1.1'],
      noDelay: true,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (client) => {
      // Held until the main thread has taken the connection (the ACK below).
      client.pause();
      const preamble: FrontPreamble = {
        secret: data.secret,
        ...(client.remoteAddress !== undefined ? { remoteAddress: client.remoteAddress, remotePort: client.remotePort!, remoteFamily: client.remoteFamily! } : {}),
        ...(client.localAddress !== undefined ? { localAddress: client.localAddress, localPort: client.localPort! } : {}),
      };
      const certificates = peerCertificateChainDer(client)?.map((der) => der.toString('base64'));
      if (certificates) preamble.certificates = certificates;
      const backend = connect(data.socketPath);
      const cut = () => {
        client.destroy();
        backend.destroy();
      };
      client.on('error', cut);
      backend.on('error', cut);
      // The client went away: so does its connection to the main thread (ending a watch it had open).
      client.on('close', () => backend.destroy());
      // The main thread closed: what it wrote is flushed to the client first.
      backend.on('close', () => client.end(() => client.destroy()));
      backend.write(`${JSON.stringify(preamble)}\n`);
      backend.once('data', (ack: Buffer) => {
        if (ack[0] !== FRONT_ACK) return cut();
        if (ack.length > 1) client.write(ack.subarray(1));
        backend.pipe(client);
        client.pipe(backend);
      });
    },
  );
  server.on('tlsClientError', (err) => post({ kind: 'tlsClientError', message: err.message }));
  server.once('error', (err: NodeJS.ErrnoException) => post({ kind: 'listenError', message: err.message, ...(err.code ? { code: err.code } : {}) }));
  server.listen(data.port, data.host, () => {
    server.on('error', () => undefined);
    post({ kind: 'listening', port: (server.address() as { port: number }).port });
  });
  return { stop: () => server.close(() => post({ kind: 'drained' })) };
}

if (parentPort && (workerData as { kcmTlsFront?: boolean } | undefined)?.kcmTlsFront === true) {
  let serving: { stop(): void } | undefined;
  parentPort.on('message', (m: FrontControlMessage) => {
    if (m.kind === 'serve') serving ??= serve(m.data);
    else if (m.kind === 'stop') serving ? serving.stop() : parentPort!.postMessage({ kind: 'drained' } satisfies FrontWorkerMessage);
  });
}
