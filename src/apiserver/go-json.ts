/**
 * Objects as Go writes them. kube-apiserver decodes every request body into
 * the Go structs of k8s.io/api and encodes them back with encoding/json, so
 * what clients read follows Go's rules, field by field:
 *
 * - a field tagged `omitempty` disappears when it holds its zero value (""
 *   0, false, an empty or nil list or map, a nil pointer): no
 *   `ownerReferences: []`, no `labels: {}`, no `status.readyReplicas: 0`;
 * - a field without `omitempty` is always written, with its zero value when
 *   the client left it out: `status.replicas: 0` on a StatefulSet scaled to
 *   zero, `endpoints: null` on an EndpointSlice without endpoints (also when
 *   the client sent `[]`: kube-apiserver keeps built-in objects as protobuf
 *   in etcd, where an empty list is a nil one);
 * - a struct (not a pointer) is always written, `{}` when empty
 *   (`status: {}`, `loadBalancer: {}`);
 * - a pointer keeps whatever it points to, zero included (`spec.replicas: 0`);
 * - metav1.Time writes `null` when zero.
 *
 * The facts per field come from the Go type definitions
 * (data/openapi/go-fields.json.gz, written by scripts/gen-go-fields.mjs).
 * Fields the Go type does not know are left alone (field validation decides
 * about those), and so are custom resources, which kube-apiserver keeps as
 * unstructured JSON.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseApiVersion } from '../api/types.js';
import { openApiDataDir, patchMetaTable } from './openapi/openapi-data.js';

/** The JSON form of a Go value type. */
export type GoShape =
  | 'string'
  | 'number'
  | 'bool'
  | 'bytes'
  | 'Time'
  | 'Quantity'
  | 'IntOrString'
  | 'Duration'
  | 'Raw'
  | string
  | ['slice', GoShape]
  | ['map', GoShape];

/** [JSON name, flags ('o' omitempty, 'z' omitzero, 'p' pointer), shape]. */
export type GoField = [string, string, GoShape];

/**
 * The `z` flag (`omitzero`, Go 1.24) is not applied. It marks one field so
 * far, metadata.creationTimestamp, since Kubernetes 1.34; kcm writes it as
 * Kubernetes up to 1.33 does (`creationTimestamp: null` in an embedded
 * template), because the clients in use (kubectl up to 1.33, client-go's
 * daemon.Match, the 1.20 e2e tests) build the ControllerRevision bytes they
 * compare that way. Its `omitempty` never drops it: a Time is a struct.
 */
interface Field {
  name: string;
  omitEmpty: boolean;
  pointer: boolean;
  shape: GoShape;
}

let structs: Map<string, Field[]> | undefined;

function table(): Map<string, Field[]> {
  if (structs) return structs;
  const file = join(openApiDataDir(), 'go-fields.json.gz');
  let raw: Record<string, GoField[]>;
  try {
    raw = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as Record<string, GoField[]>;
  } catch (err) {
    throw new Error(`cannot load ${file}: ${(err as Error).message}`, { cause: err });
  }
  structs = new Map(
    Object.entries(raw).map(([name, fields]) => [
      name,
      fields.map(([n, flags, shape]) => ({ name: n, omitEmpty: flags.includes('o'), pointer: flags.includes('p'), shape })),
    ]),
  );
  return structs;
}

/** The Go struct (OpenAPI definition name) of a built-in kind, or undefined (custom resources, unknown kinds). */
export function goStructOf(apiVersion: string, kind: string): string | undefined {
  const { group, version } = parseApiVersion(apiVersion);
  const def = patchMetaTable().kinds[`${group}/${version}/${kind}`];
  return def && table().has(def) ? def : undefined;
}

const isStruct = (shape: GoShape): shape is string => typeof shape === 'string' && shape.includes('.');
/** Go structs, including those with a MarshalJSON of their own: omitempty never drops them. */
const structValues = new Set<GoShape>(['Time', 'Quantity', 'IntOrString', 'Duration', 'Raw']);
const isStructValue = (shape: GoShape): boolean => isStruct(shape) || (typeof shape === 'string' && structValues.has(shape));

/** Go's zero value of a non-pointer field, as encoding/json writes it. */
function zeroOf(shape: GoShape): unknown {
  if (Array.isArray(shape)) return null;
  switch (shape) {
    case 'string':
      return '';
    case 'number':
      return 0;
    case 'bool':
      return false;
    case 'Quantity':
      return '0';
    case 'IntOrString':
      return 0;
    case 'Duration':
      return '0s';
    case 'bytes':
    case 'Time':
    case 'Raw':
      return null;
    default:
      return isStruct(shape) ? {} : null;
  }
}

/** True when encoding/json's omitempty drops this value of a non-pointer field. */
function isEmpty(shape: GoShape, v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(shape)) return Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v).length === 0;
  switch (shape) {
    case 'string':
    case 'bytes':
      return v === '';
    case 'number':
      return v === 0;
    case 'bool':
      return v === false;
    default:
      return false; // structs and custom marshalers are never empty for omitempty
  }
}

/**
 * Rewrites `obj` in place as Go would encode the struct `def` decoded from
 * it. Values of the wrong JSON type are left as they are (the type check
 * refuses those before this runs).
 */
export function normalizeGoStruct(obj: Record<string, unknown>, def: string): void {
  const fields = table().get(def);
  if (!fields) return;
  for (const f of fields) {
    const has = Object.prototype.hasOwnProperty.call(obj, f.name);
    let v = has ? obj[f.name] : undefined;
    if (f.pointer) {
      if (v === undefined || v === null) {
        if (f.omitEmpty) delete obj[f.name];
        else obj[f.name] = null;
        continue;
      }
      normalizeValue(v, f.shape);
      continue;
    }
    if (v === null) v = undefined; // null decodes to the zero value of a non-pointer field
    if (v === undefined) {
      if (f.omitEmpty && !isStructValue(f.shape)) {
        if (has) delete obj[f.name];
        continue;
      }
      v = zeroOf(f.shape);
      obj[f.name] = v;
      if (v !== null && typeof v === 'object') normalizeValue(v, f.shape);
      continue;
    }
    if (f.omitEmpty && isEmpty(f.shape, v)) {
      delete obj[f.name];
      continue;
    }
    if (Array.isArray(f.shape) && isEmpty(f.shape, v)) {
      // kube-apiserver stores built-in kinds as protobuf, where an empty list or map and a nil
      // one are the same: what it reads back (and answers, even to the create) is null.
      obj[f.name] = null;
      continue;
    }
    normalizeValue(v, f.shape);
  }
}

function normalizeValue(v: unknown, shape: GoShape): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(shape)) {
    const inner = shape[1];
    if (!needsWalk(inner)) return;
    if (shape[0] === 'slice') {
      if (Array.isArray(v)) for (const item of v) if (item !== null && typeof item === 'object' && !Array.isArray(item)) normalizeValue(item, inner);
    } else if (!Array.isArray(v)) {
      for (const item of Object.values(v)) normalizeValue(item, inner);
    }
    return;
  }
  if (isStruct(shape) && !Array.isArray(v)) normalizeGoStruct(v as Record<string, unknown>, shape);
}

function needsWalk(shape: GoShape): boolean {
  return Array.isArray(shape) ? needsWalk(shape[1]) : isStruct(shape);
}

/**
 * Replaces JSON nulls in `obj` (in place) as decoding it into the Go struct
 * `def` does, so later code never meets a null where Go has a value: a null
 * list item or map value becomes the zero value of its Go type
 * (`finalizers: [null]` is `[""]`, `labels: {a: null}` is `{a: ""}`,
 * `ports: [null]` is `[{}]`); a null field takes the form normalizeGoStruct
 * gives the zero value (left out when omitempty drops it, `""` for a plain
 * string, null kept for a nil pointer, slice or map and a zero Time), except
 * that a struct (not a pointer to one) is left out rather than filled in.
 * Values of the wrong JSON type are left as they are (the type check refuses
 * those first).
 */
export function decodeNullsAsGo(obj: Record<string, unknown>, def: string): void {
  const fields = table().get(def);
  if (!fields) return;
  for (const f of fields) {
    if (!Object.prototype.hasOwnProperty.call(obj, f.name)) continue;
    const v = obj[f.name];
    if (v !== null) decodeNullsIn(v, f.shape);
    else if ((isStruct(f.shape) && !f.pointer) || (f.omitEmpty && (f.pointer || !isStructValue(f.shape)))) delete obj[f.name];
    else if (!f.pointer) obj[f.name] = zeroOf(f.shape);
  }
}

function decodeNullsIn(v: unknown, shape: GoShape): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(shape)) {
    const inner = shape[1];
    if (shape[0] === 'slice') {
      if (!Array.isArray(v)) return;
      for (let i = 0; i < v.length; i++) {
        if (v[i] === null) v[i] = zeroOf(inner);
        else decodeNullsIn(v[i], inner);
      }
    } else if (!Array.isArray(v)) {
      const m = v as Record<string, unknown>;
      for (const k of Object.keys(m)) {
        if (m[k] === null) m[k] = zeroOf(inner);
        else decodeNullsIn(m[k], inner);
      }
    }
    return;
  }
  if (isStruct(shape) && !Array.isArray(v)) decodeNullsAsGo(v as Record<string, unknown>, shape);
}

/** The Go struct of every object's metadata (custom resources' included). */
export const objectMetaStruct = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** decodeNullsAsGo for a built-in object by its apiVersion and kind; false when the kind has no Go type here. */
export function decodeNullsOf(obj: Record<string, unknown>, apiVersion: string, kind: string): boolean {
  const def = goStructOf(apiVersion, kind);
  if (!def) return false;
  decodeNullsAsGo(obj, def);
  return true;
}

/** Normalizes a built-in object by its apiVersion and kind; returns false when the kind has no Go type here. */
export function normalizeAsGo(obj: Record<string, unknown>): boolean {
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return false;
  const def = goStructOf(obj.apiVersion, obj.kind);
  if (!def) return false;
  normalizeGoStruct(obj, def);
  return true;
}

const htmlUnsafe = /[<>&\u2028\u2029]/;
const htmlUnsafeAll = /[<>&\u2028\u2029]/g;
const goEscapes: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * JSON text as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029
 * inside strings are escaped (`\u003c`, ...). Clients that compare raw
 * bytes the server wrote (client-go's daemon.Match on a ControllerRevision's
 * `data`) see the same bytes as from kube-apiserver. These characters occur
 * only inside JSON strings, so escaping them in the whole text is safe.
 * With `indent`, the layout of Go's json.MarshalIndent(v, "", "  ") for 2
 * (empty objects and arrays stay `{}` and `[]`, as in JSON.stringify).
 */
export function stringifyAsGo(value: unknown, indent?: number): string {
  return escapeAsGo(JSON.stringify(value, null, indent));
}

/** JSON text with `<`, `>`, `&`, U+2028 and U+2029 escaped as Go's encoding/json escapes them. */
export function escapeAsGo(text: string): string {
  return htmlUnsafe.test(text) ? text.replace(htmlUnsafeAll, (c) => goEscapes[c]!) : text;
}
