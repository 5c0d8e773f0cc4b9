/**
 * The type check kube-apiserver gets for free from decoding JSON into Go
 * structs: a value of the wrong JSON type (YAML's `app: y` is the boolean
 * true) is refused with 400 BadRequest and Go's unmarshal message, e.g.
 *
 *   Deployment in version "v1" cannot be handled as a Deployment: json: cannot
 *   unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels
 *   of type string
 *
 * whatever `fieldValidation` says. Checked against the served OpenAPI schema;
 * null is accepted anywhere (Go decodes it to the zero value).
 */
import type { SwaggerDocument } from '../openapi/index.js';
import { badRequest } from '../status.js';

type Schema = Record<string, unknown>;

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

interface Resolved {
  schema: Schema | undefined;
  /** Definition name the schema came from (last $ref followed). */
  def?: string;
}

function resolve(doc: SwaggerDocument, s: Schema | undefined): Resolved {
  let cur = s;
  let def: string | undefined;
  for (let i = 0; cur && i < 16; i++) {
    if (typeof cur.$ref === 'string') {
      def = cur.$ref.slice(cur.$ref.lastIndexOf('/') + 1);
      cur = doc.definitions[def];
      continue;
    }
    if (Array.isArray(cur.allOf) && cur.allOf.length === 1 && !cur.properties) {
      cur = cur.allOf[0] as Schema;
      continue;
    }
    break;
  }
  return { schema: cur, ...(def ? { def } : {}) };
}

/** Go's name of a JSON value's kind in unmarshal errors. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return 'object';
}

/** `v1.PodSpec` from `io.k8s.api.core.v1.PodSpec`. */
function goTypeName(def: string): string {
  const parts = def.split('.');
  return parts.length >= 2 ? `${parts[parts.length - 2]}.${parts[parts.length - 1]}` : def;
}

function goType(doc: SwaggerDocument, r: Resolved): string {
  const s = r.schema ?? {};
  if (r.def === QUANTITY) return 'resource.Quantity';
  switch (s.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return s.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'array':
      return `[]${goType(doc, resolve(doc, s.items as Schema | undefined))}`;
  }
  if (r.def) return goTypeName(r.def);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') return `map[string]${goType(doc, resolve(doc, s.additionalProperties as Schema))}`;
  return 'map[string]interface {}';
}

/** True when `v` decodes into the schema's type. */
function accepts(r: Resolved, v: unknown): boolean {
  const s = r.schema;
  if (!s || v === null) return true;
  if (s.format === 'int-or-string' || s['x-kubernetes-int-or-string'] === true) return typeof v === 'string' || typeof v === 'number';
  if (r.def === QUANTITY) return typeof v === 'string' || typeof v === 'number';
  switch (s.type) {
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer': {
      // Go's int32 and int64 hold no fractions and nothing past their range.
      const limit = s.format === 'int32' ? 2 ** 31 : 2 ** 63;
      return typeof v === 'number' && Number.isInteger(v) && v >= -limit && v < limit;
    }
    case 'number':
      return typeof v === 'number';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && !Array.isArray(v);
  }
  if (s.properties || (s.additionalProperties && typeof s.additionalProperties === 'object')) return typeof v === 'object' && !Array.isArray(v);
  return true;
}

/** The value as Go's UnmarshalTypeError names it: `number 1.5` for a number that does not fit, else its JSON kind. */
function describeValue(v: unknown, type: string): string {
  return typeof v === 'number' && (type === 'int32' || type === 'int64') ? `number ${String(v)}` : jsonKind(v);
}

interface TypeMismatch {
  /** Struct fields only, as Go's decoder names the field (`spec.template.metadata.labels`). */
  path: string;
  /** Every step, as structured-merge-diff names the value (`.spec.template.metadata.labels.app`, `[0]`). */
  fullPath: string;
  struct: string;
  value: unknown;
  type: string;
}

/** The first value of `obj` of the wrong type under `root`, the Go struct `rootStruct` (named in paths of its own fields). */
function firstMismatch(doc: SwaggerDocument, root: Schema, obj: unknown, rootStruct = ''): TypeMismatch | undefined {
  const walk = (value: unknown, r: Resolved, path: string, fullPath: string, struct: string): TypeMismatch | undefined => {
    const s = r.schema;
    if (!s || value === null || value === undefined || s['x-kubernetes-preserve-unknown-fields'] === true) return undefined;
    if (!accepts(r, value)) return { path, fullPath, struct, value, type: goType(doc, r) };
    const owner = r.def ? goTypeName(r.def).split('.')[1]! : struct;
    if (Array.isArray(value)) {
      const items = resolve(doc, s.items as Schema | undefined);
      for (let i = 0; i < value.length; i++) {
        const m = walk(value[i], items, path, `${fullPath}[${i}]`, owner);
        if (m) return m;
      }
      return undefined;
    }
    if (typeof value !== 'object') return undefined;
    const props = s.properties as Record<string, Schema> | undefined;
    const mapValues = !props && s.additionalProperties && typeof s.additionalProperties === 'object' ? resolve(doc, s.additionalProperties as Schema) : undefined;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // Go names struct fields in the path, not map keys (`ObjectMeta.metadata.labels`).
      const m = mapValues
        ? walk(v, mapValues, path, `${fullPath}.${k}`, owner)
        : props?.[k]
          ? walk(v, resolve(doc, props[k]), path ? `${path}.${k}` : k, `${fullPath}.${k}`, owner)
          : undefined;
      if (m) return m;
    }
    return undefined;
  };
  return walk(obj, resolve(doc, root), '', '', rootStruct);
}

/** Throws kube-apiserver's 400 when a value of `obj` has the wrong JSON type for `root`. */
export function checkTypes(doc: SwaggerDocument, root: Schema, gvk: { version: string; kind: string }, obj: unknown): void {
  const m = firstMismatch(doc, root, obj, gvk.kind);
  if (!m) return;
  const field = m.path ? ` into Go struct field ${m.struct}.${m.path}` : ' into Go value';
  throw badRequest(`${gvk.kind} in version "${gvk.version}" cannot be handled as a ${gvk.kind}: json: cannot unmarshal ${describeValue(m.value, m.type)}${field} of type ${m.type}`);
}

/** What structured-merge-diff expects of a value of Go type `type` (its schema's scalar or collection kind). */
function smdExpectation(type: string): 'string' | 'numeric (int or float)' | 'boolean' | 'list' | 'map' {
  if (type === 'string') return 'string';
  if (type === 'bool') return 'boolean';
  if (type === 'int32' || type === 'int64' || type === 'float64') return 'numeric (int or float)';
  if (type.startsWith('[]')) return 'list';
  return 'map';
}

/** Go's %T of a decoded JSON value. */
function goTypeOf(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return 'map[string]interface {}';
}

/** Go's %#v of a decoded JSON value (an interface{}). */
function goSyntax(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSyntax).join(', ')}}`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[string]interface {}{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${goSyntax(o[k])}`).join(', ')}}`;
  }
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/** Go's %v of a decoded JSON value. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o).sort().map((k) => `${k}:${goValue(o[k])}`).join(' ')}]`;
  }
  return String(v);
}

/**
 * Server-side apply's type check of an applied configuration for a built-in
 * kind: structured-merge-diff converts it to its typed form first and refuses
 * a value of the wrong kind with a 400, e.g. `failed to create typed patch
 * object (apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or
 * float), got string` (list items by index: `.spec.containers[0].image`).
 */
export function checkApplyTypes(doc: SwaggerDocument, root: Schema, gvk: { group: string; version: string; kind: string }, obj: unknown): void {
  const m = firstMismatch(doc, root, obj);
  if (!m) return;
  const want = smdExpectation(m.type);
  let got: string;
  switch (want) {
    case 'numeric (int or float)':
      got = goTypeOf(m.value);
      break;
    case 'string':
      got = `&value.valueUnstructured{Value:${goSyntax(m.value)}}`;
      break;
    default:
      got = `&{${goValue(m.value)}}`;
  }
  const gv = gvk.group ? `${gvk.group}/${gvk.version}` : `/${gvk.version}`;
  throw badRequest(`failed to create typed patch object (${gv}, Kind=${gvk.kind}): ${m.fullPath}: expected ${want}, got ${got}`);
}
