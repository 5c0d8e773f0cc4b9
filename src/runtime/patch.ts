/**
 * Patches for the runtime client. `mergeFrom(original)` is controller-runtime's
 * client.MergeFrom: the JSON merge patch (RFC 7386) that turns `original`
 * into the object handed to `patch()`, computed when the patch is sent.
 */
import { deepEqual } from '../api/equality.js';
import type { RuntimeObject } from './kinds.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** A patch body sent as is. */
export interface RawPatch {
  type: 'json' | 'merge' | 'strategic';
  data: unknown;
}

/** The merge patch from `original` to the patched object. */
export interface MergeFromPatch {
  type: 'mergeFrom';
  original: RuntimeObject;
  /** Include metadata.resourceVersion of `original`, so the write fails with 409 if the object changed since. */
  optimisticLock: boolean;
}

export type Patch = RawPatch | MergeFromPatch;

export function mergeFrom(original: RuntimeObject, opts: { optimisticLock?: boolean } = {}): MergeFromPatch {
  return { type: 'mergeFrom', original: deepCopy(original), optimisticLock: opts.optimisticLock ?? false };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The RFC 7386 merge patch turning `from` into `to`: changed keys with their
 * new value, removed keys as null, objects diffed recursively, arrays and
 * scalars replaced whole. An empty object when nothing changed.
 */
export function createMergePatch(from: unknown, to: unknown): Record<string, Json> {
  const out: Record<string, Json> = {};
  const a = isObject(from) ? from : {};
  const b = isObject(to) ? to : {};
  for (const k of Object.keys(a)) {
    if (a[k] !== undefined && (!(k in b) || b[k] === undefined)) out[k] = null;
  }
  for (const [k, v] of Object.entries(b)) {
    if (v === undefined) continue;
    const old = a[k];
    if (isObject(old) && isObject(v)) {
      const sub = createMergePatch(old, v);
      if (Object.keys(sub).length > 0) out[k] = sub;
    } else if (!deepEqual(old, v)) {
      out[k] = v;
    }
  }
  return out;
}
