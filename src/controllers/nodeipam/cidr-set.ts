/**
 * A cluster CIDR cut into node-sized subnets with an allocation bitmap
 * (pkg/controller/nodeipam/ipam/cidrset/cidr_set.go). IPv4 and IPv6.
 */
import { formatIPv4, formatIPv6, parseIPv4 as parseIPv4Number, parseIPv6 as parseIPv6Groups } from '../../util/net/ip.js';

export interface ParsedCIDR {
  /** Network address (host bits cleared). */
  ip: bigint;
  /** 32 or 128. */
  bits: 32 | 128;
  prefix: number;
}

function parseIPv4(s: string): bigint | undefined {
  const n = parseIPv4Number(s);
  return n === undefined ? undefined : BigInt(n);
}

/** The address as one 128-bit number (util/net/ip's parseIPv6 groups, as Go's net.ParseIP reads them). */
function parseIPv6(s: string): bigint | undefined {
  return parseIPv6Groups(s)?.reduce((v, g) => (v << 16n) | BigInt(g), 0n);
}

/** Parses `a.b.c.d/n` or `x:y::/n`; the address is masked to the network. Throws on malformed input. */
export function parseCIDR(s: string): ParsedCIDR {
  const i = s.indexOf('/');
  if (i < 0) throw new Error(`invalid CIDR address: ${s}`);
  const addr = s.slice(0, i);
  const prefixStr = s.slice(i + 1);
  const v6 = addr.includes(':');
  const bits = v6 ? 128 : 32;
  const ip = v6 ? parseIPv6(addr) : parseIPv4(addr);
  const prefix = /^\d+$/.test(prefixStr) ? Number(prefixStr) : NaN;
  if (ip === undefined || !(prefix >= 0 && prefix <= bits)) throw new Error(`invalid CIDR address: ${s}`);
  return { ip: ip & maskOf(bits, prefix), bits, prefix };
}

function maskOf(bits: number, prefix: number): bigint {
  const all = (1n << BigInt(bits)) - 1n;
  return (all >> BigInt(bits - prefix)) << BigInt(bits - prefix);
}

function formatIP(ip: bigint, bits: 32 | 128): string {
  if (bits === 32) return formatIPv4(Number(ip));
  return formatIPv6(Array.from({ length: 8 }, (_, k) => Number((ip >> BigInt(112 - 16 * k)) & 0xffffn)));
}

export function formatCIDR(c: ParsedCIDR): string {
  return `${formatIP(c.ip, c.bits)}/${c.prefix}`;
}

/** `b` contains the network address of `a` masked to b's prefix, or the other way round. */
export function cidrsOverlap(a: ParsedCIDR, b: ParsedCIDR): boolean {
  if (a.bits !== b.bits) return false;
  const p = Math.min(a.prefix, b.prefix);
  const m = maskOf(a.bits, p);
  return (a.ip & m) === (b.ip & m);
}

export class CIDRRangeExhaustedError extends Error {
  constructor() {
    super('CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range');
    this.name = 'CIDRRangeExhaustedError';
  }
}

export interface CIDRSet {
  readonly clusterCIDR: ParsedCIDR;
  readonly nodeMaskSize: number;
  /** The next free subnet, round robin from the last one handed out. Throws CIDRRangeExhaustedError. */
  allocateNext(): ParsedCIDR;
  /** Marks every subnet overlapping `cidr` used. Throws when it is outside the cluster CIDR. */
  occupy(cidr: ParsedCIDR): void;
  /** Marks every subnet overlapping `cidr` free. Throws when it is outside the cluster CIDR. */
  release(cidr: ParsedCIDR): void;
  /** Subnets in use. */
  allocatedCount(): number;
}

class Set_ implements CIDRSet {
  private readonly used = new Set<number>();
  private readonly max: number;
  private nextCandidate = 0;

  constructor(
    readonly clusterCIDR: ParsedCIDR,
    readonly nodeMaskSize: number,
  ) {
    if (clusterCIDR.prefix > nodeMaskSize) throw new Error(`CIDRSet: node mask size /${nodeMaskSize} is smaller than the cluster mask /${clusterCIDR.prefix}`);
    // Upstream caps the subnet count at 2^16 (cidrset.clusterSubnetMaxDiff).
    if (nodeMaskSize - clusterCIDR.prefix > 16) throw new Error('New CIDR set failed; the node CIDR size is too big');
    this.max = 2 ** (nodeMaskSize - clusterCIDR.prefix);
  }

  private subnet(index: number): ParsedCIDR {
    const shift = BigInt(this.clusterCIDR.bits - this.nodeMaskSize);
    return { ip: this.clusterCIDR.ip | (BigInt(index) << shift), bits: this.clusterCIDR.bits, prefix: this.nodeMaskSize };
  }

  allocateNext(): ParsedCIDR {
    for (let k = 0; k < this.max; k++) {
      const idx = (this.nextCandidate + k) % this.max;
      if (!this.used.has(idx)) {
        this.used.add(idx);
        this.nextCandidate = (idx + 1) % this.max;
        return this.subnet(idx);
      }
    }
    throw new CIDRRangeExhaustedError();
  }

  private indices(cidr: ParsedCIDR): [number, number] {
    const c = this.clusterCIDR;
    if (cidr.bits !== c.bits || !cidrsOverlap(cidr, c)) throw new Error(`cidr ${formatCIDR(cidr)} is out the range of cluster cidr ${formatCIDR(c)}`);
    if (cidr.prefix <= c.prefix) return [0, this.max - 1];
    const shift = BigInt(c.bits - this.nodeMaskSize);
    const hostMask = (1n << BigInt(c.bits - cidr.prefix)) - 1n;
    const first = cidr.ip;
    const last = cidr.ip | hostMask;
    return [Number((first - c.ip) >> shift), Number((last - c.ip) >> shift)];
  }

  occupy(cidr: ParsedCIDR): void {
    const [b, e] = this.indices(cidr);
    for (let i = b; i <= e; i++) this.used.add(i);
  }

  release(cidr: ParsedCIDR): void {
    const [b, e] = this.indices(cidr);
    for (let i = b; i <= e; i++) this.used.delete(i);
  }

  allocatedCount(): number {
    return this.used.size;
  }
}

export function newCIDRSet(clusterCIDR: ParsedCIDR, nodeMaskSize: number): CIDRSet {
  return new Set_(clusterCIDR, nodeMaskSize);
}
