/**
 * Schema-driven conversion of a protobuf message to the JSON object the API
 * server would store had the client sent JSON.
 *
 * Contract, following what Go's JSON encoding of the decoded struct means:
 * - a field absent on the wire is absent from the JSON;
 * - a Go pointer field present on the wire is kept even when zero
 *   (`replicas: 0`, `automountServiceAccountToken: false`, `emptyDir: {}`);
 * - a non-pointer field holding its zero value ("", 0, false, an empty
 *   message) is left out: Go treats absent and zero alike there, and the
 *   result then equals a manifest that did not set it;
 * - `json:",inline"` fields are merged into the parent object;
 * - well-known Kubernetes types become their JSON forms: Time and MicroTime
 *   (RFC 3339), Duration (`1m30s`), IntOrString, Quantity, RawExtension and
 *   FieldsV1 (the JSON they carry), bytes (base64);
 * - Go slice types carried as messages (Verbs, ExtraValue, also as map
 *   values) become their arrays, kept even empty when on the wire.
 * Unknown field numbers are skipped, as Go's unmarshal does.
 * The inverse, JSON to message bytes, is to-proto.ts.
 */
import { FieldFlag, isScalar, isSliceMessage, messageSpec, type FieldType, type ScalarType } from './schema.js';
import {
  WireError, WireReader, fixed32, fixed64ToVarint, float32, float64, readFields, toInt32, toInt64, toUint64, zigzag32, zigzag64,
  type Varint, type WireField,
} from './wire.js';

const meta = 'k8s.io.apimachinery.pkg.apis.meta.v1';
export const wellKnown = {
  time: `${meta}.Time`,
  microTime: `${meta}.MicroTime`,
  duration: `${meta}.Duration`,
  fieldsV1: `${meta}.FieldsV1`,
  intOrString: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
  quantity: 'k8s.io.apimachinery.pkg.api.resource.Quantity',
  rawExtension: 'k8s.io.apimachinery.pkg.runtime.RawExtension',
} as const;

/** A body that is not a valid message of the expected type. */
export class ProtoDecodeError extends Error {
  override name = 'ProtoDecodeError';
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Decodes `buf` as message `type` (full protobuf name) into its JSON value. */
export function messageToJson(type: string, buf: Uint8Array, path = ''): unknown {
  try {
    return decodeMessage(type, buf, path || type);
  } catch (err) {
    if (err instanceof ProtoDecodeError) throw err;
    if (err instanceof WireError) throw new ProtoDecodeError(`${path || type}: ${err.message}`, { cause: err });
    throw err;
  }
}

function decodeMessage(type: string, buf: Uint8Array, path: string): unknown {
  const special = decodeWellKnown(type, buf, path);
  if (special !== notSpecial) return special;
  const spec = messageSpec(type);
  if (!spec) throw new ProtoDecodeError(`${path}: no protobuf schema for message ${type}`);
  const values = new Map<number, unknown>();
  for (const f of readFields(buf)) {
    const fs = spec.byNumber.get(f.no);
    if (!fs) continue;
    const [, name, ftype, flags] = fs;
    const at = `${path}.${name}`;
    if (Array.isArray(ftype)) {
      if (f.wt !== 2) throw new ProtoDecodeError(`${at}: map entry with wire type ${f.wt}`);
      const m = (values.get(f.no) as Record<string, unknown> | undefined) ?? {};
      const [k, v] = decodeMapEntry(ftype, f.v, at);
      m[k] = v;
      values.set(f.no, m);
    } else if (flags & FieldFlag.repeated) {
      const arr = (values.get(f.no) as unknown[] | undefined) ?? [];
      if (isScalar(ftype) && f.wt === 2 && ftype !== 'string' && ftype !== 'bytes') {
        arr.push(...decodePacked(ftype, f.v, at));
      } else arr.push(decodeValue(ftype, f, at));
      values.set(f.no, arr);
    } else {
      values.set(f.no, decodeValue(ftype, f, at));
    }
  }
  const out: Record<string, unknown> = {};
  for (const [no, name, , flags] of spec.byNumber.values()) {
    if (!values.has(no)) continue;
    let v = values.get(no);
    if (flags & FieldFlag.sliceWrapper) v = (v as { items?: unknown[] } | undefined)?.items ?? [];
    // A wrapped Go slice on the wire is non-nil, even empty (`verbs: []`).
    if (!(flags & (FieldFlag.pointer | FieldFlag.repeated | FieldFlag.sliceWrapper)) && isZero(v)) continue;
    if (v === undefined) continue;
    if (flags & FieldFlag.inline && v !== null && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, v);
    else out[name] = v;
  }
  return out;
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

function decodeMapEntry(t: ['map', ScalarType, ScalarType | string], buf: Uint8Array, path: string): [string, unknown] {
  let key: unknown = '';
  let value: unknown;
  for (const f of readFields(buf)) {
    if (f.no === 1) key = decodeValue(t[1], f, path);
    else if (f.no === 2) value = decodeValue(t[2], f, `${path}[${String(key)}]`);
  }
  if (value === undefined) value = zeroOf(t[2]);
  // A Go slice type as map value (`extra: {k: [..]}`): the message's items.
  if (!isScalar(t[2]) && isSliceMessage(t[2])) value = (value as { items?: unknown[] } | undefined)?.items ?? [];
  return [String(key), value];
}

function zeroOf(t: string): unknown {
  if (!isScalar(t)) return decodeMessage(t, new Uint8Array(0), t) ?? null;
  if (t === 'string' || t === 'bytes') return '';
  if (t === 'bool') return false;
  return 0;
}

function decodeValue(t: FieldType, f: WireField, path: string): unknown {
  if (Array.isArray(t)) throw new ProtoDecodeError(`${path}: nested map`);
  if (!isScalar(t)) {
    if (f.wt !== 2) throw new ProtoDecodeError(`${path}: message with wire type ${f.wt}`);
    return decodeMessage(t, f.v, path);
  }
  switch (t) {
    case 'string':
      if (f.wt !== 2) break;
      return utf8.decode(f.v);
    case 'bytes':
      if (f.wt !== 2) break;
      return Buffer.from(f.v.buffer, f.v.byteOffset, f.v.length).toString('base64');
    case 'bool':
      if (f.wt !== 0) break;
      return f.v.lo !== 0 || f.v.hi !== 0;
    case 'int32':
    case 'enum':
      if (f.wt !== 0) break;
      return toInt32(f.v);
    case 'uint32':
      if (f.wt !== 0) break;
      return f.v.lo;
    case 'int64':
      if (f.wt !== 0) break;
      return toInt64(f.v);
    case 'uint64':
      if (f.wt !== 0) break;
      return toUint64(f.v);
    case 'sint32':
      if (f.wt !== 0) break;
      return zigzag32(f.v);
    case 'sint64':
      if (f.wt !== 0) break;
      return zigzag64(f.v);
    case 'fixed32':
    case 'sfixed32':
      if (f.wt !== 5) break;
      return fixed32(f.v, t === 'sfixed32');
    case 'float':
      if (f.wt !== 5) break;
      return float32(f.v);
    case 'fixed64':
      if (f.wt !== 1) break;
      return toUint64(fixed64ToVarint(f.v));
    case 'sfixed64':
      if (f.wt !== 1) break;
      return toInt64(fixed64ToVarint(f.v));
    case 'double':
      if (f.wt !== 1) break;
      return float64(f.v);
  }
  throw new ProtoDecodeError(`${path}: wire type ${f.wt} does not fit ${t}`);
}

function decodePacked(t: ScalarType, buf: Uint8Array, path: string): unknown[] {
  const r = new WireReader(buf);
  const out: unknown[] = [];
  const size = t === 'fixed32' || t === 'sfixed32' || t === 'float' ? 4 : t === 'fixed64' || t === 'sfixed64' || t === 'double' ? 8 : 0;
  while (!r.done()) {
    if (size === 4) out.push(decodeValue(t, { no: 0, wt: 5, v: r.take(4) }, path));
    else if (size === 8) out.push(decodeValue(t, { no: 0, wt: 1, v: r.take(8) }, path));
    else out.push(decodeValue(t, { no: 0, wt: 0, v: r.varint() }, path));
  }
  return out;
}

const notSpecial = Symbol('notSpecial');

/** Go's zero time.Time as Unix seconds (0001-01-01T00:00:00Z). */
const goZeroTimeSeconds = -62135596800;

function decodeWellKnown(type: string, buf: Uint8Array, path: string): unknown {
  switch (type) {
    case wellKnown.time:
    case wellKnown.microTime: {
      if (buf.length === 0) return undefined;
      let seconds = 0;
      let nanos = 0;
      for (const f of readFields(buf)) {
        if (f.no === 1 && f.wt === 0) seconds = toInt64(f.v);
        else if (f.no === 2 && f.wt === 0) nanos = toInt32(f.v);
      }
      if (seconds === goZeroTimeSeconds && nanos === 0) return undefined;
      return formatTime(seconds, nanos, type === wellKnown.microTime);
    }
    case wellKnown.duration: {
      let ns = 0;
      for (const f of readFields(buf)) if (f.no === 1 && f.wt === 0) ns = toInt64(f.v);
      return formatGoDuration(ns);
    }
    case wellKnown.intOrString: {
      let kind = 0;
      let intVal = 0;
      let strVal = '';
      for (const f of readFields(buf)) {
        if (f.no === 1 && f.wt === 0) kind = toInt32(f.v);
        else if (f.no === 2 && f.wt === 0) intVal = toInt32(f.v);
        else if (f.no === 3 && f.wt === 2) strVal = utf8.decode(f.v);
      }
      return kind === 1 ? strVal : intVal;
    }
    case wellKnown.quantity: {
      let s = '';
      for (const f of readFields(buf)) if (f.no === 1 && f.wt === 2) s = utf8.decode(f.v);
      return s === '' ? undefined : s;
    }
    case wellKnown.rawExtension:
    case wellKnown.fieldsV1: {
      let raw: Uint8Array | undefined;
      for (const f of readFields(buf)) if (f.no === 1 && f.wt === 2) raw = f.v;
      if (!raw || raw.length === 0) return undefined;
      const text = utf8.decode(raw);
      try {
        return JSON.parse(text);
      } catch (err) {
        throw new ProtoDecodeError(`${path}: embedded raw data is not JSON: ${(err as Error).message}`, { cause: err });
      }
    }
    default:
      return notSpecial;
  }
}

/** RFC 3339 in UTC: `2024-01-01T00:00:00Z`, or with 6 fraction digits for MicroTime. */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const iso = new Date(seconds * 1000).toISOString(); // 2024-01-01T00:00:00.000Z
  const base = iso.slice(0, 19);
  if (!micro) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/** Go's time.Duration.String(): `1h2m3.5s`, `150ms`, `0s`. */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let u = Math.abs(ns);
  let out: string;
  if (u < 1e9) {
    // sub-second: ns, µs, ms with fraction
    const [unit, div] = u < 1e3 ? ['ns', 1] : u < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    out = trimFraction(u / div) + unit;
  } else {
    const h = Math.floor(u / 3.6e12);
    u -= h * 3.6e12;
    const m = Math.floor(u / 6e10);
    u -= m * 6e10;
    const s = trimFraction(u / 1e9);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFraction(x: number): string {
  return x.toFixed(9).replace(/\.?0+$/, '');
}

export type { Varint };
