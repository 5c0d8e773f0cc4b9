/**
 * A small RFC 6455 WebSocket server side: the upgrade handshake, frame
 * encoding/decoding (masking, fragmentation, ping/pong, close), a message
 * connection, and a Duplex byte stream over binary messages (used for the
 * SPDY-over-WebSocket tunnel of kubectl 1.31+ port-forward).
 *
 * Subprotocol choice follows the API server's wsstream (conn.go): the first
 * protocol in the client's Sec-WebSocket-Protocol list that the server
 * supports; no header at all selects "" when the server accepts it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OP_CONT = 0x0;
export const OP_TEXT = 0x1;
export const OP_BINARY = 0x2;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

export interface WsFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

/** Sec-WebSocket-Accept for a Sec-WebSocket-Key. */
export function acceptKey(key: string): string {
  return createHash('sha1').update(key + WS_GUID).digest('base64');
}

/** Encodes one frame; `mask` (clients must mask) applies a random or given 4-byte key. */
export function encodeFrame(opcode: number, payload: Buffer, opts: { fin?: boolean; mask?: boolean | Buffer } = {}): Buffer {
  const fin = opts.fin ?? true;
  const len = payload.length;
  const maskKey = opts.mask ? (Buffer.isBuffer(opts.mask) ? opts.mask : randomBytes(4)) : undefined;
  const headerLen = 2 + (len < 126 ? 0 : len < 65536 ? 2 : 8) + (maskKey ? 4 : 0);
  const out = Buffer.alloc(headerLen + len);
  out[0] = (fin ? 0x80 : 0) | (opcode & 0x0f);
  let p = 2;
  if (len < 126) out[1] = len;
  else if (len < 65536) {
    out[1] = 126;
    out.writeUInt16BE(len, 2);
    p = 4;
  } else {
    out[1] = 127;
    out.writeBigUInt64BE(BigInt(len), 2);
    p = 10;
  }
  if (maskKey) {
    out[1] |= 0x80;
    maskKey.copy(out, p);
    p += 4;
    for (let i = 0; i < len; i++) out[p + i] = payload[i]! ^ maskKey[i & 3]!;
  } else payload.copy(out, p);
  return out;
}

/** Incremental frame decoder; payloads come back unmasked. */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly maxPayload = 64 * 1024 * 1024) {}

  push(chunk: Buffer): WsFrame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const frames: WsFrame[] = [];
    for (;;) {
      const b = this.buf;
      if (b.length < 2) break;
      const masked = (b[1]! & 0x80) !== 0;
      let len = b[1]! & 0x7f;
      let p = 2;
      if (len === 126) {
        if (b.length < 4) break;
        len = b.readUInt16BE(2);
        p = 4;
      } else if (len === 127) {
        if (b.length < 10) break;
        const big = b.readBigUInt64BE(2);
        if (big > BigInt(this.maxPayload)) throw new Error('websocket: frame too large');
        len = Number(big);
        p = 10;
      }
      if (len > this.maxPayload) throw new Error('websocket: frame too large');
      const maskAt = p;
      if (masked) p += 4;
      if (b.length < p + len) break;
      const payload = Buffer.from(b.subarray(p, p + len));
      if (masked) for (let i = 0; i < len; i++) payload[i] = payload[i]! ^ b[maskAt + (i & 3)]!;
      frames.push({ fin: (b[0]! & 0x80) !== 0, opcode: b[0]! & 0x0f, payload });
      this.buf = b.subarray(p + len);
    }
    return frames;
  }
}

export function isWebSocketRequest(req: IncomingMessage): boolean {
  const conn = String(req.headers.connection ?? '').toLowerCase();
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  return conn.split(',').some((t) => t.trim() === 'upgrade') && upgrade === 'websocket';
}

/** The client's offered subprotocols, in order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const raw = req.headersDistinct?.['sec-websocket-protocol'] ?? [];
  return raw.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
}

/** First client-offered protocol the server supports ("" if the client offered none and "" is supported); undefined when none. */
export function chooseProtocol(offered: string[], supported: string[]): string | undefined {
  if (offered.length === 0) return supported.includes('') ? '' : undefined;
  return offered.find((p) => supported.includes(p));
}

/**
 * A server-side WebSocket connection over an upgraded socket. Events:
 * 'message' (data: Buffer, binary: boolean), 'close' (code, reason) once the
 * socket is gone.
 */
export class WebSocketConn extends EventEmitter {
  private readonly decoder = new FrameDecoder();
  private fragments: Buffer[] = [];
  private fragOpcode = 0;
  private closeSent = false;
  private ended = false;
  closed = false;

  constructor(readonly socket: Duplex, readonly protocol: string, head?: Buffer, private readonly clientSide = false) {
    super();
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('error', () => this.finish(1006, ''));
    socket.on('close', () => this.finish(1006, ''));
    socket.on('end', () => this.finish(1006, ''));
    if (head && head.length) queueMicrotask(() => this.onData(head));
  }

  private onData(chunk: Buffer): void {
    let frames: WsFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch {
      this.close(1009, 'frame too large');
      return;
    }
    for (const f of frames) this.onFrame(f);
  }

  private onFrame(f: WsFrame): void {
    switch (f.opcode) {
      case OP_PING:
        this.write(OP_PONG, f.payload);
        return;
      case OP_PONG:
        this.emit('pong', f.payload);
        return;
      case OP_CLOSE: {
        const code = f.payload.length >= 2 ? f.payload.readUInt16BE(0) : 1005;
        const reason = f.payload.subarray(2).toString('utf8');
        if (!this.closeSent) this.close(code === 1005 ? 1000 : code, '');
        this.endSocket();
        this.finish(code, reason);
        return;
      }
      case OP_TEXT:
      case OP_BINARY:
        if (f.fin) this.emit('message', f.payload, f.opcode === OP_BINARY);
        else {
          this.fragOpcode = f.opcode;
          this.fragments = [f.payload];
        }
        return;
      case OP_CONT:
        this.fragments.push(f.payload);
        if (f.fin) {
          const data = Buffer.concat(this.fragments);
          this.fragments = [];
          this.emit('message', data, this.fragOpcode === OP_BINARY);
        }
        return;
      default:
        this.close(1002, 'unknown opcode');
    }
  }

  private write(opcode: number, payload: Buffer, fin = true): void {
    if (this.closed || this.socket.destroyed || this.socket.writableEnded) return;
    this.socket.write(encodeFrame(opcode, payload, { fin, mask: this.clientSide }));
  }

  send(data: Buffer | string, binary = true): void {
    if (this.closeSent) return;
    this.write(binary ? OP_BINARY : OP_TEXT, typeof data === 'string' ? Buffer.from(data) : data);
  }

  ping(data: Buffer = Buffer.alloc(0)): void {
    this.write(OP_PING, data);
  }

  /** Sends a close frame; the socket ends when the peer answers or after 2 s. */
  close(code = 1000, reason = ''): void {
    if (this.closeSent) return;
    this.closeSent = true;
    const p = Buffer.alloc(2 + Buffer.byteLength(reason));
    p.writeUInt16BE(code, 0);
    p.write(reason, 2);
    this.write(OP_CLOSE, p);
    const t = setTimeout(() => {
      this.endSocket();
      this.socket.destroy();
    }, 2000);
    t.unref();
  }

  private endSocket(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.socket.destroyed) this.socket.end();
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close', code, reason);
  }
}

/**
 * Completes the WebSocket handshake for one of `supported` subprotocols. On
 * failure answers HTTP 400 and returns undefined.
 */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, supported: string[]): WebSocketConn | undefined {
  const key = req.headers['sec-websocket-key'];
  const protocol = chooseProtocol(offeredProtocols(req), supported);
  if (typeof key !== 'string' || protocol === undefined) {
    const msg = typeof key !== 'string' ? 'missing Sec-WebSocket-Key' : `unable to negotiate websocket protocol: client supports ${JSON.stringify(offeredProtocols(req))}, server supports ${JSON.stringify(supported.filter((p) => p))}`;
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(msg)}\r\nConnection: close\r\n\r\n${msg}`);
    return undefined;
  }
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${acceptKey(key)}`];
  if (protocol) lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  socket.write(lines.join('\r\n') + '\r\n\r\n');
  return new WebSocketConn(socket, protocol, head);
}

/** A Duplex byte stream over a WebSocket's binary messages (each write is one message). */
export function messageDuplex(ws: WebSocketConn): Duplex {
  const d = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      ws.send(chunk, true);
      cb();
    },
    final(cb) {
      ws.close(1000, '');
      cb();
    },
    destroy(err, cb) {
      ws.close(1000, '');
      cb(err);
    },
  });
  ws.on('message', (data: Buffer) => {
    if (data.length) d.push(data);
  });
  ws.on('close', () => {
    d.push(null);
  });
  return d;
}
