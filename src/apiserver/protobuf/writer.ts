/**
 * The protobuf wire format, write side. Messages are written back to front,
 * as gogo's generated MarshalToSizedBuffer does: a field's content first,
 * then its length, then its tag. A nested message's length is then known
 * when its prefix is written, so one buffer holds the whole output and
 * nothing is copied or sized twice.
 *
 * Contract: callers write the fields of a message in descending field
 * number (the bytes then read in ascending order, as gogo writes them) and
 * measure a nested message as `written()` after minus `written()` before.
 */

const two32 = 0x1_0000_0000;

/** Node's Buffer has these (undocumented, stable since v0.x) direct writers; buf.write() wraps them. */
type FastBuffer = Buffer & {
  latin1Write(s: string, offset: number, length: number): number;
  utf8Write(s: string, offset: number, length: number): number;
};
const fastWrites = typeof (Buffer.prototype as Partial<FastBuffer>).latin1Write === 'function' && typeof (Buffer.prototype as Partial<FastBuffer>).utf8Write === 'function';

/** A growable buffer filled from its end towards its start. */
export class ReverseWriter {
  private buf: Buffer;
  private pos: number;

  constructor(initial = 4096) {
    this.buf = Buffer.allocUnsafe(initial);
    this.pos = initial;
  }

  /** Bytes written so far (also a mark: sizes are differences of marks). */
  written(): number {
    return this.buf.length - this.pos;
  }

  /** The bytes written, front to back. A view: valid until the next write. */
  bytes(): Buffer {
    return this.buf.subarray(this.pos);
  }

  /** The bytes written, owned by the caller (copied when most of the buffer would be wasted). */
  result(): Buffer {
    const out = this.buf.subarray(this.pos);
    return out.length * 2 >= this.buf.length ? out : Buffer.from(out);
  }

  private reserve(n: number): void {
    if (this.pos >= n) return;
    const used = this.buf.length - this.pos;
    let size = this.buf.length * 2;
    while (size - used < n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, size - used, this.pos);
    this.buf = next;
    this.pos = size - used;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[--this.pos] = b;
  }

  /** An unsigned varint of a non-negative integer up to 2^53. */
  uvarint(n: number): void {
    if (n < 0x80) {
      this.reserve(1);
      this.buf[--this.pos] = n;
      return;
    }
    if (n < two32) {
      let size = 1;
      for (let v = n >>> 7; v !== 0; v >>>= 7) size++;
      this.reserve(size);
      let p = (this.pos -= size);
      const buf = this.buf;
      let v = n >>> 0;
      while (v >= 0x80) {
        buf[p++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[p] = v;
      return;
    }
    this.varint64(BigInt(Math.trunc(n)));
  }

  /**
   * Go's `encodeVarintGenerated(uint64(x))` of an int32 or int64: negative
   * values as 64-bit two's complement, ten bytes.
   */
  varint(n: number): void {
    if (n >= 0) this.uvarint(n);
    else this.varint64(BigInt(Math.trunc(n)));
  }

  varint64(v: bigint): void {
    let u = BigInt.asUintN(64, v);
    const out: number[] = [];
    do {
      let b = Number(u & 0x7fn);
      u >>= 7n;
      if (u !== 0n) b |= 0x80;
      out.push(b);
    } while (u !== 0n);
    this.reserve(out.length);
    this.pos -= out.length;
    for (let i = 0; i < out.length; i++) this.buf[this.pos + i] = out[i]!;
  }

  /** A field key; `key` is (number << 3 | wire type), precomputed by the caller. */
  key(key: number): void {
    if (key < 0x80) {
      this.reserve(1);
      this.buf[--this.pos] = key;
    } else this.uvarint(key);
  }

  raw(b: Uint8Array): void {
    this.reserve(b.length);
    this.pos -= b.length;
    this.buf.set(b, this.pos);
  }

  /** The UTF-8 bytes of `s` (no length prefix). */
  utf8(s: string): number {
    const n = s.length;
    // Short ASCII strings (names, labels, most values) go byte by byte.
    if (n <= 32) {
      this.reserve(n);
      const p = this.pos - n;
      const buf = this.buf;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[p + i] = c;
      }
      if (i === n) {
        this.pos = p;
        return n;
      }
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.reserve(len);
    this.pos -= len;
    // byteLength equal to length: all ASCII, copied as one-byte characters (faster than UTF-8 encoding).
    if (!fastWrites) this.buf.write(s, this.pos, len, len === n ? 'latin1' : 'utf8');
    else if (len === n) (this.buf as FastBuffer).latin1Write(s, this.pos, len);
    else (this.buf as FastBuffer).utf8Write(s, this.pos, len);
    return len;
  }

  /** A length-delimited string: bytes, length, then the caller's key. */
  string(s: string): void {
    this.uvarint(this.utf8(s));
  }

  /** Length-delimited bytes. */
  lenBytes(b: Uint8Array): void {
    this.raw(b);
    this.uvarint(b.length);
  }

  fixed32(n: number, signed: boolean): void {
    this.reserve(4);
    this.pos -= 4;
    if (signed) this.buf.writeInt32LE(n | 0, this.pos);
    else this.buf.writeUInt32LE(n >>> 0, this.pos);
  }

  fixed64(n: number, signed: boolean): void {
    this.reserve(8);
    this.pos -= 8;
    const v = BigInt(Math.trunc(n));
    if (signed) this.buf.writeBigInt64LE(BigInt.asIntN(64, v), this.pos);
    else this.buf.writeBigUInt64LE(BigInt.asUintN(64, v), this.pos);
  }

  float(n: number): void {
    this.reserve(4);
    this.pos -= 4;
    this.buf.writeFloatLE(n, this.pos);
  }

  double(n: number): void {
    this.reserve(8);
    this.pos -= 8;
    this.buf.writeDoubleLE(n, this.pos);
  }

  /** A 4-byte big-endian length (the watch stream's frame prefix). */
  uint32BE(n: number): void {
    this.reserve(4);
    this.pos -= 4;
    this.buf.writeUInt32BE(n >>> 0, this.pos);
  }
}
