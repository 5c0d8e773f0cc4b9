/**
 * The protobuf wire format, write side: just what the OpenAPI v2 document
 * needs (varints, int64, bools, doubles, strings, nested messages). The
 * reader is ../protobuf/wire.ts.
 *
 * Fields are written in the order they are called; the caller keeps them in
 * field-number order, as Go's proto.Marshal does. The writer never leaves out
 * a zero value: proto3's "omit the default" is the caller's decision.
 */

/** Builds one message; nested messages are opened with `begin` and closed with `end`. */
export interface ProtoWriter {
  /** A varint field (uint32/uint64/enum); `n` must be a non-negative integer. */
  uint(no: number, n: number): void;
  /** An int64 field: negative values are ten-byte two's-complement varints, as Go writes them. */
  int64(no: number, n: bigint | number): void;
  bool(no: number, b: boolean): void;
  /** A double field (wire type 1, little-endian IEEE 754). */
  double(no: number, n: number): void;
  /** A string field, UTF-8 encoded. */
  string(no: number, s: string): void;
  /** A bytes field. */
  bytes(no: number, b: Uint8Array): void;
  /** Opens a nested message field; every begin needs its end. */
  begin(no: number): void;
  /** Closes the innermost open message and writes its length. */
  end(): void;
  /** A copy of the bytes written so far; throws while a message is still open. */
  finish(): Buffer;
}

const wireVarint = 0;
const wireFixed64 = 1;
const wireBytes = 2;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

// Nested lengths are not known in advance: a message's bytes are written in
// place and, at its end, shifted right by the size of its length varint.
// That copies each byte once per nesting level, which is cheap at the depths
// of an OpenAPI document.
class GrowingWriter implements ProtoWriter {
  private buf = Buffer.allocUnsafe(1 << 16);
  private pos = 0;
  private readonly open: number[] = [];

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private rawVarint(n: number): void {
    this.ensure(10);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  private key(no: number, wt: number): void {
    this.rawVarint(no * 8 + wt);
  }

  uint(no: number, n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a non-negative integer: ${n}`);
    this.key(no, wireVarint);
    this.rawVarint(n);
  }

  int64(no: number, n: bigint | number): void {
    let v = BigInt.asUintN(64, BigInt(n));
    this.key(no, wireVarint);
    this.ensure(10);
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  bool(no: number, b: boolean): void {
    this.key(no, wireVarint);
    this.rawVarint(b ? 1 : 0);
  }

  double(no: number, n: number): void {
    this.key(no, wireFixed64);
    this.ensure(8);
    this.buf.writeDoubleLE(n, this.pos);
    this.pos += 8;
  }

  string(no: number, s: string): void {
    const len = Buffer.byteLength(s, 'utf8');
    this.key(no, wireBytes);
    this.rawVarint(len);
    this.ensure(len);
    this.pos += this.buf.write(s, this.pos, len, 'utf8');
  }

  bytes(no: number, b: Uint8Array): void {
    this.key(no, wireBytes);
    this.rawVarint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  begin(no: number): void {
    this.key(no, wireBytes);
    this.open.push(this.pos);
  }

  end(): void {
    const start = this.open.pop();
    if (start === undefined) throw new Error('end() without begin()');
    const len = this.pos - start;
    const n = varintSize(len);
    this.ensure(n);
    this.buf.copyWithin(start + n, start, this.pos);
    const body = this.pos;
    this.pos = start;
    this.rawVarint(len);
    this.pos = body + n;
  }

  finish(): Buffer {
    if (this.open.length) throw new Error(`${this.open.length} message(s) still open`);
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }
}

export function newProtoWriter(): ProtoWriter {
  return new GrowingWriter();
}
