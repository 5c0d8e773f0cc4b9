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

/** The JSON values a schema's Go type decodes from (see accepts). */
type Accepts = 'any' | 'string or number' | 'string' | 'bool' | 'int32' | 'int64' | 'number' | 'array' | 'object';

function acceptsOf(r: Resolved): Accepts {
  const s = r.schema;
  if (!s) return 'any';
  if (s.format === 'int-or-string' || s['x-kubernetes-int-or-string'] === true) return 'string or number';
  if (r.def === QUANTITY) return 'string or number';
  switch (s.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return s.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'number';
    case 'array':
      return 'array';
    case 'object':
      return 'object';
  }
  if (s.properties || (s.additionalProperties && typeof s.additionalProperties === 'object')) return 'object';
  return 'any';
}

/** True when `v` (not null) decodes into a Go value that accepts `a`. */
function accepts(a: Accepts, v: unknown): boolean {
  switch (a) {
    case 'any':
      return true;
    case 'string or number':
      return typeof v === 'string' || typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    // Go's int32 and int64 hold no fractions and nothing past their range.
    case 'int32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31;
    case 'int64':
      return typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63;
    case 'number':
      return typeof v === 'number';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && !Array.isArray(v);
  }
}

/**
 * What the walk needs of one schema object, worked out on its first visit:
 * every write request walks the same few schemas, so following $refs,
 * classifying the type and naming the Go struct once per schema (rather than
 * once per value) is most of the check's cost saved. Schemas are read-only.
 */
interface Node {
  schema: Schema | undefined;
  def: string | undefined;
  /** x-kubernetes-preserve-unknown-fields: nothing under it is checked. */
  preserve: boolean;
  accepts: Accepts;
  /** The Go struct a definition decodes into (`PodSpec`), naming the fields under it. */
  owner: string | undefined;
  /** Declared fields (struct fields). */
  props: Record<string, Schema> | undefined;
  /** A map's value schema (`additionalProperties`), when no fields are declared. */
  mapSchema: Schema | undefined;
  /** The nodes of declared fields, of array elements and of map values (`additionalProperties`), made on first use. */
  fieldNodes: Map<string, Node> | undefined;
  items: Node | undefined;
  mapValues: Node | undefined;
}

/** Nodes per document (a $ref means something else in another one) and schema object. */
const nodeCaches = new WeakMap<SwaggerDocument, WeakMap<object, Node>>();
const noSchema: Node = { schema: undefined, def: undefined, preserve: false, accepts: 'any', owner: undefined, props: undefined, mapSchema: undefined, fieldNodes: undefined, items: undefined, mapValues: undefined };

function nodeCache(doc: SwaggerDocument): WeakMap<object, Node> {
  let c = nodeCaches.get(doc);
  if (!c) nodeCaches.set(doc, (c = new WeakMap()));
  return c;
}

function nodeOf(cache: WeakMap<object, Node>, doc: SwaggerDocument, s: Schema | undefined): Node {
  if (s === undefined) return noSchema;
  // A schema is an object, or a function when a field named `constructor` finds Object.prototype's; only those can key a WeakMap.
  if (typeof s !== 'object' && typeof s !== 'function') return resolvedNode(doc, s);
  let n = cache.get(s);
  if (!n) cache.set(s, (n = resolvedNode(doc, s)));
  return n;
}

function resolvedNode(doc: SwaggerDocument, s: Schema | undefined): Node {
  const r = resolve(doc, s);
  const schema = r.schema;
  const props = schema?.properties as Record<string, Schema> | undefined;
  // Every node has every property, set in one order: one object shape keeps the walk's property reads fast.
  return {
    schema,
    def: r.def,
    preserve: schema?.['x-kubernetes-preserve-unknown-fields'] === true,
    accepts: acceptsOf(r),
    owner: r.def ? goTypeName(r.def).split('.')[1] : undefined,
    props,
    mapSchema: !props && schema?.additionalProperties && typeof schema.additionalProperties === 'object' ? (schema.additionalProperties as Schema) : undefined,
    fieldNodes: undefined,
    items: undefined,
    mapValues: undefined,
  };
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
  const cache = nodeCache(doc);
  // The steps to the current value (field names, map keys, list indexes) and
  // which are struct fields; the paths are spelled only for a mismatch.
  const steps: (string | number)[] = [];
  const isField: boolean[] = [];
  const mismatch = (value: unknown, r: Resolved, struct: string): TypeMismatch => {
    let path = '';
    let fullPath = '';
    for (let i = 0; i < steps.length; i++) {
      const k = steps[i]!;
      fullPath = typeof k === 'number' ? `${fullPath}[${k}]` : `${fullPath}.${k}`;
      if (isField[i]) path = path ? `${path}.${k}` : (k as string);
    }
    return { path, fullPath, struct, value, type: goType(doc, r) };
  };
  const walk = (value: unknown, n: Node, struct: string): TypeMismatch | undefined => {
    const s = n.schema;
    if (!s || value === null || value === undefined || n.preserve) return undefined;
    if (!accepts(n.accepts, value)) return mismatch(value, n, struct);
    const owner = n.def ? n.owner! : struct;
    if (Array.isArray(value)) {
      const items = (n.items ??= nodeOf(cache, doc, s.items as Schema | undefined));
      for (let i = 0; i < value.length; i++) {
        steps.push(i);
        isField.push(false);
        const m = walk(value[i], items, owner);
        if (m) return m;
        steps.pop();
        isField.pop();
      }
      return undefined;
    }
    if (typeof value !== 'object') return undefined;
    const props = n.props;
    const mapValues = n.mapSchema ? (n.mapValues ??= nodeOf(cache, doc, n.mapSchema)) : undefined;
    if (!props && !mapValues) return undefined;
    const o = value as Record<string, unknown>;
    for (const k in o) {
      let child = mapValues ?? n.fieldNodes?.get(k);
      if (!child) {
        const p = props![k];
        if (!p) continue; // an unknown field: field validation's business
        child = nodeOf(cache, doc, p);
        (n.fieldNodes ??= new Map()).set(k, child);
      }
      steps.push(k);
      // Go names struct fields in the path, not map keys (`ObjectMeta.metadata.labels`).
      isField.push(!mapValues);
      const m = walk(o[k], child, owner);
      if (m) return m;
      steps.pop();
      isField.pop();
    }
    return undefined;
  };
  return walk(obj, nodeOf(cache, doc, root), rootStruct);
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
