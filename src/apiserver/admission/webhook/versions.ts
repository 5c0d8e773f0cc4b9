/**
 * The request as a webhook sees it: its resource, kind and objects, and the
 * same request at an equivalent resource (matchPolicy Equivalent: another
 * version of the same stored resource, e.g. autoscaling/v1 and v2
 * HorizontalPodAutoscalers, core and events.k8s.io Events, the served
 * versions of a CRD), with the objects converted to that version.
 */
import type { KubeObject } from '../../../api/types.js';
import { apiVersionOf } from '../../../api/types.js';
import type { AdmissionAttributes } from '../admission.js';
import type { ResourceTable, ServedResource } from '../../resources.js';
import { present } from '../../store.js';
import type { GroupVersionKind, GroupVersionResource } from './admission-review.js';
import { deepCopy } from '../../../util/json/deep-copy.js';

/** The stored location of a resource (equivalent resources share it). */
function storageIdentity(r: ServedResource): string {
  const s = r.storedAs ?? r;
  return `${s.group}/${s.resource}`;
}

/** The resources equivalent to `r` (itself included), in the table's order. */
export function equivalentResources(resources: ResourceTable, r: ServedResource): ServedResource[] {
  const id = storageIdentity(r);
  return resources.all().filter((x) => storageIdentity(x) === id && !x.virtual);
}

/** The kind of `r`'s `subresource` ('' = r's own kind), or undefined when r has no such subresource. */
export function kindFor(r: ServedResource, subresource: string): GroupVersionKind | undefined {
  if (!subresource) return { group: r.group, version: r.version, kind: r.kind };
  const sub = r.subresources.get(subresource);
  return sub ? { group: sub.group, version: sub.version, kind: sub.kind } : undefined;
}

export function gvrOf(r: ServedResource): GroupVersionResource {
  return { group: r.group, version: r.version, resource: r.resource };
}

/**
 * Converts `obj` (served at `from`) to `to`'s version. Built-in kinds go
 * through their stored shape (registry conversions); custom resources
 * through their CRD's conversion (None, or the conversion webhook).
 */
export async function convertObject(from: ServedResource, to: ServedResource, obj: KubeObject): Promise<KubeObject> {
  if (from.group === to.group && from.version === to.version && from.resource === to.resource) return deepCopy(obj);
  if (to.customResource || from.customResource) {
    const conv = to.convert ?? from.convert;
    const src = deepCopy(obj);
    src.apiVersion = apiVersionOf(from.group, from.version);
    if (!conv) {
      const out = present(to, src);
      return out;
    }
    const [out] = await conv([src], to.version);
    return out!;
  }
  const c = deepCopy(obj);
  c.apiVersion = apiVersionOf(from.group, from.version);
  c.kind = from.kind;
  from.encode?.(c);
  return present(to, c);
}

/** The objects a webhook of the request's own version sees: a scale request sees autoscaling/v1 Scales. */
export function requestObjects(a: AdmissionAttributes): { object: KubeObject | undefined; oldObject: KubeObject | undefined } {
  if (a.subresource === 'scale' && a.resource.strategy.scale) {
    const s = a.resource.strategy.scale;
    return {
      object: a.object ? (s.get(a.object) as unknown as KubeObject) : undefined,
      oldObject: a.oldObject ? (s.get(a.oldObject) as unknown as KubeObject) : undefined,
    };
  }
  return { object: a.object, oldObject: a.oldObject };
}

/**
 * Replaces `target`'s content with `source`'s, keeping the identity of
 * `target` and of its metadata object (the store holds references to both
 * while admission runs).
 */
export function replaceInPlace(target: KubeObject, source: KubeObject): void {
  const t = target as Record<string, unknown>;
  const s = source as Record<string, unknown>;
  const meta = t.metadata;
  for (const k of Object.keys(t)) if (!(k in s)) delete t[k];
  for (const [k, v] of Object.entries(s)) {
    if (k === 'metadata' && meta && typeof meta === 'object' && v && typeof v === 'object' && !Array.isArray(v)) {
      const m = meta as Record<string, unknown>;
      for (const mk of Object.keys(m)) if (!(mk in (v as Record<string, unknown>))) delete m[mk];
      Object.assign(m, v);
      t.metadata = m;
    } else t[k] = v;
  }
}
