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
  const w: Walk = { out: new Set() };
  walkRoot(w, obj, schema, includeStatus);
  return w.out;
}

/**
 * fieldSetOf(obj) and, in the set's order, the paths a write from `old` to
 * `obj` changed: all of them without `old`; else a path whose value is an
 * object or a non-atomic list is changed when `old` has no value there, any
 * other when the values differ. Values are found as `newValueLookup` finds
 * them (the first list item matching a key), computed along the walk rather
 * than looked up path by path afterwards.
 */
export function fieldSetAndChanges(obj: JsonObject, old: unknown, schema: SchemaNode, includeStatus = false): { set: FieldSet; changed: string[] } {
  const w: Walk = { out: new Set(), changes: { changed: [], old } };
  walkRoot(w, obj, schema, includeStatus);
  return { set: w.out, changed: w.changes!.changed };
}

/** One walk over an object: the set it fills and, when diffing, what changed. */
interface Walk {
  out: FieldSet;
  changes?: { changed: string[]; old: unknown };
}

const join = (prefix: string, token: string): string => (prefix === '' ? token : `${prefix}${SEP}${token}`);

function walkRoot(w: Walk, obj: JsonObject, schema: SchemaNode, includeStatus: boolean): void {
  const old = w.changes?.old;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || (k === 'status' && !includeStatus) || v === undefined) continue;
    if (k === 'metadata' && isObject(v)) {
      const ms = childSchema(schema, 'metadata');
      // 'f:metadata' itself is not a member; its fields are looked up below obj.metadata (an own property: Object.entries found it).
      const oldMeta = w.changes ? fieldValue(old, 'metadata') : undefined;
      for (const [mk, mv] of Object.entries(v)) if (!ignoredMetadata.has(mk) && mv !== undefined) walkField(w, 'f:metadata', mk, mv, ms, v, oldMeta);
      continue;
    }
    walkField(w, '', k, v, schema, obj, old);
  }
}

/** matchToken for an `f:` token: the own property `name` of an object. */
function fieldValue(container: unknown, name: string): unknown {
  return isObject(container) && Object.prototype.hasOwnProperty.call(container, name) ? container[name] : undefined;
}

/** matchToken's value for a list item token (`k:`, `v:`); undefined when `list` is not a list. */
function itemValue(list: unknown, token: string): unknown {
  return Array.isArray(list) ? matchToken(list, token)?.value : undefined;
}

/**
 * Adds `key` to the walk's set; when diffing and the key is new, records it
 * as changed per fieldSetAndChanges. `nv`/`ov` are the looked-up values at the
 * path; `meta` is the path's field meta (undefined for list items).
 */
function add(w: Walk, key: string, nv: unknown, ov: unknown, meta: FieldMeta | undefined): void {
  if (w.out.has(key)) return;
  w.out.add(key);
  const c = w.changes;
  if (!c) return;
  if (!c.old) c.changed.push(key);
  else if (isObject(nv) || (Array.isArray(nv) && listKindOf(meta).kind !== 'atomic') ? ov === undefined : !jsonEqual(nv, ov)) c.changed.push(key);
}

/**
 * Walks field `k` (value `v`) of an object under `prefix`. `np`/`op` are the
 * looked-up values of the parent path in the new and old object (only used
 * when diffing).
 */
function walkField(w: Walk, prefix: string, k: string, v: unknown, schema: SchemaNode, np: unknown, op: unknown): void {
  const path = join(prefix, `f:${k}`);
  const diffing = !!w.changes?.old;
  const nv = diffing ? fieldValue(np, k) : undefined;
  const ov = diffing ? fieldValue(op, k) : undefined;
  if (isObject(v)) {
    const sub = childSchema(schema, k);
    const isStruct = sub?.kind === 'struct';
    if (!isStruct || Object.keys(v).length === 0) add(w, path, nv, ov, diffing && Array.isArray(nv) ? fieldMeta(schema, k) : undefined);
    walkObject(w, path, v, sub, nv, ov);
    return;
  }
  if (Array.isArray(v)) {
    const meta = fieldMeta(schema, k);
    const lk = listKindOf(meta);
    add(w, path, nv, ov, meta);
    if (lk.kind === 'atomic') return;
    const items = itemSchema(schema, k);
    for (const item of v) {
      if (lk.kind === 'set') {
        const token = `v:${JSON.stringify(item)}`;
        add(w, join(path, token), diffing ? itemValue(nv, token) : undefined, diffing ? itemValue(ov, token) : undefined, undefined);
      } else if (isObject(item)) {
        const token = itemKeyToken(item, lk.keys);
        const ip = join(path, token);
        const niv = diffing ? itemValue(nv, token) : undefined;
        const oiv = diffing ? itemValue(ov, token) : undefined;
        add(w, ip, niv, oiv, undefined);
        walkObject(w, ip, item, items, niv, oiv);
      }
    }
    return;
  }
  add(w, path, nv, ov, diffing && Array.isArray(nv) ? fieldMeta(schema, k) : undefined);
}

function walkObject(w: Walk, prefix: string, obj: JsonObject, schema: SchemaNode, np: unknown, op: unknown): void {
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null) walkField(w, prefix, k, v, schema, np, op);
}

/** A node of the tree toFieldsV1 builds: its children by token, and whether its own path is in the set. */
interface TreeNode {
  children: Map<string, TreeNode>;
  member: boolean;
}

/** The FieldsV1 tree of a set (`{"f:spec":{"f:replicas":{}}}`, `"."` for members with children). */
export function toFieldsV1(set: FieldSet): JsonObject {
  const root: TreeNode = { children: new Map(), member: false };
  // Nodes by path key: a path's node is its parent's child, so shared prefixes are found once rather than split per key.
  // (The root is not in `nodes`: as a parent, key '' is the one-token path [''], as pathTokens splits "\n".)
  const nodes = new Map<string, TreeNode>();
  const nodeOf = (key: string): TreeNode => {
    let node = nodes.get(key);
    if (node) return node;
    const i = key.lastIndexOf(SEP);
    const parent = i < 0 ? root : nodeOf(key.slice(0, i));
    const t = i < 0 ? key : key.slice(i + 1);
    node = parent.children.get(t);
    if (!node) parent.children.set(t, (node = { children: new Map(), member: false }));
    nodes.set(key, node);
    return node;
  };
  for (const key of set) (key === '' ? root : nodeOf(key)).member = true; // pathTokens('') is []
  return emitTree(root, true);
}

/** A tree node as FieldsV1, keys sorted; a member (not the root) that has children is marked with ".". */
function emitTree(node: TreeNode, isRoot: boolean): JsonObject {
  const dot = !isRoot && node.member && node.children.size > 0;
  const keys = [...node.children.keys()];
  if (dot && !node.children.has('.')) keys.push('.');
  keys.sort();
  const out: JsonObject = {};
  // The "." mark replaces a child spelled "." (only a token with a newline in a client's tree can split into one).
  for (const k of keys) out[k] = k === '.' && dot ? {} : emitTree(node.children.get(k)!, false);
  return out;
}

/** Parses a FieldsV1 tree back into a set. */
export function fromFieldsV1(tree: unknown): FieldSet {
  return readFieldsV1(tree).set;
}

/**
 * fromFieldsV1, and whether the tree is canonical: exactly what toFieldsV1
 * makes of the set (objects only, keys sorted, no newline or empty token,
 * "." as `{}` exactly on members with children, none at the root). A caller
 * whose set has not changed can then copy the tree rather than rebuild it.
 */
export function readFieldsV1(tree: unknown): { set: FieldSet; canonical: boolean } {
  const out: FieldSet = new Set();
  let canonical = isObject(tree);
  const walk = (node: unknown, key: string, depth: number) => {
    if (!isObject(node)) {
      canonical = false;
      return;
    }
    const keys = Object.keys(node);
    if (keys.length === 0 && depth) out.add(key);
    let prev: string | undefined;
    for (const t of keys) {
      // Tokens are 'f:', 'k:', 'v:', 'i:' plus text: never integer-like, so the object keeps the sorted order.
      if ((prev !== undefined && !(prev < t)) || (t !== '.' && (t[1] !== ':' || t.includes(SEP)))) canonical = false;
      prev = t;
      if (t === '.') {
        const v = node[t];
        if (!depth || keys.length === 1 || !isObject(v) || Object.keys(v).length > 0) canonical = false;
        out.add(key);
      } else walk(node[t], depth ? `${key}${SEP}${t}` : t, depth + 1);
    }
  };
  walk(tree, '', 0);
  return { set: out, canonical };
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
