/**
 * cel-go's strings extension at version 2 (what Kubernetes 1.29+ enables):
 * charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
 * substring, trim, join, format and strings.quote. Strings are indexed by
 * code point, as Go's []rune; errors read as cel-go's.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celError, num, type CelLibrary } from './library.js';
import { CelObject, formatDuration } from '../values.js';

const runes = (s: string): string[] => [...s];

export function charAt(str: string, ind: number): string {
  const r = runes(str);
  if (ind < 0 || ind > r.length) celError(`index out of range: ${ind}`);
  return ind === r.length ? '' : r[ind]!;
}

export function indexOfOffset(str: string, sub: string, off: number): number {
  if (sub === '') return off;
  const r = runes(str);
  const s = runes(sub);
  if (off < 0) celError(`index out of range: ${off}`);
  if (off >= r.length) return -1;
  for (let i = off; i < r.length - (s.length - 1); i++) {
    let found = true;
    for (let j = 0; j < s.length; j++) {
      if (r[i + j] !== s[j]) {
        found = false;
        break;
      }
    }
    if (found) return i;
  }
  return -1;
}

export function lastIndexOfOffset(str: string, sub: string, offset: number): number {
  if (sub === '') return offset;
  const r = runes(str);
  const s = runes(sub);
  let off = offset;
  if (off < 0) celError(`index out of range: ${off}`);
  if (off >= r.length) return -1;
  if (off > r.length - s.length) off = r.length - s.length;
  for (let i = off; i >= 0; i--) {
    let found = true;
    for (let j = 0; j < s.length; j++) {
      if (r[i + j] !== s[j]) {
        found = false;
        break;
      }
    }
    if (found) return i;
  }
  return -1;
}

const asciiMap = (s: string, f: (c: string) => string): string => runes(s).map((c) => (c.codePointAt(0)! <= 0x7f ? f(c) : c)).join('');

/** Go's strings.Replace(s, old, new, n) (n < 0: all), on code points for an empty `old`. */
export function replaceN(s: string, old: string, rep: string, n: number): string {
  if (n === 0 || old === rep) return s;
  if (old === '') {
    const r = runes(s);
    const limit = n < 0 ? r.length + 1 : Math.min(n, r.length + 1);
    let out = '';
    for (let i = 0; i < r.length; i++) out += (i < limit ? rep : '') + r[i];
    if (r.length < limit) out += rep;
    return out;
  }
  let out = '';
  let rest = s;
  let count = 0;
  for (;;) {
    const i = rest.indexOf(old);
    if (i < 0 || (n >= 0 && count >= n)) break;
    out += rest.slice(0, i) + rep;
    rest = rest.slice(i + old.length);
    count++;
  }
  return out + rest;
}

/** Go's strings.SplitN (n < 0: all; n == 0: none), splitting into code points for an empty separator. */
export function splitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const r = runes(s);
    if (n < 0 || n >= r.length) return r;
    return [...r.slice(0, n - 1), r.slice(n - 1).join('')];
  }
  const parts = s.split(sep);
  if (n < 0 || parts.length <= n) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

export function substring(s: string, start: number, end?: number): string {
  const r = runes(s);
  if (end === undefined) {
    if (start < 0 || start > r.length) celError(`index out of range: ${start}`);
    return r.slice(start).join('');
  }
  if (start > end) celError(`invalid substring range. start: ${start}, end: ${end}`);
  if (start < 0 || start > r.length) celError(`index out of range: ${start}`);
  if (end < 0 || end > r.length) celError(`index out of range: ${end}`);
  return r.slice(start, end).join('');
}

/** Go's strings.TrimSpace (Unicode White_Space). */
export const trimSpace = (s: string): string => s.replace(/^[\s\u0085]+|[\s\u0085]+$/gu, '');

/** strings.quote: a double-quoted CEL string literal. */
export function quote(s: string): string {
  let out = '';
  for (const c of s) {
    switch (c) {
      case '\x07': out += '\\a'; break;
      case '\b': out += '\\b'; break;
      case '\f': out += '\\f'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\t': out += '\\t'; break;
      case '\v': out += '\\v'; break;
      case '\\': out += '\\\\'; break;
      case '"': out += '\\"'; break;
      default: out += c;
    }
  }
  return `"${out}"`;
}

function celTypeName(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Map) return 'map';
  if (v instanceof CelObject) return v.constructor.name;
  if (v !== null && typeof v === 'object' && 'celTypeName' in v) return String((v as { celTypeName: string }).celTypeName);
  return 'map';
}

const goQ = (s: string): string => JSON.stringify(s);

/** A double as Go's %g-free CEL rendering (`string(1.5)`). */
export function formatDouble(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(d) && Math.abs(d) < 1e21) return String(d);
  const s = String(d);
  return s.includes('e') ? s.replace(/e([+-])(\d)$/, 'e$10$2') : s;
}

function timestampString(d: Date): string {
  return d.toISOString().replace(/\.000Z$/, 'Z');
}

function formatString(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (v instanceof UnsignedInt) return String(v.valueOf());
  if (typeof v === 'number') return formatDouble(v);
  if (v instanceof Date) return timestampString(v);
  if (v instanceof Duration) return `${formatDurationSeconds(v)}`;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v) || v instanceof Set) return formatList([...v]);
  if (v instanceof Map) return formatMap(v);
  return celError(`error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${celTypeName(v)}`);
}

function formatDurationSeconds(d: Duration): string {
  const ns = d.seconds * 1000000000n + BigInt(d.nanos);
  const whole = ns / 1000000000n;
  const frac = (ns < 0n ? -ns : ns) % 1000000000n;
  return frac === 0n ? `${whole}s` : `${whole}.${String(frac).padStart(9, '0').replace(/0+$/, '')}s`;
}

function literal(v: unknown): string {
  if (v instanceof Date) return `timestamp(${goQ(timestampString(v))})`;
  if (v instanceof Duration) return `duration(${goQ(formatDurationSeconds(v))})`;
  if (typeof v === 'number') return Number.isFinite(v) ? v.toFixed(6) : goQ(formatDouble(v));
  if (typeof v === 'string') return goQ(v);
  if (v instanceof Uint8Array) return `b${goQ(Buffer.from(v).toString('utf8'))}`;
  return formatString(v);
}

function formatList(items: unknown[]): string {
  return `[${items.map(literal).join(', ')}]`;
}

function formatMap(m: Map<unknown, unknown>): string {
  const pairs = [...m].map(([k, v]) => [typeof k === 'string' ? goQ(k) : String(k), literal(v)] as const);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `{${pairs.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

function fixed(v: unknown, precision: number, clause: 'f' | 'e'): string {
  let d: number;
  if (typeof v === 'number') d = v;
  else if (typeof v === 'string' && (v === 'NaN' || v === 'Infinity' || v === '-Infinity')) d = Number(v);
  else {
    const kind = clause === 'f' ? 'fixed-point' : 'scientific';
    return celError(`error during formatting: ${kind} clause can only be used on doubles, was given ${celTypeName(v)}`);
  }
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? '∞' : '-∞';
  if (clause === 'e') return d.toExponential(precision).replace(/e([+-])(\d)$/, 'e$10$2');
  const s = d.toFixed(precision);
  const [int, frac] = s.split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac !== undefined ? `${grouped}.${frac}` : grouped;
}

/** `<string>.format(<list>)` as cel-go's stringFormatter (locale en_US). */
export function format(fmt: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  let i = 0;
  while (i < fmt.length) {
    if (fmt[i] !== '%') {
      out += fmt[i];
      i++;
      continue;
    }
    if (fmt[i + 1] === '%') {
      out += '%';
      i += 2;
      continue;
    }
    if (argIndex >= args.length) celError(`index ${argIndex} out of range`);
    if (i + 1 >= fmt.length) celError('unexpected end of string');
    const arg = args[argIndex];
    let j = i + 1;
    let precision: number | undefined;
    if (fmt[j] === '.') {
      j++;
      let digits = '';
      while (j < fmt.length && /[0-9]/.test(fmt[j]!)) digits += fmt[j++];
      if (j >= fmt.length) celError('could not parse formatting clause: error while parsing precision: could not find end of precision specifier');
      precision = Number(digits);
    }
    const clause = fmt[j]!;
    j++;
    let val: string;
    switch (clause) {
      case 's':
        val = formatString(arg);
        break;
      case 'd':
        if (typeof arg === 'bigint') val = String(arg);
        else if (arg instanceof UnsignedInt) val = String(arg.valueOf());
        else return celError(`error during formatting: decimal clause can only be used on integers, was given ${celTypeName(arg)}`);
        break;
      case 'f':
      case 'e':
        val = fixed(arg, precision ?? 6, clause);
        break;
      case 'b':
        if (typeof arg === 'bigint') val = arg.toString(2);
        else if (arg instanceof UnsignedInt) val = arg.valueOf().toString(2);
        else if (typeof arg === 'boolean') val = arg ? '1' : '0';
        else return celError(`error during formatting: only integers and bools can be formatted as binary, was given ${celTypeName(arg)}`);
        break;
      case 'x':
      case 'X': {
        if (typeof arg === 'bigint') val = arg < 0n ? `-${(-arg).toString(16)}` : arg.toString(16);
        else if (arg instanceof UnsignedInt) val = arg.valueOf().toString(16);
        else if (typeof arg === 'string') val = Buffer.from(arg, 'utf8').toString('hex');
        else if (arg instanceof Uint8Array) val = Buffer.from(arg).toString('hex');
        else return celError(`error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ${celTypeName(arg)}`);
        if (clause === 'X') val = val.toUpperCase();
        break;
      }
      case 'o':
        if (typeof arg === 'bigint') val = arg < 0n ? `-${(-arg).toString(8)}` : arg.toString(8);
        else if (arg instanceof UnsignedInt) val = arg.valueOf().toString(8);
        else return celError(`error during formatting: octal clause can only be used on integers, was given ${celTypeName(arg)}`);
        break;
      default:
        return celError(`could not parse formatting clause: unrecognized formatting clause "${clause}"`);
    }
    out += val;
    i = j;
    argIndex++;
  }
  return out;
}

export { formatDuration };

class StringsNamespace {}

export const stringsLibrary: CelLibrary = {
  name: 'strings',
  functions: ['charAt', 'indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'replace', 'split', 'substring', 'trim', 'join', 'format', 'quote'],
  declare(env: Environment) {
    env
      .registerFunction('string.charAt(int): string', (s: string, i: bigint) => charAt(s, num(i)))
      .registerFunction('string.replace(string, string): string', (s: string, o: string, n: string) => replaceN(s, o, n, -1))
      .registerFunction('string.replace(string, string, int): string', (s: string, o: string, n: string, c: bigint) => replaceN(s, o, n, num(c)))
      .registerFunction('string.format(list): string', (s: string, args: unknown[]) => format(s, [...args]))
      .registerType('StringsNamespace', StringsNamespace)
      .registerConstant('strings', 'StringsNamespace', new StringsNamespace())
      .registerFunction('StringsNamespace.quote(string): string', (_: unknown, s: string) => quote(s));
  },
  overrides: {
    'string.indexOf/1': (s, [sub]) => BigInt(indexOfOffset(s as string, sub as string, 0)),
    'string.indexOf/2': (s, [sub, off]) => BigInt(indexOfOffset(s as string, sub as string, num(off))),
    'string.lastIndexOf/1': (s, [sub]) => {
      const r = runes(s as string);
      return BigInt(sub === '' ? r.length : lastIndexOfOffset(s as string, sub as string, r.length - 1));
    },
    'string.lastIndexOf/2': (s, [sub, off]) => BigInt(lastIndexOfOffset(s as string, sub as string, num(off))),
    'string.lowerAscii/0': (s) => asciiMap(s as string, (c) => c.toLowerCase()),
    'string.upperAscii/0': (s) => asciiMap(s as string, (c) => c.toUpperCase()),
    'string.split/1': (s, [sep]) => splitN(s as string, sep as string, -1),
    'string.split/2': (s, [sep, n]) => splitN(s as string, sep as string, num(n)),
    'string.substring/1': (s, [start]) => substring(s as string, num(start)),
    'string.substring/2': (s, [start, end]) => substring(s as string, num(start), num(end)),
    'string.trim/0': (s) => trimSpace(s as string),
    'list.join/0': (l) => joinList(l as unknown[], ''),
    'list.join/1': (l, [sep]) => joinList(l as unknown[], sep as string),
  },
};

function joinList(l: unknown[], sep: string): string {
  for (const x of l) if (typeof x !== 'string') celError(`join: invalid input: ${String(x)}`);
  return (l as string[]).join(sep);
}
