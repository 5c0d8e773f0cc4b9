/**
 * Field sets as structured-merge-diff keeps them for managedFields: a set of
 * paths, each path a list of tokens in FieldsV1 spelling: `f:<field>`,
 * `k:<json of the item's key fields>` (associative lists), `v:<json value>`
 * (set lists), and `.` for "this node itself" in the FieldsV1 tree.
 *
 * Which fields are tracked: structs field by field, maps (labels) key by key,
 * lists with a merge key item by item, primitive lists with the merge strategy
 * or `x-kubernetes-list-type: set` value by value; other lists are atomic.
 */
import { isObject, jsonEqual, type JsonObject } from './json-value.js';
import { childSchema, fieldMeta, hasStrategy, itemSchema, type FieldMeta, type SchemaNode } from './schema.js';

/** Paths joined with '\n' (tokens never contain a newline: JSON escapes it). */
export type FieldSet = Set<string>;

export const SEP = '\n';
export const pathKey = (tokens: readonly string[]): string => tokens.join(SEP);
export const pathTokens = (key: string): string[] => (key === '' ? [] : key.split(SEP));

/** Server-owned metadata that no manager owns. */
const ignoredMetadata = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generateName']);

export type ListKind = { kind: 'map'; keys: string[] } | { kind: 'set' } | { kind: 'atomic' };

export function listKindOf(m: FieldMeta | undefined): ListKind {
  if (m?.listType === 'atomic') return { kind: 'atomic' };
  if (m?.mapKeys?.length) return { kind: 'map', keys: m.mapKeys };
  if (m?.mergeKey && (hasStrategy(m, 'merge') || m.listType === 'map')) return { kind: 'map', keys: [m.mergeKey] };
  if (m?.listType === 'set' || (hasStrategy(m, 'merge') && m?.items && !m.items.includes('.'))) return { kind: 'set' };
  return { kind: 'atomic' };
}

/**
 * Defaults of list-map key fields, as the upstream schema declares them
 * (`protocol` of container and service ports defaults to TCP), so an applied
 * `{containerPort: 80}` is the same item as the stored `{containerPort: 80, protocol: TCP}`.
 */
const mapKeyDefaults: Record<string, string> = { protocol: 'TCP' };

export function itemKeyToken(item: JsonObject, keys: readonly string[]): string {
  const k: JsonObject = {};
  for (const name of keys) {
    if (item[name] !== undefined) k[name] = item[name];
    else if (name in mapKeyDefaults) k[name] = mapKeyDefaults[name]!;
  }
  return `k:${JSON.stringify(k)}`;
}

/** The set of fields `obj` sets. `includeStatus` for the status subresource's writers. */
export function fieldSetOf(obj: JsonObject, schema: SchemaNode, includeStatus = false): FieldSet {
  const out: FieldSet = new Set();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || (k === 'status' && !includeStatus) || v === undefined) continue;
    if (k === 'metadata' && isObject(v)) {
      const ms = childSchema(schema, 'metadata');
      for (const [mk, mv] of Object.entries(v)) if (!ignoredMetadata.has(mk) && mv !== undefined) walkField(['f:metadata'], mk, mv, ms, out);
      continue;
    }
    walkField([], k, v, schema, out);
  }
  return out;
}

function walkField(prefix: string[], k: string, v: unknown, schema: SchemaNode, out: FieldSet): void {
  const path = [...prefix, `f:${k}`];
  if (isObject(v)) {
    const sub = childSchema(schema, k);
    const isStruct = sub?.kind === 'struct';
    if (!isStruct || Object.keys(v).length === 0) out.add(pathKey(path));
    walkObject(path, v, sub, out);
    return;
  }
  if (Array.isArray(v)) {
    const lk = listKindOf(fieldMeta(schema, k));
    out.add(pathKey(path));
    if (lk.kind === 'atomic') return;
    const items = itemSchema(schema, k);
    for (const item of v) {
      if (lk.kind === 'set') out.add(pathKey([...path, `v:${JSON.stringify(item)}`]));
      else if (isObject(item)) {
        const ip = [...path, itemKeyToken(item, lk.keys)];
        out.add(pathKey(ip));
        walkObject(ip, item, items, out);
      }
    }
    return;
  }
  out.add(pathKey(path));
}

function walkObject(prefix: string[], obj: JsonObject, schema: SchemaNode, out: FieldSet): void {
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null) walkField(prefix, k, v, schema, out);
}

/** The FieldsV1 tree of a set (`{"f:spec":{"f:replicas":{}}}`, `"."` for members with children). */
export function toFieldsV1(set: FieldSet): JsonObject {
  const root: JsonObject = {};
  for (const key of [...set].sort()) {
    let node = root;
    for (const t of pathTokens(key)) node = (node[t] ??= {}) as JsonObject;
  }
  // A member that has children is marked with ".".
  const mark = (node: JsonObject, isMember: (path: string[]) => boolean, path: string[]) => {
    for (const [t, child] of Object.entries(node)) {
      const p = [...path, t];
      const c = child as JsonObject;
      if (Object.keys(c).length > 0) {
        if (isMember(p)) c['.'] = {};
        mark(c, isMember, p);
      }
    }
  };
  mark(root, (p) => set.has(pathKey(p)), []);
  return sortTree(root);
}

function sortTree(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(node).sort()) out[k] = sortTree(node[k] as JsonObject);
  return out;
}

/** Parses a FieldsV1 tree back into a set. */
export function fromFieldsV1(tree: unknown): FieldSet {
  const out: FieldSet = new Set();
  const walk = (node: unknown, path: string[]) => {
    if (!isObject(node)) return;
    const keys = Object.keys(node);
    if (keys.length === 0 && path.length) out.add(pathKey(path));
    for (const t of keys) {
      if (t === '.') out.add(pathKey(path));
      else walk(node[t], [...path, t]);
    }
  };
  walk(tree, []);
  return out;
}

function matchToken(container: unknown, token: string): { value: unknown; index?: number } | undefined {
  if (token.startsWith('f:')) {
    if (!isObject(container)) return undefined;
    const name = token.slice(2);
    return Object.prototype.hasOwnProperty.call(container, name) ? { value: container[name] } : undefined;
  }
  if (!Array.isArray(container)) return undefined;
  if (token.startsWith('k:')) {
    const key = JSON.parse(token.slice(2)) as JsonObject;
    // A key field the item leaves out takes its schema default (an applied port without protocol is the TCP port).
    const i = container.findIndex((x) => isObject(x) && Object.entries(key).every(([k, v]) => jsonEqual(x[k] ?? mapKeyDefaults[k], v)));
    return i >= 0 ? { value: container[i], index: i } : undefined;
  }
  if (token.startsWith('v:')) {
    const v = JSON.parse(token.slice(2));
    const i = container.findIndex((x) => jsonEqual(x, v));
    return i >= 0 ? { value: container[i], index: i } : undefined;
  }
  return undefined;
}

/** The value at a path, or undefined. */
export function valueAt(obj: unknown, key: string): unknown {
  let cur: unknown = obj;
  for (const t of pathTokens(key)) {
    const m = matchToken(cur, t);
    if (!m) return undefined;
    cur = m.value;
  }
  return cur;
}

/**
 * valueAt for many paths of one object: each path prefix is resolved once
 * (a path's value is its parent's value matched by its last token). For
 * objects that do not change while the lookup is in use.
 */
export function newValueLookup(obj: unknown): (key: string) => unknown {
  const memo = new Map<string, unknown>([['', obj]]);
  const lookup = (key: string): unknown => {
    if (memo.has(key)) return memo.get(key);
    const i = key.lastIndexOf(SEP);
    const parent = lookup(i < 0 ? '' : key.slice(0, i));
    const v = parent === undefined ? undefined : matchToken(parent, i < 0 ? key : key.slice(i + 1))?.value;
    memo.set(key, v);
    return v;
  };
  return lookup;
}

/** Removes the value at a path (a field, a list item); no-op when absent. */
export function removeAt(obj: JsonObject, key: string): void {
  const tokens = pathTokens(key);
  let cur: unknown = obj;
  for (const t of tokens.slice(0, -1)) {
    const m = matchToken(cur, t);
    if (!m) return;
    cur = m.value;
  }
  const last = tokens[tokens.length - 1];
  if (last === undefined) return;
  const m = matchToken(cur, last);
  if (!m) return;
  if (m.index !== undefined) (cur as unknown[]).splice(m.index, 1);
  else delete (cur as JsonObject)[last.slice(2)];
}

/** `.spec.template.spec.containers[name="app"].image`, as conflict messages print paths. */
export function displayPath(key: string): string {
  return pathTokens(key)
    .map((t) => {
      if (t.startsWith('f:')) return `.${t.slice(2)}`;
      if (t.startsWith('k:')) {
        const k = JSON.parse(t.slice(2)) as JsonObject;
        return `[${Object.entries(k).map(([n, v]) => `${n}=${JSON.stringify(v)}`).join(',')}]`;
      }
      return `[=${t.slice(2)}]`;
    })
    .join('');
}
