/**
 * Strategic merge patch, as apimachinery's strategicpatch.StrategicMergeMapPatch
 * applies it on the server (MergeParallelList and IgnoreUnmatchedNulls on):
 *
 * - maps merge key by key; `null` deletes a key;
 * - a list whose field has `x-kubernetes-patch-strategy: merge` merges: lists of
 *   objects by `x-kubernetes-patch-merge-key`, lists of scalars as a set
 *   (finalizers); other lists are replaced;
 * - directives: `$patch: replace|delete` in a map, `$patch: replace|delete|merge`
 *   as a list element, `$retainKeys`, `$setElementOrder/<field>`,
 *   `$deleteFromPrimitiveList/<field>`.
 *
 * Errors are PatchError with the mergepatch package's messages; 400 for
 * malformed directives, 422 for lists of lists and retainKeys mismatches.
 */
import { PatchError } from './patch-errors.js';
import { describe, isObject, jsonEqual, type JsonObject } from './json-value.js';
import { childSchema, fieldMeta, hasStrategy, itemSchema, type SchemaNode } from './schema.js';
import { deepCopy } from '../../util/json/deep-copy.js';

const directiveMarker = '$patch';
const retainKeysDirective = '$retainKeys';
const setElementOrderPrefix = '$setElementOrder/';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList/';

export const ErrBadPatchFormatForPrimitiveList = 'invalid patch format of primitive list';
export const ErrBadPatchFormatForRetainKeys = 'invalid patch format of retainKeys';
export const ErrBadPatchFormatForSetElementOrderList = 'invalid patch format of setElementOrder list';
export const ErrPatchContentNotMatchRetainKeys = "patch content doesn't match retainKeys list";
export const ErrNoListOfLists = 'lists of lists are not supported';

/** Applies a strategic merge patch to a copy of `original` using `schema` for list semantics. */
export function applyStrategicMergePatch(original: JsonObject, patch: unknown, schema: SchemaNode): JsonObject {
  if (!isObject(patch)) throw new PatchError('invalid JSON document', 400);
  return mergeMap(deepCopy(original), deepCopy(patch), schema);
}

function badPatchType(t: unknown, m: unknown): PatchError {
  return new PatchError(`unknown patch type: ${String(t)} in map: ${describe(m)}`, 400);
}

function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: SchemaNode): JsonObject {
  if (Object.prototype.hasOwnProperty.call(patch, directiveMarker)) {
    const d = patch[directiveMarker];
    if (d === 'replace') {
      delete patch[directiveMarker];
      return cleanNewValue(patch) as JsonObject;
    }
    if (d === 'delete') return {};
    throw badPatchType(d, patch);
  }
  const out: JsonObject = original ?? {};
  applyRetainKeys(out, patch);
  mergeSetElementOrderLists(out, patch, schema);

  for (const [rawKey, patchV] of Object.entries(patch)) {
    let k = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(setElementOrderPrefix)) continue; // handled above
    if (rawKey.startsWith(deleteFromPrimitiveListPrefix)) {
      k = rawKey.slice(deleteFromPrimitiveListPrefix.length);
      if (!Array.isArray(patchV)) throw new PatchError(ErrBadPatchFormatForPrimitiveList, 400);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete out[k];
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(out, k)) {
      if (!isDeleteList) out[k] = cleanNewValue(patchV);
      continue;
    }
    const origV = out[k];
    if (kindOf(origV) !== kindOf(patchV)) {
      if (!isDeleteList) out[k] = cleanNewValue(patchV);
      continue;
    }
    if (isObject(origV)) {
      const m = fieldMeta(schema, k);
      out[k] = hasStrategy(m, 'replace') ? cleanNewValue(patchV) : mergeMap(origV, patchV as JsonObject, childSchema(schema, k));
    } else if (Array.isArray(origV)) {
      const m = fieldMeta(schema, k);
      if (isDeleteList) out[k] = deleteFromSlice(origV, patchV as unknown[]);
      else if (!hasStrategy(m, 'merge')) out[k] = cleanNewValue(patchV);
      else out[k] = mergeSlice(origV, patchV as unknown[], itemSchema(schema, k), m?.mergeKey ?? '');
    } else out[k] = patchV;
  }
  return out;
}

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v;
}

/** A value taken whole from the patch: drop nulls (IgnoreUnmatchedNulls) and directive keys. */
function cleanNewValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => !(isObject(x) && x[directiveMarker] !== undefined && Object.keys(x).length === 1)).map(cleanNewValue);
  if (!isObject(v)) return v;
  for (const [k, x] of Object.entries(v)) {
    if (x === null || k === directiveMarker || k === retainKeysDirective || k.startsWith(setElementOrderPrefix) || k.startsWith(deleteFromPrimitiveListPrefix)) delete v[k];
    else v[k] = cleanNewValue(x);
  }
  return v;
}

/** `$retainKeys`: keys of the original not listed are dropped; the patch may only set listed keys. */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.prototype.hasOwnProperty.call(patch, retainKeysDirective)) return;
  const keys = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) throw new PatchError(ErrBadPatchFormatForRetainKeys, 400);
  const retain = new Set(keys as string[]);
  for (const k of Object.keys(patch)) {
    if (k.startsWith('$')) continue;
    if (!retain.has(k)) throw new PatchError(ErrPatchContentNotMatchRetainKeys, 422);
  }
  for (const k of Object.keys(original)) if (!retain.has(k)) delete original[k];
}

/**
 * `$setElementOrder/<field>`: merge the patch's list (if any) into the original,
 * then order elements named by the directive as it says, keeping server-only
 * elements at their relative positions.
 */
function mergeSetElementOrderLists(original: JsonObject, patch: JsonObject, schema: SchemaNode): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(setElementOrderPrefix)) continue;
    const field = key.slice(setElementOrderPrefix.length);
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw new PatchError(ErrBadPatchFormatForSetElementOrderList, 400);
    const m = fieldMeta(schema, field);
    const mergeKey = m?.mergeKey ?? '';
    const origList = Array.isArray(original[field]) ? (original[field] as unknown[]) : [];
    const patchList = Array.isArray(patch[field]) ? (patch[field] as unknown[]) : [];
    const deleteKey = deleteFromPrimitiveListPrefix + field;
    let merged = patchList.length || Object.prototype.hasOwnProperty.call(patch, field) ? mergeSliceUnordered(origList, patchList, itemSchema(schema, field), mergeKey) : origList.slice();
    if (Array.isArray(patch[deleteKey])) {
      merged = deleteFromSlice(merged, patch[deleteKey] as unknown[]);
      delete patch[deleteKey];
    }
    const id = (x: unknown) => (mergeKey && isObject(x) ? x[mergeKey] : x);
    const orderIds = order.map((x) => id(x));
    const inOrder = merged.filter((x) => orderIds.some((o) => jsonEqual(o, id(x))));
    const serverOnly = merged.filter((x) => !orderIds.some((o) => jsonEqual(o, id(x))));
    inOrder.sort((a, b) => indexOfId(orderIds, id(a)) - indexOfId(orderIds, id(b)));
    original[field] = mergeSortedByServerOrder(inOrder, serverOnly, origList.map(id), id);
    delete patch[field];
  }
}

function indexOfId(ids: unknown[], v: unknown): number {
  return ids.findIndex((x) => jsonEqual(x, v));
}

/** Interleaves `left` (ordered by the patch) and `right` (server-only) by their positions in the server's list. */
function mergeSortedByServerOrder(left: unknown[], right: unknown[], serverIds: unknown[], id: (x: unknown) => unknown): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const li = indexOfId(serverIds, id(left[i]));
    const rj = indexOfId(serverIds, id(right[j]));
    // As apimachinery's mergeSortedSlice: the patch's element goes first only when both are on the server and it is in front.
    if (li >= 0 && rj >= 0 && li < rj) out.push(left[i++]);
    else out.push(right[j++]);
  }
  return out.concat(left.slice(i), right.slice(j));
}

function deleteFromSlice(original: unknown[], toDelete: unknown[]): unknown[] {
  return original.filter((x) => !toDelete.some((d) => jsonEqual(d, x)));
}

function elementKind(original: unknown[], patch: unknown[]): 'map' | 'scalar' | 'empty' {
  let kind: 'map' | 'scalar' | 'empty' = 'empty';
  for (const x of [...original, ...patch]) {
    if (Array.isArray(x)) throw new PatchError(ErrNoListOfLists, 422);
    const k = isObject(x) ? 'map' : 'scalar';
    if (kind !== 'empty' && kind !== k) throw new PatchError(`mismatched element types in list: ${describe(original)} and ${describe(patch)}`, 400);
    kind = k;
  }
  return kind;
}

/** The merge of a `merge`-strategy list, then ordered as upstream: patch items in patch order, server-only items kept in place. */
function mergeSlice(original: unknown[], patch: unknown[], schema: SchemaNode, mergeKey: string): unknown[] {
  const merged = mergeSliceUnordered(original, patch, schema, mergeKey);
  const kind = elementKind(original, patch);
  const id = (x: unknown) => (kind === 'map' && mergeKey && isObject(x) ? x[mergeKey] : x);
  const patchIds = patch.filter((x) => !(isObject(x) && directiveMarker in x)).map(id);
  const patchItems = merged.filter((x) => patchIds.some((p) => jsonEqual(p, id(x))));
  const serverOnly = merged.filter((x) => !patchIds.some((p) => jsonEqual(p, id(x))));
  patchItems.sort((a, b) => indexOfId(patchIds, id(a)) - indexOfId(patchIds, id(b)));
  return mergeSortedByServerOrder(patchItems, serverOnly, original.map(id), id);
}

function mergeSliceUnordered(original: unknown[], patch: unknown[], schema: SchemaNode, mergeKey: string): unknown[] {
  const kind = elementKind(original, patch);
  if (kind === 'empty') return [];
  if (kind === 'scalar') {
    const out: unknown[] = [];
    for (const x of [...original, ...patch]) if (!out.some((y) => jsonEqual(x, y))) out.push(x);
    return out;
  }
  if (!mergeKey) throw new PatchError('cannot merge lists without merge key', 400);
  let orig = original.slice() as JsonObject[];
  const rest: JsonObject[] = [];
  // Special elements first: `$patch: delete` removes by key, `$patch: replace` drops the original list.
  for (const p of patch as JsonObject[]) {
    if (!Object.prototype.hasOwnProperty.call(p, directiveMarker)) {
      rest.push(p);
      continue;
    }
    const d = p[directiveMarker];
    if (d === 'delete') {
      if (!Object.prototype.hasOwnProperty.call(p, mergeKey)) throw new PatchError(`map: ${describe(p)} does not contain declared merge key: ${mergeKey}`, 400);
      orig = orig.filter((o) => !jsonEqual(o[mergeKey], p[mergeKey]));
    } else if (d === 'replace') {
      orig = [];
    } else if (d === 'merge') {
      // `$patch: merge` is the default for merge lists: nothing to do.
    } else throw badPatchType(d, p);
  }
  for (const p of rest) {
    if (!Object.prototype.hasOwnProperty.call(p, mergeKey)) throw new PatchError(`map: ${describe(p)} does not contain declared merge key: ${mergeKey}`, 400);
    const i = orig.findIndex((o) => isObject(o) && jsonEqual(o[mergeKey], p[mergeKey]));
    if (i >= 0) orig[i] = mergeMap(orig[i], p, schema);
    else orig.push(cleanNewValue(p) as JsonObject);
  }
  return orig;
}
