/**
 * SPDY/3.1 as spoken by moby/spdystream (client-go's SPDY transport for
 * exec, attach and port-forward): frame encoding and decoding, the zlib
 * header-block codec with the SPDY/3 dictionary, and a server-side session.
 *
 * Header blocks: each direction is one zlib stream for the whole session.
 * Incoming blocks are inflated with the SPDY/3 dictionary (the shared
 * context is kept as the accumulated compressed bytes, re-inflated with
 * Z_SYNC_FLUSH; blocks are tiny and few). Outgoing blocks are written as
 * zlib stored (uncompressed) deflate blocks on one zlib stream, each block
 * followed by the empty stored block of a Z_SYNC_FLUSH: valid zlib that any
 * SPDY peer's shared inflater reads (Go's zlib.NewReaderDict included).
 *
 * Flow control is not enforced, as in spdystream: WINDOW_UPDATE and
 * SETTINGS are accepted and ignored. PING is echoed. Streams are Duplexes:
 * reading gives the peer's DATA until its FIN; end() sends an empty DATA
 * frame with FIN; reset() sends RST_STREAM.
 */
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import * as zlib from 'node:zlib';

/** The SPDY/3 header compression dictionary (1423 bytes, from the SPDY/3 draft; Go's spdy.headerDictionary). */
export const SPDY_DICTIONARY = Buffer.from(
  'AAAAB29wdGlvbnMAAAAEaGVhZAAAAARwb3N0AAAAA3B1dAAAAAZkZWxldGUAAAAFdHJhY2UAAAAGYWNjZXB0AAAADmFjY2VwdC1j' +
  'aGFyc2V0AAAAD2FjY2VwdC1lbmNvZGluZwAAAA9hY2NlcHQtbGFuZ3VhZ2UAAAANYWNjZXB0LXJhbmdlcwAAAANhZ2UAAAAFYWxs' +
  'b3cAAAANYXV0aG9yaXphdGlvbgAAAA1jYWNoZS1jb250cm9sAAAACmNvbm5lY3Rpb24AAAAMY29udGVudC1iYXNlAAAAEGNvbnRl' +
  'bnQtZW5jb2RpbmcAAAAQY29udGVudC1sYW5ndWFnZQAAAA5jb250ZW50LWxlbmd0aAAAABBjb250ZW50LWxvY2F0aW9uAAAAC2Nv' +
  'bnRlbnQtbWQ1AAAADWNvbnRlbnQtcmFuZ2UAAAAMY29udGVudC10eXBlAAAABGRhdGUAAAAEZXRhZwAAAAZleHBlY3QAAAAHZXhw' +
  'aXJlcwAAAARmcm9tAAAABGhvc3QAAAAIaWYtbWF0Y2gAAAARaWYtbW9kaWZpZWQtc2luY2UAAAANaWYtbm9uZS1tYXRjaAAAAAhp' +
  'Zi1yYW5nZQAAABNpZi11bm1vZGlmaWVkLXNpbmNlAAAADWxhc3QtbW9kaWZpZWQAAAAIbG9jYXRpb24AAAAMbWF4LWZvcndhcmRz' +
  'AAAABnByYWdtYQAAABJwcm94eS1hdXRoZW50aWNhdGUAAAATcHJveHktYXV0aG9yaXphdGlvbgAAAAVyYW5nZQAAAAdyZWZlcmVy' +
  'AAAAC3JldHJ5LWFmdGVyAAAABnNlcnZlcgAAAAJ0ZQAAAAd0cmFpbGVyAAAAEXRyYW5zZmVyLWVuY29kaW5nAAAAB3VwZ3JhZGUA' +
  'AAAKdXNlci1hZ2VudAAAAAR2YXJ5AAAAA3ZpYQAAAAd3YXJuaW5nAAAAEHd3dy1hdXRoZW50aWNhdGUAAAAGbWV0aG9kAAAAA2dl' +
  'dAAAAAZzdGF0dXMAAAAGMjAwIE9LAAAAB3ZlcnNpb24AAAAISFRUUC8xLjEAAAADdXJsAAAABnB1YmxpYwAAAApzZXQtY29va2ll' +
  'AAAACmtlZXAtYWxpdmUAAAAGb3JpZ2luMTAwMTAxMjAxMjAyMjA1MjA2MzAwMzAyMzAzMzA0MzA1MzA2MzA3NDAyNDA1NDA2NDA3' +
  'NDA4NDA5NDEwNDExNDEyNDEzNDE0NDE1NDE2NDE3NTAyNTA0NTA1MjAzIE5vbi1BdXRob3JpdGF0aXZlIEluZm9ybWF0aW9uMjA0' +
  'IE5vIENvbnRlbnQzMDEgTW92ZWQgUGVybWFuZW50bHk0MDAgQmFkIFJlcXVlc3Q0MDEgVW5hdXRob3JpemVkNDAzIEZvcmJpZGRl' +
  'bjQwNCBOb3QgRm91bmQ1MDAgSW50ZXJuYWwgU2VydmVyIEVycm9yNTAxIE5vdCBJbXBsZW1lbnRlZDUwMyBTZXJ2aWNlIFVuYXZh' +
  'aWxhYmxlSmFuIEZlYiBNYXIgQXByIE1heSBKdW4gSnVsIEF1ZyBTZXB0IE9jdCBOb3YgRGVjIDAwOjAwOjAwIE1vbiwgVHVlLCBX' +
  'ZWQsIFRodSwgRnJpLCBTYXQsIFN1biwgR01UY2h1bmtlZCx0ZXh0L2h0bWwsaW1hZ2UvcG5nLGltYWdlL2pwZyxpbWFnZS9naWYs' +
  'YXBwbGljYXRpb24veG1sLGFwcGxpY2F0aW9uL3hodG1sK3htbCx0ZXh0L3BsYWluLHRleHQvamF2YXNjcmlwdCxwdWJsaWNwcml2' +
  'YXRlbWF4LWFnZT1nemlwLGRlZmxhdGUsc2RjaGNoYXJzZXQ9dXRmLThjaGFyc2V0PWlzby04ODU5LTEsdXRmLSwqLGVucT0wLg==',
  'base64',
);

export const SYN_STREAM = 1;
export const SYN_REPLY = 2;
export const RST_STREAM = 3;
export const SETTINGS = 4;
export const PING = 6;
export const GOAWAY = 7;
export const HEADERS = 8;
export const WINDOW_UPDATE = 9;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes. */
export const RST_PROTOCOL_ERROR = 1;
export const RST_INVALID_STREAM = 2;
export const RST_REFUSED_STREAM = 3;
export const RST_CANCEL = 5;

/** Header names are lowercase; several values of one name are joined with NUL. */
export type SpdyHeaders = Record<string, string>;

export type SpdyFrame =
  | { type: 'data'; streamId: number; flags: number; data: Buffer }
  | { type: 'syn_stream'; streamId: number; assocStreamId: number; priority: number; flags: number; headers: SpdyHeaders }
  | { type: 'syn_reply'; streamId: number; flags: number; headers: SpdyHeaders }
  | { type: 'headers'; streamId: number; flags: number; headers: SpdyHeaders }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'window_update'; streamId: number; delta: number }
  | { type: 'unknown'; controlType: number; flags: number; payload: Buffer };

/** The uncompressed name/value block of SPDY/3 (32-bit lengths). */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [];
  const n = Buffer.alloc(4);
  n.writeUInt32BE(entries.length);
  parts.push(n);
  for (const [k, v] of entries) {
    for (const s of [k.toLowerCase(), v]) {
      const b = Buffer.from(s, 'utf8');
      const l = Buffer.alloc(4);
      l.writeUInt32BE(b.length);
      parts.push(l, b);
    }
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(b: Buffer): SpdyHeaders {
  const out: SpdyHeaders = {};
  if (b.length < 4) throw new Error('spdy: short header block');
  const n = b.readUInt32BE(0);
  let p = 4;
  const str = (): string => {
    if (p + 4 > b.length) throw new Error('spdy: short header block');
    const l = b.readUInt32BE(p);
    p += 4;
    if (p + l > b.length) throw new Error('spdy: short header block');
    const s = b.subarray(p, p + l).toString('utf8');
    p += l;
    return s;
  };
  for (let i = 0; i < n; i++) {
    const k = str().toLowerCase();
    const v = str();
    out[k] = k in out ? `${out[k]}\0${v}` : v;
  }
  return out;
}

/** One direction's header compressor: a single zlib stream of stored blocks. */
export class HeaderCompressor {
  private started = false;
  compress(block: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      parts.push(Buffer.from([0x78, 0x01]));
    }
    for (let off = 0; off < block.length || off === 0; off += 0xffff) {
      const piece = block.subarray(off, off + 0xffff);
      const h = Buffer.alloc(5);
      h[0] = 0; // BFINAL=0, BTYPE=00 (stored)
      h.writeUInt16LE(piece.length, 1);
      h.writeUInt16LE(~piece.length & 0xffff, 3);
      parts.push(h, piece);
      if (block.length === 0) break;
    }
    // An empty stored block, as Z_SYNC_FLUSH writes: Go's flate hands out a
    // stored block's bytes only when the next block starts (or on an empty one).
    parts.push(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]));
    return Buffer.concat(parts);
  }
}

/** One direction's header decompressor (shared zlib context with the SPDY/3 dictionary). */
export class HeaderDecompressor {
  private compressed = Buffer.alloc(0);
  private produced = 0;
  decompress(chunk: Buffer): Buffer {
    this.compressed = Buffer.concat([this.compressed, chunk]);
    const out = zlib.inflateSync(this.compressed, { dictionary: SPDY_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const block = out.subarray(this.produced);
    this.produced = out.length;
    return block;
  }
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8003, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(payload.length, 4);
  h[4] = flags;
  return Buffer.concat([h, payload]);
}

/** Encodes frames; header blocks go through `compressor` (one per direction). */
export function encodeFrame(f: SpdyFrame, compressor: HeaderCompressor): Buffer {
  switch (f.type) {
    case 'data': {
      const h = Buffer.alloc(8);
      h.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      h.writeUInt32BE(f.data.length, 4);
      h[4] = f.flags;
      return Buffer.concat([h, f.data]);
    }
    case 'syn_stream': {
      const p = Buffer.alloc(10);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.assocStreamId & 0x7fffffff, 4);
      p[8] = (f.priority & 7) << 5;
      return control(SYN_STREAM, f.flags, Buffer.concat([p, compressor.compress(encodeHeaderBlock(f.headers))]));
    }
    case 'syn_reply':
    case 'headers': {
      const p = Buffer.alloc(4);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      return control(f.type === 'syn_reply' ? SYN_REPLY : HEADERS, f.flags, Buffer.concat([p, compressor.compress(encodeHeaderBlock(f.headers))]));
    }
    case 'rst_stream': {
      const p = Buffer.alloc(8);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.status, 4);
      return control(RST_STREAM, 0, p);
    }
    case 'settings': {
      const p = Buffer.alloc(4 + 8 * f.entries.length);
      p.writeUInt32BE(f.entries.length, 0);
      f.entries.forEach((e, i) => {
        p.writeUInt32BE(((e.flags & 0xff) << 24) | (e.id & 0xffffff), 4 + 8 * i);
        p.writeUInt32BE(e.value, 8 + 8 * i);
      });
      return control(SETTINGS, f.flags, p);
    }
    case 'ping': {
      const p = Buffer.alloc(4);
      p.writeUInt32BE(f.id >>> 0, 0);
      return control(PING, 0, p);
    }
    case 'goaway': {
      const p = Buffer.alloc(8);
      p.writeUInt32BE(f.lastGoodStreamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.status, 4);
      return control(GOAWAY, 0, p);
    }
    case 'window_update': {
      const p = Buffer.alloc(8);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.delta & 0x7fffffff, 4);
      return control(WINDOW_UPDATE, 0, p);
    }
    case 'unknown':
      return control(f.controlType, f.flags, f.payload);
  }
}

/** Incremental frame decoder; header blocks go through `decompressor`. */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly decompressor: HeaderDecompressor) {}

  push(chunk: Buffer): SpdyFrame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const frames: SpdyFrame[] = [];
    while (this.buf.length >= 8) {
      const len = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + len) break;
      const head = this.buf.subarray(0, 8);
      const p = Buffer.from(this.buf.subarray(8, 8 + len));
      this.buf = this.buf.subarray(8 + len);
      frames.push(this.decodeOne(head, p));
    }
    return frames;
  }

  private decodeOne(h: Buffer, p: Buffer): SpdyFrame {
    const flags = h[4]!;
    if ((h[0]! & 0x80) === 0) return { type: 'data', streamId: h.readUInt32BE(0) & 0x7fffffff, flags, data: p };
    const version = h.readUInt16BE(0) & 0x7fff;
    if (version !== 3) throw new Error(`spdy: unsupported version ${version}`);
    const type = h.readUInt16BE(2);
    const need = (n: number): void => {
      if (p.length < n) throw new Error(`spdy: short control frame type ${type}`);
    };
    switch (type) {
      case SYN_STREAM:
        need(10);
        return {
          type: 'syn_stream',
          streamId: p.readUInt32BE(0) & 0x7fffffff,
          assocStreamId: p.readUInt32BE(4) & 0x7fffffff,
          priority: p[8]! >> 5,
          flags,
          headers: decodeHeaderBlock(this.decompressor.decompress(p.subarray(10))),
        };
      case SYN_REPLY:
      case HEADERS:
        need(4);
        return {
          type: type === SYN_REPLY ? 'syn_reply' : 'headers',
          streamId: p.readUInt32BE(0) & 0x7fffffff,
          flags,
          headers: decodeHeaderBlock(this.decompressor.decompress(p.subarray(4))),
        };
      case RST_STREAM:
        need(8);
        return { type: 'rst_stream', streamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case SETTINGS: {
        need(4);
        const n = p.readUInt32BE(0);
        need(4 + 8 * n);
        const entries = [];
        for (let i = 0; i < n; i++) {
          const w = p.readUInt32BE(4 + 8 * i);
          entries.push({ flags: w >>> 24, id: w & 0xffffff, value: p.readUInt32BE(8 + 8 * i) });
        }
        return { type: 'settings', flags, entries };
      }
      case PING:
        need(4);
        return { type: 'ping', id: p.readUInt32BE(0) };
      case GOAWAY:
        need(8);
        return { type: 'goaway', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case WINDOW_UPDATE:
        need(8);
        return { type: 'window_update', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
      default:
        return { type: 'unknown', controlType: type, flags, payload: p };
    }
  }
}

/** One SPDY stream as a Duplex. `headers` are the SYN_STREAM headers. */
export class SpdyStream extends Duplex {
  remoteClosed = false;
  private localClosed = false;
  constructor(
    private readonly session: SpdySession,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super({ allowHalfOpen: true });
  }
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (!this.localClosed && chunk.length) this.session.writeFrame({ type: 'data', streamId: this.id, flags: 0, data: chunk });
    cb();
  }
  override _final(cb: (err?: Error | null) => void): void {
    this.sendFin();
    cb();
  }
  /** Sends FIN (our half closed). */
  sendFin(): void {
    if (this.localClosed) return;
    this.localClosed = true;
    this.session.writeFrame({ type: 'data', streamId: this.id, flags: FLAG_FIN, data: Buffer.alloc(0) });
    this.session.maybeForget(this);
  }
  /** Sends RST_STREAM (CANCEL) and tears the stream down. */
  reset(status = RST_CANCEL): void {
    if (!this.localClosed || !this.remoteClosed) this.session.writeFrame({ type: 'rst_stream', streamId: this.id, status });
    this.localClosed = true;
    this.onRemoteFin();
    this.session.forget(this);
    this.destroy();
  }
  get fullyClosed(): boolean {
    return this.localClosed && this.remoteClosed;
  }
  /** @internal */
  onRemoteData(data: Buffer, fin: boolean): void {
    if (this.remoteClosed) return;
    if (data.length) this.push(data);
    if (fin) this.onRemoteFin();
  }
  /** @internal */
  onRemoteFin(): void {
    if (this.remoteClosed) return;
    this.remoteClosed = true;
    this.push(null);
    this.session.maybeForget(this);
  }
  /** @internal the peer reset the stream */
  onReset(): void {
    this.localClosed = true;
    this.onRemoteFin();
    this.emit('reset');
    this.destroy();
  }
}

/**
 * A server-side SPDY session over an upgraded socket. Every SYN_STREAM is
 * answered with an empty SYN_REPLY, then given to the 'stream' listeners.
 * Events: 'stream' (SpdyStream), 'close' (once the socket is gone).
 */
export class SpdySession extends EventEmitter {
  private readonly compressor = new HeaderCompressor();
  private readonly decoder = new FrameDecoder(new HeaderDecompressor());
  private readonly streams = new Map<number, SpdyStream>();
  private lastRemoteId = 0;
  private goneAway = false;
  closed = false;

  constructor(readonly socket: Duplex, head?: Buffer) {
    super();
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('error', () => this.finish());
    socket.on('close', () => this.finish());
    socket.on('end', () => this.finish());
    if (head && head.length) queueMicrotask(() => this.onData(head));
  }

  writeFrame(f: SpdyFrame): void {
    if (this.closed || this.socket.destroyed || this.socket.writableEnded) return;
    this.socket.write(encodeFrame(f, this.compressor));
  }

  private onData(chunk: Buffer): void {
    let frames: SpdyFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (e) {
      this.emit('protocolError', e);
      this.writeFrame({ type: 'goaway', lastGoodStreamId: this.lastRemoteId, status: 1 });
      this.socket.destroy();
      return;
    }
    for (const f of frames) this.onFrame(f);
  }

  private onFrame(f: SpdyFrame): void {
    switch (f.type) {
      case 'syn_stream': {
        if (this.goneAway || this.streams.has(f.streamId)) {
          this.writeFrame({ type: 'rst_stream', streamId: f.streamId, status: this.goneAway ? RST_REFUSED_STREAM : RST_PROTOCOL_ERROR });
          return;
        }
        this.lastRemoteId = Math.max(this.lastRemoteId, f.streamId);
        const s = new SpdyStream(this, f.streamId, f.headers);
        this.streams.set(f.streamId, s);
        this.writeFrame({ type: 'syn_reply', streamId: f.streamId, flags: 0, headers: {} });
        if (f.flags & FLAG_FIN) s.onRemoteFin();
        this.emit('stream', s);
        return;
      }
      case 'data': {
        const s = this.streams.get(f.streamId);
        if (!s) {
          // spdystream ignores data for unknown streams
          return;
        }
        s.onRemoteData(f.data, (f.flags & FLAG_FIN) !== 0);
        return;
      }
      case 'headers':
        if (f.flags & FLAG_FIN) this.streams.get(f.streamId)?.onRemoteFin();
        return;
      case 'rst_stream': {
        const s = this.streams.get(f.streamId);
        if (s) {
          this.streams.delete(f.streamId);
          s.onReset();
        }
        return;
      }
      case 'ping':
        this.writeFrame(f);
        return;
      case 'goaway':
        this.goneAway = true;
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (we never open streams), unknown: ignored as spdystream does
        return;
    }
  }

  /** @internal */
  maybeForget(s: SpdyStream): void {
    if (s.fullyClosed) this.streams.delete(s.id);
  }
  /** @internal */
  forget(s: SpdyStream): void {
    this.streams.delete(s.id);
  }

  /** As spdystream's Connection.Close: FIN every open stream, send GOAWAY, end the socket. */
  close(): void {
    if (this.closed) return;
    for (const s of [...this.streams.values()]) s.sendFin();
    this.writeFrame({ type: 'goaway', lastGoodStreamId: this.lastRemoteId, status: 0 });
    this.goneAway = true;
    if (!this.socket.destroyed) this.socket.end();
    const t = setTimeout(() => this.socket.destroy(), 5000);
    t.unref();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) {
      s.onRemoteFin();
      s.emit('sessionClosed');
    }
    this.streams.clear();
    this.emit('close');
  }
}
