/**
 * A tiny protobuf writer for tests: builds wire bytes by hand so decoder
 * tests can state exactly what is on the wire. Not used by the server.
 */

/** A varint; negative numbers as 64-bit two's complement (10 bytes), as Go writes int32/int64. */
export function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
}

export function key(no: number, wt: number): number[] {
  return varint((no << 3) | wt);
}

/** A varint field. */
export function vf(no: number, n: number | bigint | boolean): number[] {
  return [...key(no, 0), ...varint(typeof n === 'boolean' ? (n ? 1 : 0) : n)];
}

/** A length-delimited field holding bytes or a nested message. */
export function lf(no: number, body: number[] | Uint8Array | string): number[] {
  const bytes = typeof body === 'string' ? [...Buffer.from(body, 'utf8')] : [...body];
  return [...key(no, 2), ...varint(bytes.length), ...bytes];
}

export function fixed32f(no: number, n: number): number[] {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return [...key(no, 5), ...b];
}

export function doublef(no: number, n: number): number[] {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(n);
  return [...key(no, 1), ...b];
}

/** A map entry field: key 1, value 2. */
export function entry(no: number, k: number[], v: number[]): number[] {
  return lf(no, [...k, ...v]);
}

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding}. */
export function envelope(apiVersion: string, kind: string, raw: number[], contentEncoding = ''): Uint8Array {
  return Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...lf(1, [...lf(1, apiVersion), ...lf(2, kind)]), ...lf(2, raw), ...lf(3, contentEncoding), ...lf(4, '')]);
}
