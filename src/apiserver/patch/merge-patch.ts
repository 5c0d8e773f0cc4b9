/**
 * JSON Merge Patch (RFC 7396): objects merge key by key, `null` deletes a key,
 * everything else (arrays included) replaces. Values added from the patch
 * have their nested nulls removed, as the RFC's algorithm does.
 */
import { PatchError } from './patch-errors.js';
import { isObject, type JsonObject } from './json-value.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** Applies `patch` to a copy of `target`. Throws PatchError(400) for a patch that is not an object. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) throw new PatchError('Invalid JSON Patch', 400);
  return merge(deepCopy(target), patch);
}

function merge(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return pruneNulls(deepCopy(patch));
  const out: JsonObject = isObject(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/** Removes null members of objects, recursively (arrays keep their nulls, objects inside them are pruned). */
export function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (!isObject(v)) return v;
  for (const [k, x] of Object.entries(v)) {
    if (x === null) delete v[k];
    else pruneNulls(x);
  }
  return v;
}
