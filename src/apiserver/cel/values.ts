/**
 * JSON values as CEL values (k8s.io/apiserver/pkg/cel/common/values.go
 * UnstructuredToVal): integers as bigint, numbers as double, date-time
 * strings as timestamps, objects as instances of their declared type,
 * `additionalProperties` objects as maps, and lists that remember their
 * x-kubernetes-list-type so that `==` and `+` follow Kubernetes: a set is
 * equal to any ordering of its members, a map list is equal to any
 * ordering of its entries, and `+` unions sets and merges map lists by key.
 *
 * Conversion is lazy and shallow: an object is wrapped, not copied, and a
 * field is converted when an expression reads it (then remembered by the
 * wrapper). Objects without a schema stay the plain JSON objects they are
 * (the engine treats them as maps); their values are converted as they
 * are read (`fromJsonDyn`).
 */
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { Optional } from '@marcbachmann/cel-js';
import type { DeclType } from './types.js';

type Json = Record<string, unknown>;

/**
 * A JSON object typed by an object DeclType. The engine tells object types
 * apart by constructor, so every DeclType has its own subclass
 * (`objectClassOf`). Objects read as shared: never mutate `json`.
 */
export class CelObject {
  #memo: Map<string, unknown> | undefined;
  constructor(
    readonly json: Json,
    readonly decl: DeclType,
  ) {}

  /** The value of a field by its CEL (escaped) name; undefined when absent. */
  field(name: string): unknown {
    const memo = this.#memo;
    if (memo?.has(name)) return memo.get(name);
    const f = this.decl.fields?.get(name);
    const raw = f ? this.json[f.property] : undefined;
    if (raw === undefined) return undefined;
    const v = toCel(raw, f!.type);
    (this.#memo ??= new Map()).set(name, v);
    return v;
  }

  /** Whether the field is present (set, possibly to null). */
  has(name: string): boolean {
    const f = this.decl.fields?.get(name);
    return !!f && this.json[f.property] !== undefined;
  }

  /** The present declared fields, by CEL name. */
  *entries(): IterableIterator<[string, unknown]> {
    for (const [name, f] of this.decl.fields ?? []) {
      if (this.json[f.property] !== undefined) yield [name, this.field(name)];
    }
  }

  /** Sizer: the number of properties of the object. */
  get size(): number {
    return Object.keys(this.json).length;
  }
}

export type CelObjectClass = new (json: Json, decl: DeclType) => CelObject;

const classes = new WeakMap<DeclType, CelObjectClass>();

/** The class whose instances are values of object DeclType `t` (created on first use). */
export function objectClassOf(t: DeclType): CelObjectClass {
  let c = classes.get(t);
  if (!c) {
    c = class extends CelObject {};
    Object.defineProperty(c, 'name', { value: t.name });
    classes.set(t, c);
  }
  return c;
}

/** The DeclType of an object value made by toCel, if any. */
export function celDeclOf(v: unknown): DeclType | undefined {
  return v instanceof CelObject ? v.decl : undefined;
}

/** List semantics of a list value: x-kubernetes-list-type and, for map lists, its key properties. */
export interface ListSemantics {
  readonly listType: 'set' | 'map';
  /** Map-list keys: JSON property names. */
  readonly keys: readonly string[];
}

const listSemantics = new WeakMap<readonly unknown[], ListSemantics>();

export function listSemanticsOf(v: unknown): ListSemantics | undefined {
  return Array.isArray(v) ? listSemantics.get(v) : undefined;
}

/** Converts a JSON value to a CEL value typed by `t` (dyn when absent). */
export function toCel(v: unknown, t?: DeclType): unknown {
  if (v === null || v === undefined) return null;
  if (!t || (t.celType.kind === 'primitive' && t.celType.name === 'dyn')) return fromJsonDyn(v);
  if (t.fields) {
    if (typeof v !== 'object' || Array.isArray(v)) return fromJsonDyn(v);
    return new (objectClassOf(t))(v as Json, t);
  }
  if (t.key && t.elem) {
    if (typeof v !== 'object' || Array.isArray(v)) return fromJsonDyn(v);
    const m = new Map<string, unknown>();
    for (const [k, x] of Object.entries(v as Json)) m.set(k, toCel(x, t.elem));
    return m;
  }
  if (t.elem) {
    if (!Array.isArray(v)) return fromJsonDyn(v);
    const out = v.map((x) => toCel(x, t.elem));
    if (t.listType === 'set' || t.listType === 'map') listSemantics.set(out, { listType: t.listType, keys: t.listMapKeys ?? [] });
    return out;
  }
  const ct = t.celType;
  if (ct.kind !== 'primitive') return fromJsonDyn(v);
  switch (ct.name) {
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : fromJsonDyn(v);
    case 'double':
      return typeof v === 'number' ? v : fromJsonDyn(v);
    case 'bytes':
      return typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : fromJsonDyn(v);
    case 'timestamp': {
      if (typeof v !== 'string') return fromJsonDyn(v);
      const d = new Date(v);
      return Number.isNaN(d.getTime()) ? v : d;
    }
    case 'duration': {
      if (typeof v !== 'string') return fromJsonDyn(v);
      return parseGoDuration(v) ?? v;
    }
    default:
      return fromJsonDyn(v);
  }
}

/**
 * A JSON value without a schema: whole numbers as int, lists converted
 * one level, objects left as they are (plain objects are CEL maps; read
 * their values through fromJsonDyn too).
 */
export function fromJsonDyn(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(fromJsonDyn);
  return v;
}

/** True for a plain JSON object (a schemaless CEL map). */
export function isPlainMap(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
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
  if (v instanceof CelObject) return v.json;
  if (Array.isArray(v) || v instanceof Set) return [...v].map(fromCel);
  if (v instanceof Map) {
    const o: Json = {};
    for (const [k, x] of v) o[String(k)] = fromCel(x);
    return o;
  }
  if (isPlainMap(v)) {
    const o: Json = {};
    for (const [k, x] of Object.entries(v)) o[k] = fromCel(fromJsonDyn(x));
    return o;
  }
  if (typeof (v as { toString?: unknown }).toString === 'function' && (v as { celTypeName?: string }).celTypeName) return String(v);
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
  return durationFromNanos(total);
}

/** A Duration of a number of nanoseconds (seconds and nanos share the sign). */
export function durationFromNanos(ns: bigint): Duration {
  return new Duration(ns / 1000000000n, Number(ns % 1000000000n));
}

/** A Duration in nanoseconds. */
export function durationNanos(d: Duration): bigint {
  return d.seconds * 1000000000n + BigInt(d.nanos);
}

/** Go's time.Duration.String() of a duration. */
export function formatDuration(d: Duration): string {
  let ns = durationNanos(d);
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
 * CEL equality (cel-go's heterogeneous equality) with Kubernetes' list
 * semantics. Numbers compare across int, uint and double; values of
 * different types are unequal; maps and objects compare entry by entry.
 */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) {
    if (na === undefined || nb === undefined) return false;
    if (typeof na === 'number' && Number.isNaN(na)) return false;
    // eslint-disable-next-line eqeqeq
    return na == nb;
  }
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (isEquatable(a)) return a.celEquals(b);
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Duration) return b instanceof Duration && durationNanos(a) === durationNanos(b);
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof Optional) return b instanceof Optional && (a.hasValue() ? b.hasValue() && celEquals(a.value(), b.value()) : !b.hasValue());
  const la = listLike(a);
  const lb = listLike(b);
  if (la || lb) {
    if (!la || !lb) return false;
    return listsEqual(a as unknown[], la, b as unknown[], lb);
  }
  if (a instanceof CelObject || b instanceof CelObject) {
    if (!(a instanceof CelObject && b instanceof CelObject) || a.constructor !== b.constructor) return false;
    return objectsEqual(a, b);
  }
  const ma = mapEntries(a);
  const mb = mapEntries(b);
  if (ma && mb) {
    if (ma.size !== mb.size) return false;
    for (const [k, v] of ma) {
      if (!mb.has(k) || !celEquals(v, mb.get(k))) return false;
    }
    return true;
  }
  return false;
}

function objectsEqual(a: CelObject, b: CelObject): boolean {
  const ka = Object.keys(a.json);
  if (ka.length !== Object.keys(b.json).length) return false;
  const byProperty = new Map<string, string>();
  for (const [name, f] of a.decl.fields ?? []) byProperty.set(f.property, name);
  for (const k of ka) {
    if (!(k in b.json)) return false;
    const name = byProperty.get(k);
    const x = name !== undefined ? a.field(name) : fromJsonDyn(a.json[k]);
    const y = name !== undefined ? b.field(name) : fromJsonDyn(b.json[k]);
    if (!celEquals(x, y)) return false;
  }
  return true;
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

/** The entries of a map value (Map or plain JSON object, values converted). */
function mapEntries(v: object): Map<unknown, unknown> | undefined {
  if (v instanceof Map) return v;
  if (isPlainMap(v)) {
    const m = new Map<unknown, unknown>();
    for (const [k, x] of Object.entries(v)) m.set(k, fromJsonDyn(x));
    return m;
  }
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

/** The identity of a map-list entry: its key properties (JSON property names). */
export function mapListKey(item: unknown, keys: readonly string[]): string {
  const get = (k: string): unknown => {
    if (item instanceof CelObject) return item.json[k];
    if (item instanceof Map) return fromCel(item.get(k));
    if (isPlainMap(item)) return item[k];
    return undefined;
  };
  return JSON.stringify(keys.map((k) => get(k) ?? null));
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
  if (typeof v === 'string') {
    let n = 0;
    for (const _ of v) n++;
    return n;
  }
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  if (v instanceof CelObject) return v.size;
  if (v instanceof Optional && v.hasValue()) return actualSize(v.value());
  if (v !== null && typeof v === 'object' && typeof (v as { celSize?: () => number }).celSize === 'function') return (v as { celSize: () => number }).celSize();
  return 1;
}
