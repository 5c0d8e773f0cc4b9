/**
 * Server-side apply and managedFields bookkeeping (a structured-merge-diff
 * subset):
 *
 * - `serverSideApply(live, applied, opts)`: merges the applied configuration
 *   into the live object (associative lists by key, set lists as sets, atomic
 *   lists replaced), removes fields the manager applied before and no longer
 *   applies unless another manager owns them, and records an `Apply` entry.
 *   A field another manager owns with a different value is a conflict: 409 with
 *   Kubernetes' message and `details.causes`, unless `force` takes it over.
 * - `recordUpdate(old, updated, manager, now)`: for PUT/PATCH/POST, the manager
 *   takes the fields whose values it changed (`Update` entry); others lose them.
 */
import type { GroupVersionKind, KubeObject } from '../../api/types.js';
import { StatusError, newStatus } from '../../client/errors.js';
import type { ManagedFieldsEntry } from 'kubernetes-types/meta/v1.js';
import { SEP, displayPath, fieldSetAndChanges, fieldSetOf, pathKey, readFieldsV1, itemKeyToken, listKindOf, pathTokens, removeAt, toFieldsV1, valueAt, type FieldSet } from './field-set.js';
import { isObject, jsonEqual, type JsonObject } from './json-value.js';
import { childSchema, fieldMeta, genericObjectSchema, itemSchema, schemaForKind, type SchemaNode } from './schema.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface ApplyOptions {
  fieldManager: string;
  force: boolean;
  gvk: GroupVersionKind;
  isCustomResource?: boolean;
  /** RFC 3339 time for the managedFields entry; defaults to now. */
  now?: string;
  /** 'status' when applying to the status subresource. */
  subresource?: string;
}

const apiVersionOf = (gvk: GroupVersionKind) => (gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version);
const nowRfc3339 = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

function schemaOf(gvk: GroupVersionKind, isCustomResource?: boolean): SchemaNode {
  return (isCustomResource ? undefined : schemaForKind(gvk)) ?? genericObjectSchema();
}

/**
 * The field manager for a non-apply write, as kube-apiserver picks it: the
 * `fieldManager` parameter, else the user agent up to its first '/'.
 */
export function defaultFieldManager(fieldManager: string | undefined | null, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const ua = (userAgent ?? '').split('/')[0] ?? '';
  return ua.slice(0, 128) || 'unknown';
}

interface Owned {
  entry: ManagedFieldsEntry;
  set: FieldSet;
  /**
   * The entry's fieldsV1 when it is exactly toFieldsV1(set) (readFieldsV1's
   * `canonical`), for writeEntries to copy rather than rebuild; whoever
   * changes `set` clears it (recordUpdate does; serverSideApply never keeps it).
   */
  tree?: JsonObject;
}

function readEntries(obj: KubeObject | undefined, keepTrees = false): Owned[] {
  return (obj?.metadata?.managedFields ?? []).map((entry) => {
    const { set, canonical } = readFieldsV1(entry.fieldsV1);
    const o: Owned = { entry: { ...entry }, set };
    if (keepTrees && canonical) o.tree = entry.fieldsV1 as JsonObject;
    return o;
  });
}

function writeEntries(obj: KubeObject, owned: Owned[]): void {
  const entries = owned.filter((o) => o.set.size > 0).map((o) => ({ ...o.entry, fieldsType: 'FieldsV1', fieldsV1: o.tree ? deepCopy(o.tree) : toFieldsV1(o.set) }));
  obj.metadata = { ...(obj.metadata ?? {}) };
  if (entries.length) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

function isPrefixOrSelf(prefix: string, key: string): boolean {
  return key === prefix || key.startsWith(`${prefix}\n`);
}

/** Merges `applied` into `live` (both plain JSON) following list semantics. */
function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode): unknown {
  if (!isObject(applied)) return deepCopy(applied);
  const out: JsonObject = isObject(live) ? live : {};
  for (const [k, v] of Object.entries(applied)) {
    if (v === null || v === undefined) continue;
    if (isObject(v)) out[k] = mergeApplied(out[k], v, childSchema(schema, k));
    else if (Array.isArray(v)) {
      const lk = listKindOf(fieldMeta(schema, k));
      const cur = Array.isArray(out[k]) ? (out[k] as unknown[]) : [];
      if (lk.kind === 'set') {
        const merged = cur.slice();
        for (const x of v) if (!merged.some((y) => jsonEqual(x, y))) merged.push(deepCopy(x));
        out[k] = merged;
      } else if (lk.kind === 'map') {
        const merged = cur.slice();
        for (const item of v) {
          if (!isObject(item)) continue;
          const tok = itemKeyToken(item, lk.keys);
          const i = merged.findIndex((x) => isObject(x) && itemKeyToken(x, lk.keys) === tok);
          if (i >= 0) merged[i] = mergeApplied(merged[i], item, itemSchema(schema, k));
          else merged.push(deepCopy(item));
        }
        out[k] = merged;
      } else out[k] = deepCopy(v);
    } else out[k] = v;
  }
  return out;
}

function conflictError(conflicts: { manager: string; apiVersion: string; path: string }[]): StatusError {
  const byManager = new Map<string, { apiVersion: string; paths: string[] }>();
  for (const c of conflicts) {
    const g = byManager.get(c.manager) ?? { apiVersion: c.apiVersion, paths: [] };
    g.paths.push(displayPath(c.path));
    byManager.set(c.manager, g);
  }
  const parts = [...byManager].map(([m, g]) =>
    g.paths.length === 1 ? `conflict with "${m}" using ${g.apiVersion}: ${g.paths[0]}` : `conflicts with "${m}" using ${g.apiVersion}:\n${g.paths.map((p) => `- ${p}`).join('\n')}`,
  );
  const n = conflicts.length;
  const message = `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`;
  return new StatusError(
    newStatus(409, 'Conflict', message, {
      causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: displayPath(c.path) })),
    }),
  );
}

/** Applies `applied` for `opts.fieldManager`; returns the new object (inputs are not changed). */
export function serverSideApply(live: KubeObject | undefined, applied: KubeObject, opts: ApplyOptions): KubeObject {
  const schema = schemaOf(opts.gvk, opts.isCustomResource);
  const includeStatus = opts.subresource === 'status';
  const appliedSet = fieldSetOf(applied as JsonObject, schema, includeStatus);
  const now = opts.now ?? nowRfc3339();
  const owned = readEntries(live);
  const mine = (o: Owned) => o.entry.manager === opts.fieldManager && o.entry.operation === 'Apply' && (o.entry.subresource ?? '') === (opts.subresource ?? '');

  // Conflicts: leaves another manager owns whose value the apply would change.
  const conflicts: { manager: string; apiVersion: string; path: string; owner: Owned }[] = [];
  if (live) {
    for (const o of owned) {
      if (mine(o)) continue;
      for (const p of appliedSet) {
        if (!o.set.has(p)) continue;
        const a = valueAt(applied, p);
        if (isObject(a) || (Array.isArray(a) && listKindOf(fieldMetaAt(schema, p)).kind !== 'atomic')) continue;
        if (!jsonEqual(valueAt(live, p), a)) conflicts.push({ manager: o.entry.manager ?? '', apiVersion: o.entry.apiVersion ?? '', path: p, owner: o });
      }
    }
    if (conflicts.length && !opts.force) {
      // kubectl upgrading from client-side apply: fields its last-applied annotation still matches are its own.
      const allowed = opts.fieldManager === 'kubectl' ? allowedFromLastApplied(live, schema, apiVersionOf(opts.gvk)) : undefined;
      const remaining = allowed ? conflicts.filter((c) => !allowed.has(c.path)) : conflicts;
      if (remaining.length) throw conflictError(remaining);
    }
    for (const c of conflicts) c.owner.set.delete(c.path);
  }

  const base = live ? deepCopy(live) : ({} as KubeObject);
  const result = mergeApplied(base, deepCopy(applied), schema) as KubeObject;

  // Fields this manager applied before and no longer applies go, unless someone else owns them.
  const previous = owned.find(mine);
  if (previous) {
    const others = owned.filter((o) => o !== previous);
    const dropped = [...previous.set].filter((p) => !appliedSet.has(p)).sort((a, b) => pathTokens(a).length - pathTokens(b).length); // parents first: removing a list item by key needs its key fields
    for (const p of dropped) {
      if ([...appliedSet].some((q) => isPrefixOrSelf(p, q))) continue;
      if (others.some((o) => [...o.set].some((q) => isPrefixOrSelf(p, q)))) continue;
      if (pathTokens(p)[0] === 'f:metadata' && pathTokens(p).length === 1) continue;
      removeAt(result as JsonObject, p);
    }
  }

  const entry: ManagedFieldsEntry = { manager: opts.fieldManager, operation: 'Apply', apiVersion: apiVersionOf(opts.gvk), time: now, fieldsType: 'FieldsV1' };
  if (opts.subresource) entry.subresource = opts.subresource;
  const next = owned.filter((o) => !mine(o));
  next.push({ entry, set: appliedSet });
  // Others no longer own what the apply took from them or what it removed.
  writeEntries(result, next);
  return result;
}

/**
 * The fields of the `kubectl.kubernetes.io/last-applied-configuration`
 * annotation whose values the live object still has, as kube-apiserver's
 * lastAppliedManager computes them: a `kubectl apply --server-side` may take
 * these from other managers without --force-conflicts. Undefined when there is
 * no usable annotation.
 */
function allowedFromLastApplied(live: KubeObject, schema: SchemaNode, apiVersion: string): FieldSet | undefined {
  const raw = live.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
  if (!raw) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return undefined; // upstream treats an undecodable annotation as absent, keeping the conflicts
  }
  if (!isObject(last) || last.apiVersion !== apiVersion) return undefined;
  const out: FieldSet = new Set();
  for (const p of fieldSetOf(last, schema)) {
    const a = valueAt(last, p);
    const l = valueAt(live, p);
    if (l === undefined) continue;
    if (isObject(a) || (Array.isArray(a) && listKindOf(fieldMetaAt(schema, p)).kind !== 'atomic') || jsonEqual(a, l)) out.add(p);
  }
  return out;
}

/** The field meta of the last field token of a path (for list kinds). */
function fieldMetaAt(schema: SchemaNode, key: string): ReturnType<typeof fieldMeta> {
  let node = schema;
  const tokens = pathTokens(key);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.startsWith('f:')) continue;
    const name = t.slice(2);
    if (i === tokens.length - 1) return fieldMeta(node, name);
    const next = tokens[i + 1];
    node = next && !next.startsWith('f:') ? itemSchema(node, name) : childSchema(node, name);
  }
  return undefined;
}

/**
 * Records a non-apply write (create, update, patch) by `manager` in
 * `updated.metadata.managedFields` (mutates `updated`). The manager takes every
 * field whose value changed; fields that are gone are dropped from every entry.
 */
export function recordUpdate(old: KubeObject | undefined, updated: KubeObject, manager: string, now: string = nowRfc3339(), opts: { gvk?: GroupVersionKind; isCustomResource?: boolean; subresource?: string } = {}): void {
  const gvk = opts.gvk ?? gvkOf(updated);
  const schema = schemaOf(gvk, opts.isCustomResource);
  const includeStatus = opts.subresource === 'status';
  const { set: newSet, changed } = fieldSetAndChanges(updated as JsonObject, old, schema, includeStatus);
  // Entries come from the old object: a client cannot rewrite ownership by sending managedFields in an update
  // unless it sends a changed list (then upstream takes it as given).
  const sent = updated.metadata?.managedFields;
  const prior = old?.metadata?.managedFields;
  const owned = sent && !jsonEqual(sent, prior) ? readEntries(updated, true) : readEntries(old, true);
  // A write that does not carry status (the main resource) leaves the status fields' owners alone.
  const statusPrefix = pathKey(['f:status']);
  const outOfScope = (p: string) => !includeStatus && (p === statusPrefix || p.startsWith(`${statusPrefix}${SEP}`));
  const drop = (o: Owned, p: string) => {
    if (o.set.delete(p)) o.tree = undefined;
  };
  for (const o of owned) {
    for (const p of o.set) if (!newSet.has(p) && !outOfScope(p)) drop(o, p);
    if (!(o.entry.manager === manager && o.entry.operation === 'Update')) for (const p of changed) drop(o, p);
  }
  if (changed.length) {
    const sub = opts.subresource ?? '';
    let mine = owned.find((o) => o.entry.manager === manager && o.entry.operation === 'Update' && (o.entry.subresource ?? '') === sub);
    if (!mine) {
      mine = { entry: { manager, operation: 'Update', apiVersion: apiVersionOf(gvk), fieldsType: 'FieldsV1' }, set: new Set() };
      if (sub) mine.entry.subresource = sub;
      owned.push(mine);
    }
    mine.entry.time = now;
    mine.entry.apiVersion = apiVersionOf(gvk);
    for (const p of changed) {
      if (mine.set.has(p)) continue;
      mine.set.add(p);
      mine.tree = undefined;
    }
  }
  writeEntries(updated, owned);
}

function gvkOf(obj: KubeObject): GroupVersionKind {
  const av = obj.apiVersion ?? 'v1';
  const i = av.indexOf('/');
  return { group: i < 0 ? '' : av.slice(0, i), version: i < 0 ? av : av.slice(i + 1), kind: obj.kind ?? '' };
}

