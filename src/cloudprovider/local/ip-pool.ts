/**
 * A pool of IPv4 addresses for load balancers: a range `first-last` or a CIDR
 * (without its network and broadcast addresses when the prefix is shorter than /31).
 */
import { formatIPv4, parseIPv4 } from '../../util/net/ip.js';

export interface IpPool {
  /** The range as given. */
  readonly range: string;
  readonly size: number;
  contains(ip: string): boolean;
  /** Reserves `ip` for `owner`; false when it is outside the pool or held by another owner. */
  reserve(ip: string, owner: string): boolean;
  /** Reserves the lowest free address for `owner` (its own one when it holds one); undefined when none is free. */
  allocate(owner: string): string | undefined;
  /** Frees what `owner` holds. */
  release(owner: string): void;
  /** The owner of `ip`, if reserved. */
  ownerOf(ip: string): string | undefined;
  /** The address `owner` holds. */
  heldBy(owner: string): string | undefined;
  /** Addresses in use. */
  used(): number;
}

/** Parses `a.b.c.d-e.f.g.h` or `a.b.c.d/n`; throws an Error with a one-line message when invalid. */
export function parseIpRange(range: string): { first: number; last: number } {
  const bad = (why: string) => new Error(`invalid load balancer IP range "${range}": ${why}`);
  const dash = range.indexOf('-');
  if (dash >= 0) {
    const first = parseIPv4(range.slice(0, dash).trim());
    const last = parseIPv4(range.slice(dash + 1).trim());
    if (first === undefined || last === undefined) throw bad('want FIRST-LAST IPv4 addresses or a CIDR');
    if (last < first) throw bad('the last address is below the first');
    return { first, last };
  }
  const slash = range.indexOf('/');
  if (slash < 0) throw bad('want FIRST-LAST IPv4 addresses or a CIDR');
  const base = parseIPv4(range.slice(0, slash));
  const bits = Number(range.slice(slash + 1));
  if (base === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) throw bad('want FIRST-LAST IPv4 addresses or a CIDR');
  const size = 2 ** (32 - bits);
  const network = Math.floor(base / size) * size;
  if (size <= 2) return { first: network, last: network + size - 1 };
  return { first: network + 1, last: network + size - 2 };
}

export function newIpPool(range: string): IpPool {
  const { first, last } = parseIpRange(range);
  const owners = new Map<number, string>();
  const held = new Map<string, number>();
  const inPool = (n: number | undefined): n is number => n !== undefined && n >= first && n <= last;
  return {
    range,
    size: last - first + 1,
    contains: (ip) => inPool(parseIPv4(ip)),
    reserve(ip, owner) {
      const n = parseIPv4(ip);
      if (!inPool(n)) return false;
      const cur = owners.get(n);
      if (cur !== undefined) return cur === owner;
      this.release(owner);
      owners.set(n, owner);
      held.set(owner, n);
      return true;
    },
    allocate(owner) {
      const mine = held.get(owner);
      if (mine !== undefined) return formatIPv4(mine);
      for (let n = first; n <= last; n++) {
        if (owners.has(n)) continue;
        owners.set(n, owner);
        held.set(owner, n);
        return formatIPv4(n);
      }
      return undefined;
    },
    release(owner) {
      const n = held.get(owner);
      if (n === undefined) return;
      held.delete(owner);
      owners.delete(n);
    },
    ownerOf: (ip) => {
      const n = parseIPv4(ip);
      return n === undefined ? undefined : owners.get(n);
    },
    heldBy: (owner) => {
      const n = held.get(owner);
      return n === undefined ? undefined : formatIPv4(n);
    },
    used: () => owners.size,
  };
}
