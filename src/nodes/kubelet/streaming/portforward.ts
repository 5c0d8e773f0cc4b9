/**
 * The kubelet's port-forward server (pkg/kubelet/cri/streaming/portforward)
 * over three transports:
 *
 * - SPDY/3.1, X-Stream-Protocol-Version `portforward.k8s.io`: per forwarded
 *   connection the client opens an error stream and a data stream with headers
 *   `streamtype` (error|data), `port` and `requestid` (older clients without
 *   requestid are paired by stream id as the kubelet does). Once a pair is
 *   complete, connect(port) is called; its bytes are copied both ways; an
 *   error is written on the error stream; both streams are then closed (FIN).
 *   An incomplete pair is dropped after 30 s.
 * - WebSocket `v4.channel.k8s.io` / `v4.base64.channel.k8s.io` / none (also
 *   accepted: `portforward.k8s.io`) with the ports from the query
 *   (?port=N&port=M): channels 2i (data) and 2i+1 (error) per port; the first
 *   message on each is the port as 2 bytes little-endian; every port is
 *   connected at once; the connection closes when all are done.
 * - WebSocket `SPDY/3.1+portforward.k8s.io` (kubectl 1.31+, client-go
 *   tunneling_connection.go): the SPDY session above, carried in binary
 *   WebSocket messages (no inner HTTP handshake).
 *
 * Error texts are written as given by connect (the kubelet writes
 * "error forwarding port P to pod NAME, uid UID: ERR"; the caller knows the
 * pod, so it formats that itself, see forwardError).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { isSpdyRequest, sendChannel, decodeChannelMessage, spdyHandshake, writeHttpError } from './remotecommand.js';
import { SpdySession, type SpdyStream } from './spdy.js';
import { acceptWebSocket, isWebSocketRequest, messageDuplex, type WebSocketConn } from '../../../util/net/websocket.js';

export type PortConnector = (port: number) => Duplex | string | Promise<Duplex | string>;

export const PORTFORWARD_PROTOCOL = 'portforward.k8s.io';
export const SPDY_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';
export const WEBSOCKET_PORTFORWARD_PROTOCOLS = [SPDY_TUNNEL_PROTOCOL, 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', PORTFORWARD_PROTOCOL, ''];

const STREAM_CREATION_TIMEOUT_MS = 30_000;

/** The kubelet's error text for a failed forward. */
export function forwardError(port: number, pod: string, uid: string, err: string): string {
  return `error forwarding port ${port} to pod ${pod}, uid ${uid}: ${err}`;
}

/** Parses the kubelet's websocket port-forward query (?port=N&port=M); throws the kubelet's messages. */
export function parsePortForwardQuery(q: URLSearchParams): number[] {
  const raw = q.getAll('port');
  if (raw.length === 0) throw new Error('query parameter "port" is required');
  return raw.flatMap((v) => {
    if (v === '') throw new Error('query parameter "port" cannot be empty');
    return v.split(',').map((s) => {
      const n = Number(s);
      if (!/^\d+$/.test(s) || n > 65535) throw new Error(`unable to parse "${s}" as a port`);
      if (n <= 0) throw new Error(`port "${s}" must be > 0`);
      return n;
    });
  });
}

async function connectSafely(connect: PortConnector, port: number): Promise<Duplex | string> {
  try {
    return await connect(port);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Serves an upgraded port-forward request (SPDY, WebSocket channels, or
 * WebSocket-tunneled SPDY). `ports` are the query's ports, used by the
 * WebSocket channel protocol only. connect returns the byte stream to the
 * pod's port, or an error string written on the error stream.
 */
export function servePortForward(req: IncomingMessage, socket: Duplex, head: Buffer, ports: number[], connect: PortConnector): void {
  if (isWebSocketRequest(req)) {
    const ws = acceptWebSocket(req, socket, head, WEBSOCKET_PORTFORWARD_PROTOCOLS);
    if (!ws) return;
    if (ws.protocol === SPDY_TUNNEL_PROTOCOL) {
      serveSpdyPortForward(new SpdySession(messageDuplex(ws)), connect);
      return;
    }
    serveWebSocketChannels(ws, ports, connect);
  } else if (isSpdyRequest(req)) {
    if (spdyHandshake(req, socket, [PORTFORWARD_PROTOCOL]) === undefined) return;
    serveSpdyPortForward(new SpdySession(socket, head), connect);
  } else {
    writeHttpError(socket, 400, 'BadRequest', 'Upgrade request required: use SPDY/3.1 (X-Stream-Protocol-Version: portforward.k8s.io) or a WebSocket');
  }
}

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer: NodeJS.Timeout;
}

/** Runs the SPDY port-forward protocol on an established session. */
export function serveSpdyPortForward(session: SpdySession, connect: PortConnector): void {
  const pairs = new Map<string, Pair>();
  session.on('close', () => {
    for (const p of pairs.values()) clearTimeout(p.timer);
    pairs.clear();
  });
  session.on('stream', (st: SpdyStream) => {
    const type = st.headers['streamtype'];
    const portString = st.headers['port'] ?? '';
    const port = Number(portString);
    if ((type !== 'data' && type !== 'error') || !/^\d+$/.test(portString) || port <= 0 || port > 65535) {
      st.reset();
      return;
    }
    let requestId = st.headers['requestid'] ?? '';
    if (requestId === '') requestId = String(type === 'error' ? st.id : st.id - 2);
    let p = pairs.get(requestId);
    if (!p) {
      const timer = setTimeout(() => {
        // the kubelet's monitorStreamPair: "timed out waiting for streams"
        const q = pairs.get(requestId);
        pairs.delete(requestId);
        q?.error?.end(`(request=${requestId}) timed out waiting for streams`);
        q?.data?.reset();
      }, STREAM_CREATION_TIMEOUT_MS);
      timer.unref();
      p = { timer };
      pairs.set(requestId, p);
    }
    if (p[type]) {
      const msg = `error processing stream for request ${requestId}: ${type} stream already assigned`;
      p.error?.write(msg);
      st.reset();
      return;
    }
    p[type] = st;
    if (p.data && p.error) {
      clearTimeout(p.timer);
      pairs.delete(requestId);
      void forward(p.data, p.error, connect);
    }
  });
}

async function forward(data: SpdyStream, error: SpdyStream, connect: PortConnector): Promise<void> {
  const port = Number(data.headers['port']);
  error.resume();
  const target = await connectSafely(connect, port);
  if (typeof target === 'string') {
    error.end(target);
    data.resume();
    data.end();
    return;
  }
  let done = false;
  const finish = (err?: string): void => {
    if (done) return;
    done = true;
    if (err) error.write(err);
    error.end();
    data.end();
  };
  data.pipe(target);
  target.on('data', (b: Buffer) => data.write(b));
  target.on('end', () => finish());
  target.on('close', () => finish());
  target.on('error', (e: Error) => finish(e.message));
  data.on('sessionClosed', () => target.destroy());
  data.on('reset', () => target.destroy());
}

function serveWebSocketChannels(ws: WebSocketConn, ports: number[], connect: PortConnector): void {
  const base64 = ws.protocol.includes('base64');
  const targets: (Duplex | undefined)[] = [];
  let remaining = ports.length;
  const oneDone = (): void => {
    if (--remaining <= 0) ws.close(1000, '');
  };
  ws.on('message', (msg: Buffer, binary: boolean) => {
    const m = decodeChannelMessage(msg, binary, base64);
    if (!m || m.channel % 2 !== 0) return;
    const t = targets[m.channel / 2];
    if (t && m.data.length && !t.writableEnded) t.write(m.data);
  });
  ws.on('close', () => {
    for (const t of targets) t?.destroy();
  });
  ports.forEach((port, i) => {
    const pb = Buffer.alloc(2);
    pb.writeUInt16LE(port);
    sendChannel(ws, base64, 2 * i, pb);
    sendChannel(ws, base64, 2 * i + 1, pb);
  });
  if (ports.length === 0) ws.close(1000, '');
  ports.forEach((port, i) => {
    void connectSafely(connect, port).then((target) => {
      if (typeof target === 'string') {
        sendChannel(ws, base64, 2 * i + 1, Buffer.from(target));
        oneDone();
        return;
      }
      if (ws.closed) {
        target.destroy();
        return;
      }
      targets[i] = target;
      let done = false;
      const finish = (err?: string): void => {
        if (done) return;
        done = true;
        if (err) sendChannel(ws, base64, 2 * i + 1, Buffer.from(err));
        oneDone();
      };
      target.on('data', (b: Buffer) => sendChannel(ws, base64, 2 * i, b));
      target.on('end', () => finish());
      target.on('close', () => finish());
      target.on('error', (e: Error) => finish(e.message));
    });
  });
}
