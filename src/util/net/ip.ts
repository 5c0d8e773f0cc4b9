/**
 * IP address text forms shared by the API server's allocators, the node IPAM
 * controller, the simulated nodes and certificate code: dotted IPv4 to and
 * from a number, IPv6 text to and from groups in Go's net.IP.String form,
 * and the address bytes certificates carry. (Parsed here rather than with
 * node:net's isIP, whose IPv6 regular expression costs about 8 ms to compile
 * on its first use, on kcm up's way to serving.)
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

/** IPv6 text (`::` and a dotted IPv4 tail allowed, no zone) as eight 16-bit groups; undefined when malformed. */
export function parseIPv6(ip: string): number[] | undefined {
  if (!ip.includes(':')) return undefined;
  let text = ip;
  const last = text.lastIndexOf(':');
  if (text.includes('.', last)) {
    const v4 = parseIPv4(text.slice(last + 1));
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, last + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (t: string) => (t === '' ? [] : t.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (halves.length === 2 ? head.length + tail.length > 7 : head.length !== 8) return undefined;
  const all = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail] : head;
  const out: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    out.push(parseInt(g, 16));
  }
  return out;
}

/** 4 or 6 for an IPv4 or IPv6 address, 0 otherwise (as node:net's isIP, without zones). */
export function ipFamily(ip: string): 0 | 4 | 6 {
  if (parseIPv4(ip) !== undefined) return 4;
  return parseIPv6(ip) !== undefined ? 6 : 0;
}

/** The address's 4 or 16 bytes (a certificate's iPAddress name); throws when it is not an address. */
export function ipBytes(ip: string): Buffer {
  const v4 = parseIPv4(ip);
  if (v4 !== undefined) return Buffer.from([v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255]);
  const v6 = parseIPv6(ip);
  if (v6 === undefined) throw new Error(`not an IP address: ${JSON.stringify(ip)}`);
  const out = Buffer.alloc(16);
  v6.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
