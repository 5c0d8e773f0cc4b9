/**
 * A small, strict command-line flag parser shared by every kcm command, with
 * the syntax and error wording of Go's spf13/pflag (what kube components use):
 *
 *   --name=value  --name value  -n value  -n=value  -nvalue
 *   --flag  --flag=false            (booleans never consume the next word)
 *   --list=a,b --list c             (lists: comma-separated, repeatable, appended)
 *   --timeout=1h30m                 (Go durations: ns us µs ms s m h; value in ms)
 *   --                              (ends flags; the rest are positional)
 *
 * Errors are FlagError with pflag's one-line message (`unknown flag: --x`,
 * `invalid argument "x" for "--secure-port" flag: ...`); commands print it to
 * stderr and exit 1. `--help`/`-h` never fails: `parseFlags` reports it and
 * `flagUsage` renders help grouped by section, with defaults.
 */

export type FlagDef =
  | (FlagCommon & { type: 'string'; default: string; /** Allowed values (checked on parse). */ oneOf?: readonly string[] })
  | (FlagCommon & { type: 'bool'; default: boolean })
  | (FlagCommon & { type: 'int'; default: number })
  | (FlagCommon & { type: 'float'; default: number })
  /** Milliseconds. */
  | (FlagCommon & { type: 'duration'; default: number })
  | (FlagCommon & { type: 'stringList'; default: readonly string[] });

interface FlagCommon {
  usage: string;
  /** One-letter shorthand (`v` for `-v`). */
  short?: string;
  /** Help section title (`Generic`, `Secure serving`, ...); default `Generic`. */
  section?: string;
  /** Type name shown in help instead of the default one (`ip`, `cidr`, `level`). */
  typeName?: string;
  /** Hidden from help (still accepted). */
  hidden?: boolean;
}

export type FlagSpec = Record<string, FlagDef>;

type ValueOf<D extends FlagDef> = D extends { type: 'bool' }
  ? boolean
  : D extends { type: 'int' | 'float' | 'duration' }
    ? number
    : D extends { type: 'stringList' }
      ? string[]
      : string;

export type FlagValues<S extends FlagSpec> = { [K in keyof S]: ValueOf<S[K]> };

export interface ParsedFlags<S extends FlagSpec> {
  values: FlagValues<S>;
  /** Names of flags given on the command line (pflag's `Changed`). */
  changed: Set<keyof S & string>;
  /** Words that are not flags, in order. */
  positional: string[];
  /** `--help` or `-h` was given; values may be partial, print usage and exit 0. */
  help: boolean;
}

/** A command-line error, worded as pflag words it. */
export class FlagError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FlagError';
  }
}

/** The standard verbosity flags every kcm command takes (klog's `-v` and component-base's `--logging-format`). */
export const loggingFlags = {
  v: { type: 'int', short: 'v', default: 0, usage: 'number for the log level verbosity', section: 'Logs', typeName: 'Level' },
  'logging-format': {
    type: 'string',
    default: 'text',
    oneOf: ['text', 'json'],
    usage: 'Sets the log format. Permitted formats: "json", "text".',
    section: 'Logs',
  },
} as const satisfies FlagSpec;

/** Parses `args` against `spec`. Throws FlagError. */
export function parseFlags<S extends FlagSpec>(spec: S, args: readonly string[]): ParsedFlags<S> {
  const values: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(spec)) values[name] = def.type === 'stringList' ? [...def.default] : def.default;
  const byShort = new Map<string, string>();
  for (const [name, def] of Object.entries(spec)) if (def.short) byShort.set(def.short, name);
  const changed = new Set<string>();
  const positional: string[] = [];
  let help = false;

  const set = (name: string, raw: string): void => {
    const def = spec[name]!;
    const flagName = def.short ? `-${def.short}, --${name}` : `--${name}`;
    try {
      values[name] = convert(def, raw, changed.has(name) ? values[name] : undefined);
    } catch (err) {
      throw new FlagError(`invalid argument "${raw}" for "${flagName}" flag: ${(err as Error).message}`, { cause: err });
    }
    changed.add(name);
  };

  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--') && arg.length > 2) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const name = eq < 0 ? body : body.slice(0, eq);
      const def = spec[name];
      if (!def) {
        if (name === 'help') {
          help = true;
          continue;
        }
        throw new FlagError(`unknown flag: --${name}`);
      }
      if (eq >= 0) set(name, body.slice(eq + 1));
      else if (def.type === 'bool') set(name, 'true');
      else if (i + 1 < args.length) set(name, args[++i]!);
      else throw new FlagError(`flag needs an argument: --${name}`);
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1 && arg !== '-') {
      // Shorthands: -v=4, -v 4, -v4, and clusters of booleans (-ab).
      let rest = arg.slice(1);
      while (rest.length > 0) {
        const c = rest[0]!;
        const name = byShort.get(c);
        if (!name) {
          if (c === 'h') {
            help = true;
            break;
          }
          throw new FlagError(`unknown shorthand flag: '${c}' in ${arg}`);
        }
        const def = spec[name]!;
        const after = rest.slice(1);
        if (after.startsWith('=')) {
          set(name, after.slice(1));
          break;
        }
        if (def.type === 'bool') {
          set(name, 'true');
          rest = after;
          continue;
        }
        if (after.length > 0) set(name, after);
        else if (i + 1 < args.length) set(name, args[++i]!);
        else throw new FlagError(`flag needs an argument: '${c}' in ${arg}`);
        break;
      }
      continue;
    }
    positional.push(arg);
  }
  return { values: values as FlagValues<S>, changed: changed as Set<keyof S & string>, positional, help };
}

function convert(def: FlagDef, raw: string, previous: unknown): unknown {
  switch (def.type) {
    case 'string':
      if (def.oneOf && !def.oneOf.includes(raw)) {
        throw new Error(`must be one of ${def.oneOf.map((v) => `"${v}"`).join(', ')}`);
      }
      return raw;
    case 'bool':
      return parseBool(raw);
    case 'int':
      return parseInt64(raw);
    case 'float':
      return parseFloat64(raw);
    case 'duration':
      return parseDuration(raw);
    case 'stringList': {
      const items = raw === '' ? [] : raw.split(',').map((s) => s.trim());
      return [...((previous as string[] | undefined) ?? []), ...items];
    }
  }
}

/** Go's strconv.ParseBool. */
export function parseBool(s: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(s)) return false;
  throw new Error(`strconv.ParseBool: parsing "${s}": invalid syntax`);
}

/** Go's strconv.ParseInt(s, 0, 64) as far as JavaScript numbers stay exact. */
export function parseInt64(s: string): number {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (!m) throw new Error(`strconv.ParseInt: parsing "${s}": invalid syntax`);
  let digits = m[2]!.replace(/_/g, '');
  let base = 10;
  if (/^0[xX]/.test(digits)) (base = 16), (digits = digits.slice(2));
  else if (/^0[oO]/.test(digits)) (base = 8), (digits = digits.slice(2));
  else if (/^0[bB]/.test(digits)) (base = 2), (digits = digits.slice(2));
  else if (digits.length > 1 && digits.startsWith('0')) (base = 8), (digits = digits.slice(1));
  const big = BigInt(m[1] === '-' ? -1 : 1) * [...digits].reduce((acc, d) => acc * BigInt(base) + BigInt(parseInt(d, base)), 0n);
  if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new Error(`strconv.ParseInt: parsing "${s}": value out of range`);
  }
  return Number(big);
}

function parseFloat64(s: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) && !/^[+-]?(Inf|inf|NaN)$/.test(s)) {
    throw new Error(`strconv.ParseFloat: parsing "${s}": invalid syntax`);
  }
  return /inf/i.test(s) ? (s.startsWith('-') ? -Infinity : Infinity) : Number(s);
}

const durationUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration; returns milliseconds (fractions below 1 ms kept). */
export function parseDuration(s: string): number {
  const invalid = () => new Error(`time: invalid duration "${s}"`);
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw invalid();
  let total = 0;
  while (rest !== '') {
    const m = /^(\d+\.?\d*|\.\d+)([a-zµμ]*)/.exec(rest);
    if (!m || m[1] === '.') throw invalid();
    const unit = m[2]!;
    if (unit === '') throw new Error(`time: missing unit in duration "${s}"`);
    const scale = durationUnits[unit];
    if (scale === undefined) throw new Error(`time: unknown unit "${unit}" in duration "${s}"`);
    total += Number(m[1]) * scale;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** Go's time.Duration.String() for a value in milliseconds: `0s`, `500ms`, `15s`, `2m0s`, `1h30m0s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let v = Math.abs(ms);
  let out: string;
  if (v < 1) {
    const us = v * 1000;
    out = us < 1 ? `${trimFloat(us * 1000)}ns` : `${trimFloat(us)}µs`;
  } else if (v < 1000) {
    out = `${trimFloat(v)}ms`;
  } else {
    const h = Math.floor(v / 3_600_000);
    v -= h * 3_600_000;
    const m = Math.floor(v / 60_000);
    v -= m * 60_000;
    const sec = `${trimFloat(v / 1000)}s`;
    out = h > 0 ? `${h}h${m}m${sec}` : m > 0 ? `${m}m${sec}` : sec;
  }
  return neg ? `-${out}` : out;
}

function trimFloat(n: number): string {
  return String(Number(n.toFixed(9)));
}

function typeName(def: FlagDef): string {
  if (def.typeName !== undefined) return def.typeName;
  switch (def.type) {
    case 'string':
      return 'string';
    case 'bool':
      return '';
    case 'int':
      return 'int';
    case 'float':
      return 'float';
    case 'duration':
      return 'duration';
    case 'stringList':
      return 'strings';
  }
}

function defaultText(def: FlagDef): string | undefined {
  switch (def.type) {
    case 'string':
      return def.default === '' ? undefined : `"${def.default}"`;
    case 'bool':
      return def.default ? 'true' : undefined;
    case 'int':
    case 'float':
      return def.default === 0 ? undefined : String(def.default);
    case 'duration':
      return def.default === 0 ? undefined : formatDuration(def.default);
    case 'stringList':
      return def.default.length === 0 ? undefined : `[${def.default.join(',')}]`;
  }
}

/**
 * Help text: `usageLine`, then one block per section in first-seen order,
 * each flag as pflag prints it (`  -v, --v Level   usage (default ...)`).
 */
export function flagUsage(spec: FlagSpec, usageLine: string, description?: string): string {
  const sections = new Map<string, string[][]>();
  for (const [name, def] of Object.entries(spec)) {
    if (def.hidden) continue;
    const section = def.section ?? 'Generic';
    const head = `${def.short ? `-${def.short}, ` : '    '}--${name}${typeName(def) ? ' ' + typeName(def) : ''}`;
    const dflt = defaultText(def);
    const rows = sections.get(section) ?? [];
    rows.push([head, def.usage + (dflt !== undefined ? ` (default ${dflt})` : '')]);
    sections.set(section, rows);
  }
  let out = description ? `${description}\n\n` : '';
  out += `Usage:\n  ${usageLine}\n`;
  for (const [section, rows] of sections) {
    const width = Math.max(...rows.map((r) => r[0]!.length));
    out += `\n${section} flags:\n\n`;
    for (const [head, usage] of rows) out += `  ${head!.padEnd(width)}   ${usage}\n`;
  }
  return out;
}
