/**
 * The protobuf wire format, read side: a record per field (number, wire
 * type, value) in the order the bytes hold them. Values stay raw here
 * (varints as 64-bit lo/hi halves, length-delimited as sub-arrays); their
 * meaning comes from the schema (see to-json.ts).
 */

export const WireType = { varint: 0, fixed64: 1, bytes: 2, startGroup: 3, endGroup: 4, fixed32: 5 } as const;
export type WireType = (typeof WireType)[keyof typeof WireType];

/** A varint as two unsigned 32-bit halves, so 64-bit values survive. */
export interface Varint {
  lo: number;
  hi: number;
}

export type WireField =
  | { no: number; wt: 0; v: Varint }
  | { no: number; wt: 1 | 5; v: Uint8Array }
  | { no: number; wt: 2; v: Uint8Array };

/** A malformed message: truncated, bad wire type, or a varint past 10 bytes. */
export class WireError extends Error {
  override name = 'WireError';
}

/** A cursor over one message's bytes. */
export class WireReader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): Varint {
    let lo = 0;
    let hi = 0;
    const buf = this.buf;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) throw new WireError('truncated varint');
      const b = buf[this.pos++]!;
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32);
      if (b < 0x80) return { lo: lo >>> 0, hi: hi >>> 0 };
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** A varint that must fit in 32 bits unsigned (tags, lengths). */
  uint32(): number {
    const v = this.varint();
    if (v.hi !== 0) throw new WireError('value does not fit in 32 bits');
    return v.lo;
  }

  take(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) throw new WireError(`truncated: want ${n} bytes at ${this.pos}, have ${this.buf.length - this.pos}`);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** The next field, or undefined at the end. Groups (deprecated) are rejected. */
  next(): WireField | undefined {
    if (this.done()) return undefined;
    const key = this.uint32();
    const no = key >>> 3;
    const wt = key & 7;
    if (no === 0) throw new WireError('field number 0');
    switch (wt) {
      case 0:
        return { no, wt, v: this.varint() };
      case 1:
        return { no, wt, v: this.take(8) };
      case 2:
        return { no, wt, v: this.take(this.uint32()) };
      case 5:
        return { no, wt, v: this.take(4) };
      default:
        throw new WireError(`unsupported wire type ${wt} for field ${no}`);
    }
  }
}

/** Every field of a message, in wire order. */
export function readFields(buf: Uint8Array): WireField[] {
  const r = new WireReader(buf);
  const out: WireField[] = [];
  for (let f = r.next(); f; f = r.next()) out.push(f);
  return out;
}

const two32 = 0x1_0000_0000;

/** int64 / sfixed64 (two's complement). Beyond ±2^53 the number is rounded. */
export function toInt64(v: Varint): number {
  if (v.hi & 0x8000_0000) {
    // negative: -(~v + 1)
    const lo = (~v.lo + 1) >>> 0;
    const hi = (~v.hi + (lo === 0 ? 1 : 0)) >>> 0;
    return -(hi * two32 + lo);
  }
  return v.hi * two32 + v.lo;
}

export function toUint64(v: Varint): number {
  return v.hi * two32 + v.lo;
}

/** int32: the low 32 bits, signed (a negative int32 is sent as a 10-byte varint). */
export function toInt32(v: Varint): number {
  return v.lo | 0;
}

export function zigzag32(v: Varint): number {
  return (v.lo >>> 1) ^ -(v.lo & 1);
}

export function zigzag64(v: Varint): number {
  const neg = v.lo & 1;
  const lo = ((v.lo >>> 1) | ((v.hi & 1) << 31)) >>> 0;
  const hi = v.hi >>> 1;
  const mag = hi * two32 + lo;
  return neg ? -(mag + 1) : mag;
}

export function fixed64ToVarint(b: Uint8Array): Varint {
  const dv = new DataView(b.buffer, b.byteOffset, 8);
  return { lo: dv.getUint32(0, true), hi: dv.getUint32(4, true) };
}

export function fixed32(b: Uint8Array, signed: boolean): number {
  const dv = new DataView(b.buffer, b.byteOffset, 4);
  return signed ? dv.getInt32(0, true) : dv.getUint32(0, true);
}

export function float32(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset, 4).getFloat32(0, true);
}

export function float64(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
}
