/**
 * Minimal DER (ASN.1) decoding: walks TLVs, enough to read PKCS#10 requests
 * and X.509 certificates. Throws DerError on malformed input.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

/** One decoded element. `raw` is the whole TLV, `content` its value bytes. */
export interface Tlv {
  tag: number;
  content: Buffer;
  raw: Buffer;
}

/** Reads the element starting at `off`; returns it and the offset after it. */
export function readTlv(buf: Buffer, off = 0): { tlv: Tlv; next: number } {
  if (off + 2 > buf.length) throw new DerError('truncated DER element');
  const tag = buf[off]!;
  let len = buf[off + 1]!;
  let hdr = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError('unsupported DER length');
    if (off + 2 + n > buf.length) throw new DerError('truncated DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[off + 2 + i]!;
    hdr = 2 + n;
  }
  const end = off + hdr + len;
  if (end > buf.length) throw new DerError('DER element overruns its container');
  return { tlv: { tag, content: buf.subarray(off + hdr, end), raw: buf.subarray(off, end) }, next: end };
}

/** The single element that must fill `buf`. */
export function readOne(buf: Buffer): Tlv {
  const { tlv, next } = readTlv(buf, 0);
  if (next !== buf.length) throw new DerError('trailing data after DER element');
  return tlv;
}

/** The elements inside a constructed element's content. */
export function children(t: Tlv | Buffer): Tlv[] {
  const buf = Buffer.isBuffer(t) ? t : t.content;
  const out: Tlv[] = [];
  let off = 0;
  while (off < buf.length) {
    const { tlv, next } = readTlv(buf, off);
    out.push(tlv);
    off = next;
  }
  return out;
}

export function expectTag(t: Tlv | undefined, tag: number, what: string): Tlv {
  if (!t || t.tag !== tag) throw new DerError(`expected ${what}`);
  return t;
}

/** Dotted form of an OBJECT IDENTIFIER element's content. */
export function decodeOid(content: Buffer): string {
  if (content.length === 0) throw new DerError('empty OID');
  const parts: number[] = [];
  const first = content[0]!;
  parts.push(first < 80 ? Math.floor(first / 40) : 2, first < 80 ? first % 40 : first - 80);
  let v = 0;
  for (let i = 1; i < content.length; i++) {
    const b = content[i]!;
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** Text of a string-typed element (UTF8String, PrintableString, IA5String, ...). */
export function decodeString(t: Tlv): string {
  if (t.tag === 0x1e) {
    // BMPString: UTF-16BE
    const b = Buffer.from(t.content);
    return b.swap16().toString('utf16le');
  }
  return t.content.toString(t.tag === 0x0c ? 'utf8' : 'latin1');
}
