/** Go standard library formats that agnhost's output depends on (fmt %q, os.FileMode, encoding/json, time, log). */
import type { FsNode } from '../shell/index.js';

/** The escapes strconv.Quote and encoding/json share. */
const COMMON_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A double-quoted string: the common escapes, then `other` for the rest (undefined keeps the character). */
function quoteWith(s: string, other: (ch: string, c: number) => string | undefined): string {
  let out = '"';
  for (const ch of s) out += COMMON_ESCAPES[ch] ?? other(ch, ch.codePointAt(0)!) ?? ch;
  return out + '"';
}

/** strconv.Quote / fmt %q. */
export { goQuote } from '../../api/validation.js';

/** os.FileMode.String() of what os.Stat returns for a node (symlinks already followed). */
export function goFileMode(n: FsNode, permOnly = false): string {
  const m = n.mode;
  const rwx = 'rwxrwxrwx'
    .split('')
    .map((c, i) => ((m >> (8 - i)) & 1 ? c : '-'))
    .join('');
  if (permOnly) return '-' + rwx;
  let t = '';
  if (n.type === 'dir') t += 'd';
  if (n.type === 'symlink') t += 'L';
  if (n.type === 'dev') t += 'D';
  if (m & 0o4000) t += 'u';
  if (m & 0o2000) t += 'g';
  if (n.type === 'dev') t += 'c';
  if (m & 0o1000) t += 't';
  return (t === '' ? '-' : t) + rwx;
}

/** encoding/json string encoding (HTML-safe: <, >, & escaped; U+2028/2029 escaped). */
export function goJSONString(s: string): string {
  return quoteWith(s, (ch, c) => (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029 ? '\\u' + c.toString(16).padStart(4, '0') : undefined));
}

/** json.Marshal of a map[string]string or map[string][]string (keys sorted, as Go does). */
export function goJSONMap(m: Record<string, string | string[]>): string {
  const keys = Object.keys(m).sort();
  return (
    '{' +
    keys
      .map((k) => {
        const v = m[k]!;
        return goJSONString(k) + ':' + (Array.isArray(v) ? '[' + v.map(goJSONString).join(',') + ']' : goJSONString(v));
      })
      .join(',') +
    '}'
  );
}

const p2 = (n: number): string => String(n).padStart(2, '0');

/** log.Printf prefix (LstdFlags, UTC): `2026/11/26 18:02:07 `. */
export function goLogPrefix(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}/${p2(d.getUTCMonth() + 1)}/${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} `;
}

/** A log.Printf line (a newline is added when missing). */
export function goLog(ms: number, msg: string): string {
  return goLogPrefix(ms) + msg + (msg.endsWith('\n') ? '' : '\n');
}

/**
 * `%v` of time.Now() in a UTC container: `2026-11-26 18:02:07.5 +0000 UTC m=+3.500000001`
 * (the monotonic part counts from `startedAt`, the process start).
 */
export function goTimeNow(ms: number, startedAt: number): string {
  const d = new Date(ms);
  const frac = ms % 1000 === 0 ? '' : '.' + String(((ms % 1000) + 1000) % 1000).padStart(3, '0').replace(/0+$/, '');
  const mono = Math.max(0, ms - startedAt) / 1000;
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}${frac} +0000 UTC m=+${mono.toFixed(9)}`;
}

/** time.Duration.String() for a whole number of milliseconds. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let v = Math.abs(ms);
  let out: string;
  if (v < 1000) out = `${v}ms`;
  else {
    const h = Math.floor(v / 3_600_000);
    v -= h * 3_600_000;
    const m = Math.floor(v / 60_000);
    v -= m * 60_000;
    const s = (v / 1000).toFixed(3).replace(/\.?0+$/, '');
    out = (h > 0 ? `${h}h${m}m` : m > 0 ? `${m}m` : '') + `${s}s`;
  }
  return (neg ? '-' : '') + out;
}

/** Parses a Go duration (`1s`, `1.5m`, `300ms`, `1h2m`); undefined when invalid. Empty -> 0. */
export function parseGoDuration(s: string): number | undefined {
  if (s === '' || s === '0') return 0;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let str = s;
  let sign = 1;
  if (str.startsWith('-') || str.startsWith('+')) {
    sign = str.startsWith('-') ? -1 : 1;
    str = str.slice(1);
  }
  re.lastIndex = 0;
  let pos = 0;
  while (pos < str.length) {
    re.lastIndex = pos;
    const m = re.exec(str);
    if (!m) return undefined;
    total += Number(m[1]) * units[m[2]!]!;
    pos = re.lastIndex;
  }
  return sign * total;
}

/** HTTP-date (`Thu, 26 Nov 2026 18:02:07 GMT`), as net/http, nginx and Apache write it. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/** errno text as Go's syscall.Errno.Error() prints it. */
export function goErrno(code: string): string {
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'not a directory';
    case 'EEXIST':
      return 'file exists';
    case 'EROFS':
      return 'read-only file system';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'ENOTEMPTY':
      return 'directory not empty';
    case 'EBUSY':
      return 'device or resource busy';
    default:
      return 'invalid argument';
  }
}
