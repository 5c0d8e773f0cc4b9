/** Small IPv4 helpers for the proxy (kube-proxy here proxies the IPv4 family). */

export function parseIPv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  let v = 0;
  for (let i = 1; i <= 4; i++) {
    const o = Number(m[i]);
    if (o > 255) return undefined;
    v = v * 256 + o;
  }
  return v;
}

export function isIPv4(s: string | undefined): boolean {
  return s !== undefined && parseIPv4(s) !== undefined;
}

export function isIPv4CIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const bits = Number(s.slice(i + 1));
  return isIPv4(s.slice(0, i)) && Number.isInteger(bits) && bits >= 0 && bits <= 32 && /^\d+$/.test(s.slice(i + 1));
}

/** Whether `ip` lies in `cidr` (both IPv4). */
export function cidrContains(cidr: string, ip: string): boolean {
  const [base, bitsStr] = cidr.split('/');
  const b = parseIPv4(base ?? '');
  const a = parseIPv4(ip);
  const bits = Number(bitsStr);
  if (b === undefined || a === undefined) return false;
  if (bits === 0) return true;
  const mask = bits === 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
  return ((a & mask) >>> 0) === ((b & mask) >>> 0);
}

/** net.JoinHostPort. */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}
