/**
 * Schema-driven conversion of a JSON object to protobuf message bytes: the
 * inverse of to-json.ts, producing the bytes kube-apiserver would send for
 * the Go struct that the JSON decodes to.
 *
 * Contract (gogo's generated Marshal of the k8s.io/api types, which this
 * mirrors; checked byte for byte against Go in to-proto.test.ts):
 * - fields in ascending field number, whatever the .proto order;
 * - a non-pointer scalar is always written, its zero value ("", 0, false)
 *   when the JSON leaves it out; a non-pointer message is always written,
 *   empty or holding its own zero fields (`spec: {}`, `creationTimestamp`);
 * - a Go pointer (`replicas`, `securityContext`, `deletionTimestamp`) is
 *   written only when the JSON holds a non-null value, zero included;
 * - `[]byte` (bytes) is written when present, even empty (Go's non-nil);
 * - repeated fields: one field per element, scalars unpacked; nothing for
 *   an absent or empty list;
 * - maps: one entry message per key in Go's byte-wise sorted key order,
 *   the key always written, string and message values always, bytes values
 *   when not null;
 * - `json:",inline"` fields take their fields from the parent JSON object;
 * - well-known types: Time (`{seconds, nanos: 0}`, empty when zero or
 *   null), MicroTime (nanos kept), Duration (nanoseconds), IntOrString
 *   (type, intVal, strVal, all written), Quantity (its string, "0" when
 *   absent), RawExtension and FieldsV1 (the JSON text they hold, Go's
 *   escaping), Go slice types carried as messages (Verbs, ExtraValue: the
 *   JSON array becomes the message's repeated `items`).
 * JSON fields the message does not know are dropped, as Go's decoder does.
 *
 * Where the bytes can still differ from kube-apiserver's, because the JSON
 * no longer holds what Go would: RawExtension/FieldsV1 carry the exact text
 * Go received, we write compact JSON (equal for compact text such as
 * managedFields); Quantity strings are written as the JSON holds them,
 * where Go writes the canonical form (`1000m` becomes `1`); Time is
 * whole seconds in both.
 *
 * Each message gets a generated encoder (compileMessage); the schema file
 * is the only input to the generated code.
 */
import { stringifyAsGo } from '../go-json.js';
import { FieldFlag, isScalar, isSliceMessage, messageSpec, protoSchema, type FieldType, type ScalarType } from './schema.js';
import { wellKnown } from './to-json.js';
import { ReverseWriter } from './writer.js';

/** An object that cannot be written as the message asked for (a kind or message without schema). */
export class ProtoEncodeError extends Error {
  override name = 'ProtoEncodeError';
}

type EncodeFn = (w: ReverseWriter, value: unknown) => void;

/** The encoder of one message type; `fn` compiles itself on first use (types may be recursive). */
interface Encoder {
  fn: EncodeFn;
}

/** What a map field's generic writer needs. */
interface MapPlan {
  key: number;
  keyType: ScalarType;
  valueType: ScalarType | string;
  /** Set for message values. */
  value?: Encoder;
}

function wireTypeOf(t: FieldType): number {
  if (Array.isArray(t) || !isScalar(t)) return 2;
  switch (t) {
    case 'string':
    case 'bytes':
      return 2;
    case 'fixed32':
    case 'sfixed32':
    case 'float':
      return 5;
    case 'fixed64':
    case 'sfixed64':
    case 'double':
      return 1;
    default:
      return 0;
  }
}

const encoders = new Map<string, Encoder>();
let encodersFor: unknown;

function encoderOf(type: string): Encoder {
  const schema = protoSchema();
  if (encodersFor !== schema) {
    encoders.clear();
    encodersFor = schema;
  }
  let e = encoders.get(type);
  if (e) return e;
  const shell: Encoder = { fn: wellKnownEncoders[type] ?? ((w, v) => {
    shell.fn = compileMessage(type);
    shell.fn(w, v);
  }) };
  encoders.set(type, shell);
  return shell;
}

const wellKnownEncoders: Record<string, EncodeFn> = {
  [wellKnown.time]: (w, v) => writeTime(w, v, false),
  [wellKnown.microTime]: (w, v) => writeTime(w, v, true),
  [wellKnown.duration]: (w, v) => {
    w.varint(typeof v === 'string' ? parseGoDuration(v) : typeof v === 'number' ? v : 0);
    w.key(0x08);
  },
  [wellKnown.intOrString]: (w, v) => {
    const isStr = typeof v === 'string';
    w.string(isStr ? v : '');
    w.key(0x1a);
    w.varint(isStr ? 0 : toInt(v));
    w.key(0x10);
    w.varint(isStr ? 1 : 0);
    w.key(0x08);
  },
  [wellKnown.quantity]: (w, v) => {
    w.string(typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '0');
    w.key(0x0a);
  },
  [wellKnown.rawExtension]: writeRaw,
  [wellKnown.fieldsV1]: writeRaw,
};

function writeRaw(w: ReverseWriter, v: unknown): void {
  if (v === undefined || v === null) return;
  w.string(stringifyAsGo(v));
  w.key(0x0a);
}

const empty: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** The JSON object to read fields from: `{}` for null or a non-object, `{items}` for a Go slice type's array. */
function objectOf(value: unknown, sliceField: string | null): Record<string, unknown> {
  if (sliceField !== null && Array.isArray(value)) return { [sliceField]: value };
  return empty;
}

const helpers = { objectOf, toInt, toStr, bytesOf, writeMap, writeScalar };

/**
 * Generates the encoder of one message: its fields unrolled in descending
 * number with direct property reads, which V8 runs several times faster
 * than a loop over a field table. Names and types come from the schema
 * file; names are embedded as JSON string literals.
 */
function compileMessage(type: string): EncodeFn {
  const spec = messageSpec(type);
  if (!spec) {
    return () => {
      throw new ProtoEncodeError(`no protobuf schema for message ${type}`);
    };
  }
  const fields = [...spec.byNumber.values()].sort((a, b) => b[0] - a[0]);
  const refs: Encoder[] = [];
  const maps: MapPlan[] = [];
  const ref = (t: string): string => {
    refs.push(encoderOf(t));
    return `R[${refs.length - 1}]`;
  };
  const slice = isSliceMessage(type) && fields.length === 1 && (fields[0]![3] & FieldFlag.repeated) !== 0 ? fields[0]![1] : null;
  const lines: string[] = [
    'let obj = value;',
    `if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) obj = H.objectOf(value, ${JSON.stringify(slice)});`,
    'let v, m;',
  ];
  const one = (t: ScalarType | string, x: string): string => {
    if (!isScalar(t)) return `m = w.written(); ${ref(t)}.fn(w, ${x}); w.uvarint(w.written() - m);`;
    switch (t) {
      case 'string':
        return `w.string(typeof ${x} === 'string' ? ${x} : H.toStr(${x}));`;
      case 'bytes':
        return `w.lenBytes(H.bytesOf(${x}));`;
      case 'bool':
        return `w.byte(${x} === true || ${x} === 'true' ? 1 : 0);`;
      case 'int32':
        return `w.varint(typeof ${x} === 'number' ? ${x} | 0 : H.toInt(${x}) | 0);`;
      case 'int64':
      case 'enum':
        return `w.varint(Number.isInteger(${x}) ? ${x} : H.toInt(${x}));`;
      default:
        return `H.writeScalar(w, ${JSON.stringify(t)}, ${x});`;
    }
  };
  for (const [no, name, t, flags] of fields) {
    const key = (no << 3) | wireTypeOf(t);
    const prop = `obj[${JSON.stringify(name)}]`;
    if (Array.isArray(t)) {
      maps.push({ key, keyType: t[1], valueType: t[2], value: isScalar(t[2]) ? undefined : encoderOf(t[2]) });
      lines.push(`v = ${prop}; if (v !== null && typeof v === 'object' && !Array.isArray(v)) H.writeMap(w, M[${maps.length - 1}], v);`);
      continue;
    }
    if (flags & FieldFlag.repeated) {
      lines.push(`v = ${prop}; if (Array.isArray(v)) for (let j = v.length - 1; j >= 0; j--) { const x = v[j]; ${one(t, 'x')} w.key(${key}); }`);
      continue;
    }
    lines.push(`v = ${flags & FieldFlag.inline ? 'obj' : prop};`);
    const write = `${one(t, 'v')} w.key(${key});`;
    if (flags & FieldFlag.sliceWrapper) lines.push(`if (Array.isArray(v)) { ${write} }`);
    // nil pointers and nil []byte are not written; every other zero value is.
    else if (flags & FieldFlag.pointer || t === 'bytes') lines.push(`if (v !== undefined && v !== null) { ${write} }`);
    else lines.push(write);
  }
  const factory = new Function('H', 'R', 'M', `return function encode(w, value) {\n  ${lines.join('\n  ')}\n};`) as (h: typeof helpers, r: Encoder[], m: MapPlan[]) => EncodeFn;
  return factory(helpers, refs, maps);
}

/** The message bytes of `value` as message `type`. */
export function jsonToMessage(type: string, value: unknown): Uint8Array {
  const w = new ReverseWriter();
  writeMessageBody(w, type, value);
  return w.result();
}

/** Writes the fields of `value` as message `type` (no key, no length). */
export function writeMessageBody(w: ReverseWriter, type: string, value: unknown): void {
  encoderOf(type).fn(w, value);
}

function writeMap(w: ReverseWriter, f: MapPlan, m: Record<string, unknown>): void {
  const keys = Object.keys(m);
  if (keys.length === 0) return;
  sortKeys(keys, f.keyType);
  const keyKey = (1 << 3) | wireTypeOf(f.keyType);
  const valueKey = (2 << 3) | wireTypeOf(f.valueType);
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i]!;
    const v = m[k];
    const mark = w.written();
    if (f.value) {
      const vm = w.written();
      f.value.fn(w, v);
      w.uvarint(w.written() - vm);
      w.key(valueKey);
    } else if (f.valueType !== 'bytes' || (v !== null && v !== undefined)) {
      writeScalar(w, f.valueType as ScalarType, v);
      w.key(valueKey);
    }
    writeScalar(w, f.keyType, f.keyType === 'string' ? k : Number(k));
    w.key(keyKey);
    w.uvarint(w.written() - mark);
    w.key(f.key);
  }
}

/** Go's sortkeys: strings by their UTF-8 bytes, numbers by value. */
function sortKeys(keys: string[], t: ScalarType): void {
  if (keys.length < 2) return;
  if (t !== 'string') {
    keys.sort((a, b) => Number(a) - Number(b));
    return;
  }
  keys.sort();
  // UTF-16 order equals UTF-8 byte order except around surrogate pairs.
  if (keys.some((k) => /[\ud800-\uffff]/.test(k))) keys.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

function toInt(v: unknown): number {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }
  return 0;
}

function bytesOf(v: unknown): Uint8Array {
  return typeof v === 'string' ? Buffer.from(v, 'base64') : v instanceof Uint8Array ? v : new Uint8Array(0);
}

function toStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') return stringifyAsGo(v);
  return String(v);
}

function writeScalar(w: ReverseWriter, t: ScalarType, v: unknown): void {
  switch (t) {
    case 'string':
      w.string(toStr(v));
      return;
    case 'bytes':
      w.lenBytes(bytesOf(v));
      return;
    case 'bool':
      w.byte(v === true || v === 'true' ? 1 : 0);
      return;
    case 'int32': {
      // Go: uint64(int32) sign-extends.
      w.varint(toInt(v) | 0);
      return;
    }
    case 'enum':
    case 'int64':
      w.varint(toInt(v));
      return;
    case 'uint32':
      w.uvarint(toInt(v) >>> 0);
      return;
    case 'uint64':
      w.uvarint(Math.max(0, toInt(v)));
      return;
    case 'sint32': {
      const n = toInt(v) | 0;
      w.uvarint(((n << 1) ^ (n >> 31)) >>> 0);
      return;
    }
    case 'sint64': {
      const n = BigInt(toInt(v));
      w.varint64((n << 1n) ^ (n >> 63n));
      return;
    }
    case 'fixed32':
    case 'sfixed32':
      w.fixed32(toInt(v), t === 'sfixed32');
      return;
    case 'fixed64':
    case 'sfixed64':
      w.fixed64(toInt(v), t === 'sfixed64');
      return;
    case 'float':
      w.float(typeof v === 'number' ? v : Number(v) || 0);
      return;
    case 'double':
      w.double(typeof v === 'number' ? v : Number(v) || 0);
      return;
  }
}

/** Go's zero time.Time as Unix seconds (0001-01-01T00:00:00Z). */
const goZeroTimeSeconds = -62135596800;

/** metav1.Time / MicroTime: nothing when zero, else Timestamp{seconds, nanos} (Time drops nanos). */
function writeTime(w: ReverseWriter, value: unknown, micro: boolean): void {
  if (typeof value !== 'string') return;
  let seconds: number;
  let nanos = 0;
  const whole = wholeSecondsUtc(value);
  if (whole !== undefined) seconds = whole;
  else {
    const t = parseRfc3339(value);
    if (!t) return;
    seconds = t.seconds;
    nanos = t.nanos;
  }
  if (seconds === goZeroTimeSeconds && nanos === 0) return;
  w.varint(micro ? nanos : 0);
  w.key(0x10);
  w.varint(seconds);
  w.key(0x08);
}

/** Seconds of the common `2024-01-02T03:04:05Z` form (memoized: objects repeat their timestamps), else undefined. */
const secondsOf = new Map<string, number>();
function wholeSecondsUtc(s: string): number | undefined {
  if (s.length !== 20 || s.charCodeAt(19) !== 90 || s.charCodeAt(10) !== 84 || s.charCodeAt(4) !== 45) return undefined;
  let v = secondsOf.get(s);
  if (v !== undefined) return v;
  const t = parseRfc3339(s);
  if (!t) return undefined;
  if (secondsOf.size >= 4096) secondsOf.clear();
  secondsOf.set(s, t.seconds);
  return t.seconds;
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** RFC 3339 (as Go's time.Parse(time.RFC3339) reads it) to Unix seconds and nanoseconds. */
export function parseRfc3339(s: string): { seconds: number; nanos: number } | undefined {
  const m = rfc3339.exec(s);
  if (!m) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  let seconds = Math.floor(d.getTime() / 1000);
  if (Number.isNaN(seconds)) return undefined;
  if (!m[8]) {
    const off = (Number(m[10]) * 60 + Number(m[11])) * 60;
    seconds += m[9] === '+' ? -off : off;
  }
  const nanos = m[7] ? Number(m[7].padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

const durationUnits: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration (`1h2m3.5s`, `150ms`, `-1m`) in nanoseconds; 0 for what Go would refuse. */
export function parseGoDuration(s: string): number {
  const m = /^([-+]?)(.*)$/.exec(s)!;
  const neg = m[1] === '-';
  const rest = m[2]!;
  if (rest === '0') return 0;
  if (rest === '') return 0;
  const part = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < rest.length) {
    part.lastIndex = at;
    const p = part.exec(rest);
    if (!p || (p[1] === '' && (p[2] ?? '') === '')) return 0;
    const unit = durationUnits[p[3]!]!;
    total += Number(p[1] || '0') * unit;
    if (p[2]) total += Math.trunc(Number(`0.${p[2]}`) * unit);
    at = part.lastIndex;
  }
  return neg ? -total : total;
}
