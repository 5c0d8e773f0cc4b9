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

const ATOMIC: ListKind = Object.freeze({ kind: 'atomic' });
const SET: ListKind = Object.freeze({ kind: 'set' });
/** listKindOf of each field meta of the (static) patch-meta table, made once. */
const listKinds = new WeakMap<FieldMeta, ListKind>();

/** How a list field's items are told apart (the result is shared: do not change it). */
export function listKindOf(m: FieldMeta | undefined): ListKind {
  if (!m) return ATOMIC;
  let lk = listKinds.get(m);
  if (!lk) listKinds.set(m, (lk = computeListKind(m)));
  return lk;
}

function computeListKind(m: FieldMeta): ListKind {
  if (m.listType === 'atomic') return ATOMIC;
  if (m.mapKeys?.length) return Object.freeze({ kind: 'map', keys: m.mapKeys });
  if (m.mergeKey && (hasStrategy(m, 'merge') || m.listType === 'map')) return Object.freeze({ kind: 'map', keys: [m.mergeKey] });
  if (m.listType === 'set' || (hasStrategy(m, 'merge') && m.items && !m.items.includes('.'))) return SET;
  return ATOMIC;
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

/**
 * Whether `item`'s token names every key field (each set and not null, or
 * left out with a default): then matchToken's test (each key field of the
 * token equal to the item's, a missing one taken as its default) finds
 * exactly the items of the same token.
 */
function hasAllKeys(item: JsonObject, keys: readonly string[]): boolean {
  for (const name of keys) {
    const v = item[name];
    if (v === null || (v === undefined && !(name in mapKeyDefaults))) return false;
  }
  return true;
}

/**
 * The first item of each token in a map list, as itemValue finds it (an
 * empty map when `list` is not a list); undefined when some item does not
 * name every key field, where only itemValue's search is exact.
 */
function tokenIndex(list: unknown, keys: readonly string[]): Map<string, unknown> | undefined {
  const out = new Map<string, unknown>();
  if (!Array.isArray(list)) return out;
  for (const x of list) {
    if (!isObject(x)) continue;
    if (!hasAllKeys(x, keys)) return undefined;
    const t = itemKeyToken(x, keys);
    if (!out.has(t)) out.set(t, x);
  }
  return out;
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
    // Diffing a map list: the first item of each key in the new and old list, found once per list (see tokenIndex).
    let newIndex: Map<string, unknown> | undefined;
    let oldIndex: Map<string, unknown> | undefined;
    if (diffing && lk.kind === 'map') {
      newIndex = tokenIndex(nv, lk.keys);
      oldIndex = newIndex && tokenIndex(ov, lk.keys);
    }
    for (const item of v) {
      if (lk.kind === 'set') {
        const token = `v:${JSON.stringify(item)}`;
        add(w, join(path, token), diffing ? itemValue(nv, token) : undefined, diffing ? itemValue(ov, token) : undefined, undefined);
      } else if (isObject(item)) {
        const token = itemKeyToken(item, lk.keys);
        const ip = join(path, token);
        const indexed = oldIndex !== undefined && hasAllKeys(item, lk.keys);
        const niv = diffing ? (indexed ? newIndex!.get(token) : itemValue(nv, token)) : undefined;
        const oiv = diffing ? (indexed ? oldIndex!.get(token) : itemValue(ov, token)) : undefined;
        add(w, ip, niv, oiv, undefined);
        walkObject(w, ip, item, items, niv, oiv);
      }
    }
    return;
  }
  add(w, path, nv, ov, diffing && Array.isArray(nv) ? fieldMeta(schema, k) : undefined);
}

function walkObject(w: Walk, prefix: string, obj: JsonObject, schema: SchemaNode, np: unknown, op: unknown): void {
  // for-in over plain JSON objects: their own keys in order, without Object.entries' pair arrays.
  for (const k in obj) {
    const v = obj[k];
    if (v !== undefined && v !== null) walkField(w, prefix, k, v, schema, np, op);
  }
}

/**
 * The FieldsV1 tree of a set (`{"f:spec":{"f:replicas":{}}}`, `"."` for
 * members with children), keys sorted at every level.
 *
 * Built in one pass over the sorted paths: with '\n' between tokens, sorting
 * whole paths puts a path before its descendants and siblings in token order
 * (tokens have no character below '\n': names and JSON; a client's odd token
 * can only leave its own siblings out of order, which a later read treats as
 * not canonical). Each path's parent is found on a stack of the open path, so
 * shared prefixes are walked once.
 */
export function toFieldsV1(set: FieldSet): JsonObject {
  const keys = [...set].sort();
  const root: JsonObject = {};
  // The open path: stackKeys[i] is the key of stackNodes[i], each the parent of the next.
  const stackKeys: string[] = [];
  const stackNodes: JsonObject[] = [];
  for (const key of keys) {
    if (key === '') continue; // the root is no member of the tree (pathTokens('') is [])
    let d = stackKeys.length;
    while (d > 0) {
      const p = stackKeys[d - 1]!;
      if (key.length > p.length && key.charCodeAt(p.length) === 10 && key.startsWith(p)) break;
      d--;
    }
    stackKeys.length = d;
    stackNodes.length = d;
    let node = d > 0 ? stackNodes[d - 1]! : root;
    let pos = d > 0 ? stackKeys[d - 1]!.length + 1 : 0;
    for (;;) {
      const nl = key.indexOf(SEP, pos);
      const token = nl < 0 ? key.slice(pos) : key.slice(pos, nl);
      let child = Object.prototype.hasOwnProperty.call(node, token) ? (node[token] as JsonObject) : undefined;
      if (child === undefined) {
        // A member that gets a child is marked with "." (first: it sorts before every token, and the member was a leaf till now).
        if (node !== root && !Object.prototype.hasOwnProperty.call(node, '.') && set.has(stackKeys[stackKeys.length - 1]!)) node['.'] = {};
        child = {};
        // defineProperty: a client's token "__proto__" is a key like any other.
        if (token === '__proto__') Object.defineProperty(node, token, { value: child, enumerable: true, writable: true, configurable: true });
        else node[token] = child;
      }
      const path = nl < 0 ? key : key.slice(0, nl);
      stackKeys.push(path);
      stackNodes.push(child);
      node = child;
      if (nl < 0) break;
      pos = nl + 1;
    }
  }
  return root;
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
