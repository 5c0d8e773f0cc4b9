/**
 * Encoding of stored objects, shared by the backends.
 *
 * Objects are kept as JSON without `metadata.resourceVersion` (it is not part
 * of the value: it is the revision of the write) and handed out deep-frozen
 * with `metadata.resourceVersion` set, so one decoded object can be shared by
 * every reader and watcher and nobody can change stored state through it.
 */
import type { KubeObject } from '../../api/types.js';

/** JSON text of `obj` without metadata.resourceVersion. */
export function encodeObject(obj: KubeObject): string {
  const meta = obj.metadata;
  if (meta && meta.resourceVersion !== undefined) {
    const { resourceVersion: _rv, ...rest } = meta;
    return JSON.stringify({ ...obj, metadata: rest });
  }
  return JSON.stringify(obj);
}

/** Decodes `json`, sets metadata.resourceVersion to `revision`, and deep-freezes the result. */
export function decodeObject(json: string, revision: number): KubeObject {
  const obj = JSON.parse(json) as KubeObject;
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return deepFreeze(obj);
}

/** A frozen copy of `obj` sharing its (frozen) parts, with metadata.resourceVersion = `revision`. */
export function withRevision(obj: KubeObject, revision: number): KubeObject {
  const copy: KubeObject = { ...obj, metadata: Object.freeze({ ...(obj.metadata ?? {}), resourceVersion: String(revision) }) };
  return Object.freeze(copy);
}

/** Freezes `v` and everything reachable from it; returns `v`. For acyclic plain JSON values. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    Object.freeze(v);
    if (Array.isArray(v)) for (const x of v) deepFreeze(x);
    else for (const k in v) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}
