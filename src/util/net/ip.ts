/**
 * IP address text forms shared by the API server's allocators, the node IPAM
 * controller, the simulated nodes and certificate code: dotted IPv4 to and
 * from a number, and IPv6 groups in Go's net.IP.String form.
 */

/** `a.b.c.d` (each 0..255, at most three digits) as a 32-bit number; undefined when malformed. */
export function parseIPv4(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

/** A number in [0, 2^32) as `a.b.c.d`. */
export function formatIPv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/**
 * Eight 16-bit groups as IPv6 text the way Go's net.IP.String writes it:
 * lower-case hex without leading zeros, the longest run of two or more zero
 * groups (the first of equal runs) replaced by `::`.
 */
export function formatIPv6(groups: readonly number[]): string {
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}
