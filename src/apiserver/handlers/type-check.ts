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
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
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

interface TypeMismatch {
  path: string;
  struct: string;
  value: unknown;
  type: string;
}

function firstMismatch(doc: SwaggerDocument, root: Schema, obj: unknown): TypeMismatch | undefined {
  const walk = (value: unknown, r: Resolved, path: string, struct: string): TypeMismatch | undefined => {
    const s = r.schema;
    if (!s || value === null || value === undefined || s['x-kubernetes-preserve-unknown-fields'] === true) return undefined;
    if (!accepts(r, value)) return { path, struct, value, type: goType(doc, r) };
    const owner = r.def ? goTypeName(r.def).split('.')[1]! : struct;
    if (Array.isArray(value)) {
      const items = resolve(doc, s.items as Schema | undefined);
      for (const v of value) {
        const m = walk(v, items, path, owner);
        if (m) return m;
      }
      return undefined;
    }
    if (typeof value !== 'object') return undefined;
    const props = s.properties as Record<string, Schema> | undefined;
    const mapValues = !props && s.additionalProperties && typeof s.additionalProperties === 'object' ? resolve(doc, s.additionalProperties as Schema) : undefined;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // Go names struct fields in the path, not map keys (`ObjectMeta.metadata.labels`).
      const m = mapValues ? walk(v, mapValues, path, owner) : props?.[k] ? walk(v, resolve(doc, props[k]), path ? `${path}.${k}` : k, owner) : undefined;
      if (m) return m;
    }
    return undefined;
  };
  return walk(obj, resolve(doc, root), '', '');
}

/** Throws kube-apiserver's 400 when a value of `obj` has the wrong JSON type for `root`. */
export function checkTypes(doc: SwaggerDocument, root: Schema, gvk: { version: string; kind: string }, obj: unknown): void {
  const m = firstMismatch(doc, root, obj);
  if (!m) return;
  const field = m.path ? ` into Go struct field ${m.struct}.${m.path}` : ' into Go value';
  throw badRequest(`${gvk.kind} in version "${gvk.version}" cannot be handled as a ${gvk.kind}: json: cannot unmarshal ${jsonKind(m.value)}${field} of type ${m.type}`);
}
