/**
 * Kubernetes' IP and CIDR libraries (library/ip.go, library/cidr.go) over a
 * port of Go's net/netip parsing and formatting: ip, isIP, ip.isCanonical,
 * family, isUnspecified, isLoopback, isLinkLocalMulticast,
 * isLinkLocalUnicast, isGlobalUnicast; cidr, isCIDR, containsIP,
 * containsCIDR, ip, prefixLength, masked; string() of both. Errors read as
 * Go's (`ParseAddr("1.2.3"): IPv4 address too short`).
 */
import { formatIPv6 } from '../../../util/net/ip.js';
import type { Environment } from '@marcbachmann/cel-js';
import { celError, type CelLibrary } from './library.js';

class AddrError extends Error {}

const q = (s: string): string => JSON.stringify(s);

/** A parsed IP address (netip.Addr): 4 or 16 bytes, and a zone for IPv6. */
export class CelIP {
  readonly celTypeName = 'net.IP';
  constructor(
    readonly bytes: Uint8Array,
    readonly zone = '',
  ) {}

  get is4(): boolean {
    return this.bytes.length === 4;
  }

  get is4In6(): boolean {
    return this.bytes.length === 16 && this.bytes.slice(0, 10).every((b) => b === 0) && this.bytes[10] === 0xff && this.bytes[11] === 0xff;
  }

  celEquals(other: unknown): boolean {
    return other instanceof CelIP && other.toString() === this.toString();
  }

  celSize(): number {
    return this.bytes.length;
  }

  toString(): string {
    if (this.is4) return [...this.bytes].join('.');
    if (this.is4In6) return `::ffff:${[...this.bytes.slice(12)].join('.')}${this.zone ? `%${this.zone}` : ''}`;
    const groups: number[] = [];
    for (let i = 0; i < 16; i += 2) groups.push((this.bytes[i]! << 8) | this.bytes[i + 1]!);
    return formatIPv6(groups) + (this.zone ? `%${this.zone}` : '');
  }

  private v4(): Uint8Array | undefined {
    if (this.is4) return this.bytes;
    if (this.is4In6) return this.bytes.slice(12);
    return undefined;
  }

  isUnspecified(): boolean {
    return this.bytes.every((b) => b === 0) && (this.is4 || this.bytes.length === 16) && !this.is4In6;
  }

  isLoopback(): boolean {
    const v4 = this.v4();
    if (v4) return v4[0] === 127;
    return this.bytes.slice(0, 15).every((b) => b === 0) && this.bytes[15] === 1;
  }

  isMulticast(): boolean {
    const v4 = this.v4();
    if (v4) return (v4[0]! & 0xf0) === 0xe0;
    return this.bytes[0] === 0xff;
  }

  isLinkLocalMulticast(): boolean {
    const v4 = this.v4();
    if (v4) return v4[0] === 224 && v4[1] === 0 && v4[2] === 0;
    return this.bytes[0] === 0xff && (this.bytes[1]! & 0x0f) === 0x02;
  }

  isLinkLocalUnicast(): boolean {
    const v4 = this.v4();
    if (v4) return v4[0] === 169 && v4[1] === 254;
    return this.bytes[0] === 0xfe && (this.bytes[1]! & 0xc0) === 0x80;
  }

  isGlobalUnicast(): boolean {
    const v4 = this.v4();
    if (v4 && v4.every((b) => b === 255)) return false;
    const unspecified = v4 ? v4.every((b) => b === 0) : this.bytes.every((b) => b === 0);
    return !unspecified && !this.isLoopback() && !this.isMulticast() && !this.isLinkLocalUnicast();
  }
}

function parseIPv4(s: string, inForErr = s): Uint8Array {
  const fields: number[] = [];
  let val = 0;
  let digLen = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') {
      if (digLen === 1 && val === 0) throw new AddrError(`ParseAddr(${q(inForErr)}): IPv4 field has octet with leading zero`);
      val = val * 10 + (c.charCodeAt(0) - 48);
      digLen++;
      if (val > 255) throw new AddrError(`ParseAddr(${q(inForErr)}): IPv4 field has value >255`);
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') throw new AddrError(`ParseAddr(${q(inForErr)}): IPv4 field must have at least one digit (at ${q(s.slice(i))})`);
      if (fields.length === 3) throw new AddrError(`ParseAddr(${q(inForErr)}): IPv4 address too long`);
      fields.push(val);
      val = 0;
      digLen = 0;
    } else throw new AddrError(`ParseAddr(${q(inForErr)}): unexpected character (at ${q(s.slice(i))})`);
  }
  if (fields.length < 3) throw new AddrError(`ParseAddr(${q(inForErr)}): IPv4 address too short`);
  fields.push(val);
  return Uint8Array.from(fields);
}

function parseIPv6(input: string): CelIP {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct !== -1) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === '') throw new AddrError(`ParseAddr(${q(input)}): zone must be a non-empty string`);
  }
  const ip = new Uint8Array(16);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return new CelIP(ip, zone);
  }
  const err = (msg: string, at?: string): AddrError => new AddrError(`ParseAddr(${q(input)}): ${msg}${at !== undefined ? ` (at ${q(at)})` : ''}`);
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const c = s[off]!;
      const d = /[0-9a-fA-F]/.test(c) ? parseInt(c, 16) : -1;
      if (d < 0) break;
      acc = (acc << 4) + d;
      if (acc > 0xffff) throw err('IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw err('each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12) throw err('embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16) throw err('too many hex fields to fit an embedded IPv4 at the end of the address', s);
      let v4: Uint8Array;
      try {
        v4 = parseIPv4(s);
      } catch (e) {
        throw err((e as Error).message, s);
      }
      ip.set(v4, i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ':') throw err('unexpected character, want colon', s);
    if (s.length === 1) throw err('colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw err('multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw err('trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw err('address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) throw err('the :: must expand to at least one field of zeros');
  return new CelIP(ip, zone);
}

/** Go's netip.ParseAddr. Throws AddrError with Go's message. */
export function parseAddr(s: string): CelIP {
  for (const c of s) {
    if (c === '.') return new CelIP(parseIPv4(s));
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw new AddrError(`ParseAddr(${q(s)}): missing IPv6 address`);
  }
  throw new AddrError(`ParseAddr(${q(s)}): unable to parse IP`);
}

/** Kubernetes' parseIPAddr: no zones, no IPv4-mapped IPv6. */
function parseIPAddr(raw: string): CelIP {
  let addr: CelIP;
  try {
    addr = parseAddr(raw);
  } catch (e) {
    throw new AddrError(`IP Address ${q(raw)} parse error during conversion from string: ${(e as Error).message}`);
  }
  if (addr.zone !== '') throw new AddrError(`IP address ${q(raw)} with zone value is not allowed`);
  if (addr.is4In6) throw new AddrError(`IPv4-mapped IPv6 address ${q(raw)} is not allowed`);
  return addr;
}

/** A parsed network prefix (netip.Prefix). */
export class CelCIDR {
  readonly celTypeName = 'net.CIDR';
  constructor(
    readonly addr: CelIP,
    readonly bits: number,
  ) {}

  celEquals(other: unknown): boolean {
    return other instanceof CelCIDR && other.toString() === this.toString();
  }

  /** cel.CIDR.Size(): the prefix length in bytes, rounded up. */
  celSize(): number {
    return Math.ceil(this.bits / 8);
  }

  toString(): string {
    return `${this.addr.toString()}/${this.bits}`;
  }

  masked(): CelCIDR {
    const b = Uint8Array.from(this.addr.bytes);
    for (let i = 0; i < b.length * 8; i++) if (i >= this.bits) b[i >> 3]! &= ~(0x80 >> (i & 7));
    return new CelCIDR(new CelIP(b), this.bits);
  }

  private static prefixEqual(a: Uint8Array, b: Uint8Array, bits: number): boolean {
    for (let i = 0; i < bits; i++) {
      const m = 0x80 >> (i & 7);
      if ((a[i >> 3]! & m) !== (b[i >> 3]! & m)) return false;
    }
    return true;
  }

  contains(ip: CelIP): boolean {
    if (ip.zone !== '' || ip.bytes.length !== this.addr.bytes.length) return false;
    return CelCIDR.prefixEqual(this.addr.bytes, ip.bytes, this.bits);
  }

  overlaps(o: CelCIDR): boolean {
    if (o.addr.bytes.length !== this.addr.bytes.length) return false;
    return CelCIDR.prefixEqual(this.addr.bytes, o.addr.bytes, Math.min(this.bits, o.bits));
  }
}

/** Go's netip.ParsePrefix. */
export function parsePrefix(s: string): CelCIDR {
  const i = s.lastIndexOf('/');
  if (i < 0) throw new AddrError(`netip.ParsePrefix(${q(s)}): no '/'`);
  let ip: CelIP;
  try {
    ip = parseAddr(s.slice(0, i));
  } catch (e) {
    throw new AddrError(`netip.ParsePrefix(${q(s)}): ${(e as Error).message}`);
  }
  if (!ip.is4 && ip.zone !== '') throw new AddrError(`netip.ParsePrefix(${q(s)}): IPv6 zones cannot be present in a prefix`);
  const bitsStr = s.slice(i + 1);
  if (!/^[+-]?\d+$/.test(bitsStr)) throw new AddrError(`netip.ParsePrefix(${q(s)}): bad bits after slash: ${q(bitsStr)}`);
  const bits = Number(bitsStr);
  const max = ip.is4 ? 32 : 128;
  if (bits < 0 || bits > max) throw new AddrError(`netip.ParsePrefix(${q(s)}): prefix length out of range`);
  return new CelCIDR(ip, bits);
}

function parseCIDR(raw: string): CelCIDR {
  let net: CelCIDR;
  try {
    net = parsePrefix(raw);
  } catch (e) {
    throw new AddrError(`network address parse error during conversion from string: ${(e as Error).message}`);
  }
  if (net.addr.is4In6) throw new AddrError(`IPv4-mapped IPv6 address ${q(raw)} is not allowed`);
  return net;
}

function guard<T>(f: () => T, prefix = ''): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof AddrError) return celError(prefix + e.message);
    throw e;
  }
}

const stringToIP = (s: string): CelIP => guard(() => parseIPAddr(s));
const stringToCIDR = (s: string): CelCIDR => guard(() => parseCIDR(s), 'network address parse error during conversion from string: ');
const ok = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};

const IP = 'net.IP';
const CIDR = 'net.CIDR';

export const ipLibrary: CelLibrary = {
  name: 'net.ip+net.cidr',
  functions: ['ip', 'isIP', 'isCanonical', 'family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'cidr', 'isCIDR', 'containsIP', 'containsCIDR', 'prefixLength', 'masked', 'string'],
  declare(env: Environment) {
    class IpNamespace {}
    env
      .registerType(IP, { ctor: CelIP, fields: {} })
      .registerType(CIDR, { ctor: CelCIDR, fields: {} })
      .registerFunction(`ip(string): ${IP}`, stringToIP)
      .registerFunction(`${IP}.family(): int`, (ip: CelIP) => (ip.is4 ? 4n : 6n))
      .registerType('IpNamespace', IpNamespace)
      .registerConstant('ip', 'IpNamespace', new IpNamespace())
      .registerFunction('IpNamespace.isCanonical(string): bool', (_: unknown, s: string) => isCanonicalIP(s))
      .registerFunction('isIP(string): bool', (s: string) => ok(() => parseIPAddr(s)))
      .registerFunction(`${IP}.isUnspecified(): bool`, (ip: CelIP) => ip.isUnspecified())
      .registerFunction(`${IP}.isLoopback(): bool`, (ip: CelIP) => ip.isLoopback())
      .registerFunction(`${IP}.isLinkLocalMulticast(): bool`, (ip: CelIP) => ip.isLinkLocalMulticast())
      .registerFunction(`${IP}.isLinkLocalUnicast(): bool`, (ip: CelIP) => ip.isLinkLocalUnicast())
      .registerFunction(`${IP}.isGlobalUnicast(): bool`, (ip: CelIP) => ip.isGlobalUnicast())
      .registerFunction(`string(${IP}): string`, (ip: CelIP) => ip.toString())
      .registerOperator(`${IP} == ${IP}`, (a: CelIP, b: CelIP) => a.celEquals(b))
      .registerFunction(`cidr(string): ${CIDR}`, stringToCIDR)
      .registerFunction(`${CIDR}.containsIP(string): bool`, (c: CelCIDR, s: string) => c.contains(stringToIP(s)))
      .registerFunction(`${CIDR}.containsIP(${IP}): bool`, (c: CelCIDR, ip: CelIP) => c.contains(ip))
      .registerFunction(`${CIDR}.containsCIDR(string): bool`, (c: CelCIDR, s: string) => {
        const o = stringToCIDR(s);
        return c.overlaps(o) && c.bits <= o.bits;
      })
      .registerFunction(`${CIDR}.containsCIDR(${CIDR}): bool`, (c: CelCIDR, o: CelCIDR) => c.overlaps(o) && c.bits <= o.bits)
      .registerFunction(`${CIDR}.ip(): ${IP}`, (c: CelCIDR) => c.addr)
      .registerFunction(`${CIDR}.prefixLength(): int`, (c: CelCIDR) => BigInt(c.bits))
      .registerFunction(`${CIDR}.masked(): ${CIDR}`, (c: CelCIDR) => c.masked())
      .registerFunction('isCIDR(string): bool', (s: string) => ok(() => parseCIDR(s)))
      .registerFunction(`string(${CIDR}): string`, (c: CelCIDR) => c.toString())
      .registerOperator(`${CIDR} == ${CIDR}`, (a: CelCIDR, b: CelCIDR) => a.celEquals(b));
  },
};

/** `ip.isCanonical(<string>)`: the namespaced function, declared through the `ip` namespace constant. */
export function isCanonicalIP(s: string): boolean {
  const addr = stringToIP(s);
  return addr.toString() === s;
}
