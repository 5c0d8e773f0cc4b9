/**
 * Minimal DER (ASN.1) encoding: just what X.509 certificate building needs.
 */

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  while (n > 0) {
    bytes.unshift(n & 0xff);
    n = Math.floor(n / 256);
  }
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const nullValue = (): Buffer => Buffer.from([0x05, 0x00]);
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const printableString = (s: string): Buffer => tlv(0x13, Buffer.from(s, 'ascii'));
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** Context-specific tag [n], constructed (explicit) or primitive (implicit). */
export const context = (n: number, content: Buffer, constructed = true): Buffer =>
  tlv((constructed ? 0xa0 : 0x80) | n, content);

/** BIT STRING with no unused bits. */
export function bitString(b: Buffer): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
}

/** A BIT STRING holding named bits (bit 0 = most significant bit of the first byte), DER minimal form. */
export function namedBits(bits: number[]): Buffer {
  const max = Math.max(...bits);
  const nbytes = Math.floor(max / 8) + 1;
  const out = Buffer.alloc(nbytes);
  for (const b of bits) out[Math.floor(b / 8)]! |= 0x80 >> (b % 8);
  const unused = nbytes * 8 - 1 - max;
  return tlv(0x03, Buffer.concat([Buffer.from([unused]), out]));
}

/** INTEGER from a non-negative big-endian magnitude. */
export function integer(magnitude: Buffer | number): Buffer {
  let b: Buffer;
  if (typeof magnitude === 'number') {
    const bytes: number[] = [];
    let n = magnitude;
    do {
      bytes.unshift(n & 0xff);
      n = Math.floor(n / 256);
    } while (n > 0);
    b = Buffer.from(bytes);
  } else {
    b = magnitude;
  }
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  b = b.subarray(i);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [];
    let n = p;
    do {
      chunk.unshift(n & 0x7f);
      n = Math.floor(n / 128);
    } while (n > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime before 2050, GeneralizedTime from 2050 on (RFC 5280). */
export function time(ms: number): Buffer {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const iso = d.toISOString(); // 2024-01-02T03:04:05.000Z
  const y = d.getUTCFullYear();
  const rest = iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19) + 'Z';
  if (y < 2050) return tlv(0x17, Buffer.from(String(y).slice(2) + rest, 'ascii'));
  return tlv(0x18, Buffer.from(String(y) + rest, 'ascii'));
}
