/**
 * Pod IPs for one node, from an IPv4 CIDR (the node's spec.podCIDR or a
 * built-in 10.244.<i>.0/24), as host-local IPAM hands them out: the network
 * address and .1 (the bridge) are skipped, addresses are reused after release,
 * the same key always keeps its address while allocated.
 */
import { formatIPv4, parseIPv4 } from '../util/net/ip.js';

export interface IpAllocator {
  readonly cidr: string;
  /**
   * The address held by `key`, allocating one if needed; undefined when the range is full.
   * A free `preferred` address in the range is taken first (a pod keeping its IP across a restart).
   */
  allocate(key: string, preferred?: string): string | undefined;
  release(key: string): void;
  /** How many addresses are held. */
  size(): number;
}

/** Parses `a.b.c.d/len` (IPv4 only); undefined when invalid. */
export function parseCidr(cidr: string): { base: number; size: number } | undefined {
  const [ip, lenStr] = cidr.split('/');
  const n = ip === undefined ? undefined : parseIPv4(ip);
  const len = Number(lenStr);
  if (n === undefined || !Number.isInteger(len) || len < 0 || len > 32) return undefined;
  const size = 2 ** (32 - len);
  return { base: n - (n % size), size };
}

export function newIpAllocator(cidr: string): IpAllocator {
  const parsed = parseCidr(cidr);
  if (!parsed) throw new Error(`invalid IPv4 CIDR ${JSON.stringify(cidr)}`);
  const byKey = new Map<string, number>();
  const used = new Set<number>();
  // First usable offset: skip network and gateway; last: skip broadcast.
  const first = parsed.size > 4 ? 2 : 0;
  const last = parsed.size > 4 ? parsed.size - 2 : parsed.size - 1;
  let cursor = first;
  return {
    cidr,
    allocate(key, preferred) {
      const held = byKey.get(key);
      if (held !== undefined) return formatIPv4(parsed.base + held);
      const want = preferred === undefined ? undefined : parseIPv4(preferred);
      if (want !== undefined && want - parsed.base >= first && want - parsed.base <= last && !used.has(want - parsed.base)) {
        used.add(want - parsed.base);
        byKey.set(key, want - parsed.base);
        return formatIPv4(want);
      }
      for (let i = 0; i <= last - first; i++) {
        const off = first + ((cursor - first + i) % (last - first + 1));
        if (used.has(off)) continue;
        used.add(off);
        byKey.set(key, off);
        cursor = off + 1 > last ? first : off + 1;
        return formatIPv4(parsed.base + off);
      }
      return undefined;
    },
    release(key) {
      const off = byKey.get(key);
      if (off === undefined) return;
      byKey.delete(key);
      used.delete(off);
    },
    size: () => byKey.size,
  };
}
