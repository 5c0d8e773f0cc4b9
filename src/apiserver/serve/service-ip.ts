/**
 * The `kubernetes` Service's cluster IP: the first address of the service
 * range (kube-apiserver: 10.0.0.1 for the default 10.0.0.0/24).
 */
import { isIP } from 'node:net';
import { formatIPv6 } from '../../util/net/ip.js';

/** Throws on a malformed CIDR, as kube-apiserver refuses to start with one. */
export function firstServiceIP(cidr: string): string {
  const slash = cidr.indexOf('/');
  const ip = slash < 0 ? '' : cidr.slice(0, slash);
  const bits = Number(cidr.slice(slash + 1));
  const family = isIP(ip);
  const max = family === 4 ? 32 : 128;
  if (family === 0 || !/^\d+$/.test(cidr.slice(slash + 1)) || bits > max) throw new Error(`invalid CIDR address: ${cidr}`);
  if (max - bits < 1) throw new Error(`service CIDR ${cidr} is too small`);
  if (family === 4) {
    const n = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    const first = ((n & mask) >>> 0) + 1;
    return [24, 16, 8, 0].map((s) => (first >>> s) & 255).join('.');
  }
  const value = ipv6ToBigInt(ip);
  const mask = ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - bits)) - 1n);
  const first = (value & mask) + 1n;
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((first >> BigInt(i * 16)) & 0xffffn));
  return formatIPv6(groups);
}

function ipv6ToBigInt(ip: string): bigint {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}
