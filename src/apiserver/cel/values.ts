/**
 * JSON values as CEL values (k8s.io/apiserver/pkg/cel/common/values.go
 * UnstructuredToVal): integers as bigint, numbers as double, date-time
 * strings as timestamps, objects as instances of their declared type,
 * `additionalProperties` objects as maps, and lists that remember their
 * x-kubernetes-list-type so that `==` and `+` follow Kubernetes: a set is
 * equal to any ordering of its members, a map list is equal to any
 * ordering of its entries, and `+` unions sets and merges map lists by key.
 */
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { Optional } from '@marcbachmann/cel-js';
import type { DeclType } from './types.js';

/** The JavaScript class of an object DeclType's values (the engine tells types apart by constructor). */
export type CelObjectClass = new () => Record<string, unknown>;

const classes = new WeakMap<DeclType, CelObjectClass>();
const declOfInstance = new WeakMap<object, DeclType>();

/** Base of the generated classes; `celDeclOf(value)` names its DeclType. */
export class CelObject {}

/** The class whose instances are values of `t` (created on first use). */
export function objectClassOf(t: DeclType): CelObjectClass {
  let c = classes.get(t);
  if (!c) {
    c = class extends CelObject {} as unknown as CelObjectClass;
    Object.defineProperty(c, 'name', { value: t.name });
    classes.set(t, c);
  }
  return c;
}

/** The DeclType of an object value made by toCel, if any. */
export function celDeclOf(v: unknown): DeclType | undefined {
  return v !== null && typeof v === 'object' ? declOfInstance.get(v) : undefined;
}

/** List semantics of a list value: x-kubernetes-list-type and, for map lists, its escaped key fields. */
export interface ListSemantics {
  readonly listType: 'set' | 'map';
  readonly keys: readonly string[];
  readonly items?: DeclType;
}

const listSemantics = new WeakMap<readonly unknown[], ListSemantics>();

export function listSemanticsOf(v: unknown): ListSemantics | undefined {
  return Array.isArray(v) ? listSemantics.get(v) : undefined;
}

/** Converts a JSON value to a CEL value typed by `t` (dyn when absent). */
export function toCel(v: unknown, t?: DeclType): unknown {
  if (v === null || v === undefined) return null;
  if (!t || t.name === 'dyn' || t.celType.kind === 'primitive' && t.celType.name === 'dyn') return toCelDyn(v);
  const ct = t.celType;
  if (t.fields) {
    if (typeof v !== 'object' || Array.isArray(v)) return toCelDyn(v);
    const C = objectClassOf(t);
    const o = new C();
    const src = v as Record<string, unknown>;
    for (const f of t.fields.values()) {
      const fv = src[f.property];
      if (fv !== undefined) o[f.name] = toCel(fv, f.type);
    }
    declOfInstance.set(o, t);
    return o;
  }
  if (t.key && t.elem) {
    if (typeof v !== 'object' || Array.isArray(v)) return toCelDyn(v);
    const m = new Map<string, unknown>();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, toCel(x, t.elem));
    return m;
  }
  if (t.elem) {
    if (!Array.isArray(v)) return toCelDyn(v);
    const out = v.map((x) => toCel(x, t.elem));
    if (t.listType === 'set' || t.listType === 'map') {
      listSemantics.set(out, { listType: t.listType, keys: (t.listMapKeys ?? []).map((k) => k), items: t.elem });
    }
    return out;
  }
  if (ct.kind !== 'primitive') return toCelDyn(v);
  switch (ct.name) {
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : toCelDyn(v);
    case 'double':
      return typeof v === 'number' ? v : toCelDyn(v);
    case 'string':
    case 'bool':
      return v;
    case 'bytes':
      return typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : toCelDyn(v);
    case 'timestamp': {
      if (typeof v !== 'string') return toCelDyn(v);
      const d = new Date(v);
      return Number.isNaN(d.getTime()) ? v : d;
    }
    case 'duration': {
      if (typeof v !== 'string') return toCelDyn(v);
      const d = parseGoDuration(v);
      return d ?? v;
    }
    default:
      return toCelDyn(v);
  }
}

/** A JSON value without a schema: whole numbers as int, objects as maps. */
export function toCelDyn(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCelDyn);
  if (typeof v === 'object') {
    const m = new Map<string, unknown>();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, toCelDyn(x));
    return m;
  }
  return v;
}

/** A CEL value back as JSON (for messages and results); bigints become numbers. */
export function fromCel(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof UnsignedInt) return Number(v.valueOf());
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (v instanceof Duration) return formatDuration(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Optional) return v.hasValue() ? fromCel(v.value()) : null;
  if (Array.isArray(v) || v instanceof Set) return [...v].map(fromCel);
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) o[String(k)] = fromCel(x);
    return o;
  }
  if (typeof v === 'object') {
    const t = celDeclOf(v);
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[t?.fields?.get(k)?.property ?? k] = fromCel(x);
    return o;
  }
  return v;
}

/** Parses a Go duration string (`1h30m`, `-1.5s`, `300ms`) as the engine's Duration. */
export function parseGoDuration(s: string): Duration | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(s);
  if (!m && s !== '0') return undefined;
  if (s === '0') return new Duration(0n, 0);
  const neg = s.startsWith('-');
  const unitNs: Record<string, bigint> = { ns: 1n, us: 1000n, µs: 1000n, μs: 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n };
  let total = 0n;
  for (const part of s.replace(/^[-+]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    const [whole, frac = ''] = part[1]!.split('.');
    const unit = unitNs[part[2]!]!;
    total += BigInt(whole || '0') * unit;
    if (frac) total += (BigInt(frac.padEnd(18, '0').slice(0, 18)) * unit) / 10n ** 18n;
  }
  if (neg) total = -total;
  return new Duration(total / 1000000000n, Number(total % 1000000000n));
}

/** Go's time.Duration.String() of a duration. */
export function formatDuration(d: Duration): string {
  let ns = d.seconds * 1000000000n + BigInt(d.nanos);
  if (ns === 0n) return '0s';
  const neg = ns < 0n;
  if (neg) ns = -ns;
  let out: string;
  if (ns < 1000000000n) {
    const [unit, div] = ns < 1000n ? ['ns', 1n] : ns < 1000000n ? ['µs', 1000n] : ['ms', 1000000n];
    out = fracString(ns, div) + unit;
  } else {
    const h = ns / 3600000000000n;
    const rest = ns % 3600000000000n;
    const m = rest / 60000000000n;
    const sNs = rest % 60000000000n;
    out = `${h > 0n ? `${h}h` : ''}${h > 0n || m > 0n ? `${m}m` : ''}${fracString(sNs, 1000000000n)}s`;
  }
  return neg ? `-${out}` : out;
}

function fracString(v: bigint, div: bigint): string {
  const whole = v / div;
  const frac = v % div;
  if (frac === 0n) return String(whole);
  const digits = String(div).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Values with their own equality (quantities, IPs, CIDRs, URLs, semvers, formats). */
export interface CelEquatable {
  celEquals(other: unknown): boolean;
}

function isEquatable(v: unknown): v is CelEquatable {
  return v !== null && typeof v === 'object' && typeof (v as Partial<CelEquatable>).celEquals === 'function';
}

/**
 * CEL equality with Kubernetes' list semantics. Numbers compare across
 * int, uint and double; values of different types are unequal.
 */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) {
    if (na === undefined || nb === undefined) return false;
    // eslint-disable-next-line eqeqeq
    return na == nb;
  }
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (isEquatable(a)) return a.celEquals(b);
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Duration) return b instanceof Duration && a.seconds === b.seconds && a.nanos === b.nanos;
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof Optional) return b instanceof Optional && (a.hasValue() ? b.hasValue() && celEquals(a.value(), b.value()) : !b.hasValue());
  const la = listLike(a);
  const lb = listLike(b);
  if (la || lb) {
    if (!la || !lb) return false;
    return listsEqual(a as unknown[], la, b as unknown[], lb);
  }
  const ma = mapLike(a);
  const mb = mapLike(b);
  if (ma && mb) {
    if (ma.size !== mb.size) return false;
    for (const [k, v] of ma) {
      if (!mb.has(k) || !celEquals(v, mb.get(k))) return false;
    }
    return true;
  }
  if (ma || mb) return false;
  if (a instanceof CelObject || b instanceof CelObject) {
    if (a.constructor !== b.constructor) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    const bo = b as Record<string, unknown>;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && celEquals((a as Record<string, unknown>)[k], bo[k]));
  }
  return false;
}

function numeric(v: unknown): bigint | number | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UnsignedInt) return v.valueOf();
  return undefined;
}

function listLike(v: object): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (v instanceof Set) return [...v];
  return undefined;
}

function mapLike(v: object): Map<unknown, unknown> | undefined {
  if (v instanceof Map) return v;
  if (Object.getPrototypeOf(v) === Object.prototype) return new Map(Object.entries(v));
  return undefined;
}

function listsEqual(a: unknown[], la: unknown[], b: unknown[], lb: unknown[]): boolean {
  if (la.length !== lb.length) return false;
  const sem = listSemanticsOf(a) ?? listSemanticsOf(b);
  if (sem?.listType === 'set') {
    // every member of b is in a (sizes are equal and sets have no duplicates)
    return lb.every((x) => la.some((y) => celEquals(x, y)));
  }
  if (sem?.listType === 'map') {
    const byKey = new Map<string, unknown>();
    for (const x of la) byKey.set(mapListKey(x, sem.keys), x);
    return lb.every((x) => {
      const k = mapListKey(x, sem.keys);
      return byKey.has(k) && celEquals(byKey.get(k), x);
    });
  }
  return la.every((x, i) => celEquals(x, lb[i]));
}

/** The identity of a map-list entry: its key fields (JSON property names). */
export function mapListKey(item: unknown, keys: readonly string[]): string {
  const t = celDeclOf(item);
  const get = (k: string): unknown => {
    if (item instanceof Map) return item.get(k);
    if (item === null || typeof item !== 'object') return undefined;
    const f = t?.fields ? [...t.fields.values()].find((x) => x.property === k) : undefined;
    return (item as Record<string, unknown>)[f?.name ?? k];
  };
  return JSON.stringify(keys.map((k) => fromCel(get(k) ?? null)));
}

/** `a + b` of lists: concatenation, or set union / map-list merge when `a` is a set or map list. */
export function celListAdd(a: unknown[], b: unknown[]): unknown[] {
  const sem = listSemanticsOf(a);
  if (sem?.listType === 'set') {
    const out = [...a];
    for (const x of b) if (!out.some((y) => celEquals(x, y))) out.push(x);
    listSemantics.set(out, sem);
    return out;
  }
  if (sem?.listType === 'map') {
    const out = [...a];
    const at = new Map<string, number>();
    out.forEach((x, i) => at.set(mapListKey(x, sem.keys), i));
    for (const x of b) {
      const k = mapListKey(x, sem.keys);
      const i = at.get(k);
      if (i !== undefined) out[i] = x;
      else {
        at.set(k, out.length);
        out.push(x);
      }
    }
    listSemantics.set(out, sem);
    return out;
  }
  return [...a, ...b];
}

/** The size of a value as cel-go's cost tracker sees it (Sizer.Size(), else 1). */
export function actualSize(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  if (v instanceof Optional && v.hasValue()) return actualSize(v.value());
  if (v !== null && typeof v === 'object' && typeof (v as { celSize?: () => number }).celSize === 'function') return (v as { celSize: () => number }).celSize();
  return 1;
}
