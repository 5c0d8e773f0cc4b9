/**
 * Deletion as the generic registry store does it (store.go Delete):
 * preconditions, graceful deletion (pods), garbage-collection finalizers from
 * the propagation policy, objects kept with deletionTimestamp while
 * finalizers remain, and the immediate delete otherwise.
 */
import type { KubeObject, Status } from '../api/types.js';
import { rfc3339, parseTime } from '../util/clock/clock.js';
import { StorageError } from './storage/storage.js';
import type { ServedResource } from './resources.js';
import type { UserInfo } from './request-info.js';
import type { AdmissionRequestInfo } from './admission/admission.js';
import { meta, presentStored, type Store } from './store.js';
import { badRequest, conflict, notFound, successStatus } from './status.js';
import { parseInt64 } from './parse-int.js';
import { deepCopy } from '../util/json/deep-copy.js';

export const orphanFinalizer = 'orphan';
export const foregroundFinalizer = 'foregroundDeletion';

/** 9999-12-31T23:59:59Z, the latest time metav1.Time writes. */
const latestTimeMs = Date.UTC(9999, 11, 31, 23, 59, 59);

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface DeleteRequest {
  propagationPolicy?: PropagationPolicy;
  /** Legacy: true orphans, false deletes dependents in the background... and answers 202. */
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
  user: UserInfo;
  /** The request's options and warning sink, for admission webhooks. */
  admission?: AdmissionRequestInfo;
}

export interface DeleteResult {
  /** The object (when it lingers, or when the resource returns deleted objects) or a success Status. */
  body: KubeObject | Status;
  /** True when the object left storage. */
  deleted: boolean;
  /** The object's last state. */
  object: KubeObject;
}

/** Reads DeleteOptions from a body (may be undefined) and the query, body first as upstream. */
export function parseDeleteOptions(body: unknown, query: URLSearchParams, user: UserInfo): DeleteRequest {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (b.kind !== undefined && b.kind !== 'DeleteOptions') throw badRequest(`expected DeleteOptions, got ${String(b.kind)}`);
  const out: DeleteRequest = { dryRun: false, user };
  const policy = (b.propagationPolicy ?? query.get('propagationPolicy') ?? undefined) as string | undefined;
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw badRequest(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`);
    }
    out.propagationPolicy = policy;
  }
  const orphan = b.orphanDependents ?? query.get('orphanDependents') ?? undefined;
  if (orphan !== undefined && orphan !== null) out.orphanDependents = orphan === true || orphan === 'true';
  if (out.orphanDependents !== undefined && out.propagationPolicy !== undefined) {
    throw badRequest('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "' + out.propagationPolicy + '": orphanDependents and deletionPropagation cannot be both set');
  }
  const grace = b.gracePeriodSeconds ?? query.get('gracePeriodSeconds') ?? undefined;
  if (typeof grace === 'string') out.gracePeriodSeconds = parseInt64(grace);
  else if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isInteger(grace)) throw badRequest(`invalid gracePeriodSeconds: ${String(grace)}`);
    out.gracePeriodSeconds = grace;
  }
  const pre = b.preconditions as { uid?: string; resourceVersion?: string } | undefined;
  if (pre && typeof pre === 'object') out.preconditions = { ...pre };
  const dry = b.dryRun ?? query.getAll('dryRun');
  out.dryRun = isDryRun(dry);
  return out;
}

/** `dryRun=All` (query or body list); anything else but empty is 400, as upstream. */
export function isDryRun(v: unknown): boolean {
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  for (const x of list) if (x !== 'All') throw badRequest(`Invalid dry run value: "${String(x)}". Valid values are: All`);
  return list.length > 0;
}

export function checkPreconditions(r: ServedResource, obj: KubeObject, pre: DeleteRequest['preconditions']): void {
  if (!pre) return;
  const m = obj.metadata ?? {};
  if (pre.uid && pre.uid !== m.uid) {
    throw conflict(r, m.name ?? '', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid ?? ''}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== m.resourceVersion) {
    throw conflict(r, m.name ?? '', `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion ?? ''}`);
  }
}

/** Which GC finalizers the object should carry after this delete (store.go deletionFinalizersForGarbageCollection). */
export function gcFinalizers(r: ServedResource, obj: KubeObject, req: Pick<DeleteRequest, 'propagationPolicy' | 'orphanDependents'>): string[] {
  const has = new Set(obj.metadata?.finalizers ?? []);
  let orphan: boolean;
  if (req.orphanDependents !== undefined) orphan = req.orphanDependents;
  else if (req.propagationPolicy !== undefined) orphan = req.propagationPolicy === 'Orphan';
  else if (has.has(foregroundFinalizer)) orphan = false;
  else if (has.has(orphanFinalizer)) orphan = true;
  else orphan = r.strategy.defaultDeletePropagation === 'Orphan';
  let foreground: boolean;
  if (req.orphanDependents !== undefined) foreground = false;
  else if (req.propagationPolicy !== undefined) foreground = req.propagationPolicy === 'Foreground';
  else foreground = has.has(foregroundFinalizer);
  let out = [...(obj.metadata?.finalizers ?? [])];
  if (orphan && !has.has(orphanFinalizer)) out.push(orphanFinalizer);
  if (!orphan) out = out.filter((f) => f !== orphanFinalizer);
  if (foreground && !has.has(foregroundFinalizer)) out.push(foregroundFinalizer);
  if (!foreground) out = out.filter((f) => f !== foregroundFinalizer);
  return out;
}

/** store.go markAsDeleting: deletionTimestamp now (or earlier), grace 0, generation bumped once. */
function markAsDeleting(obj: KubeObject, nowMs: number): void {
  const m = meta(obj);
  if (!m.deletionTimestamp && (m.generation ?? 0) > 0) m.generation = m.generation! + 1;
  const existing = parseTime(m.deletionTimestamp);
  if (existing === undefined || existing > nowMs) m.deletionTimestamp = rfc3339(nowMs);
  m.deletionGracePeriodSeconds = 0;
}

/**
 * Deletes one object. `prepare` lets callers (namespaces) adjust the object
 * before the generic logic, e.g. to keep it while spec.finalizers remain.
 */
export async function deleteObject(store: Store, r: ServedResource, ns: string, name: string, req: DeleteRequest): Promise<DeleteResult> {
  const { clock } = store.deps;
  for (let attempt = 0; ; attempt++) {
    const cur = await store.getStored(r, ns, name);
    if (!cur) throw notFound(r, name);
    const old = await presentStored(r, cur.object);
    checkPreconditions(r, old, req.preconditions);
    await store.deps.admission.validate({
      operation: 'DELETE', resource: r, subresource: '', namespace: ns, name, object: undefined, oldObject: old, user: req.user, dryRun: req.dryRun, request: req.admission,
    });
    const obj = deepCopy(old);
    const m = meta(obj);
    const now = clock.now();
    // Graceful deletion (BeforeDelete).
    let graceful = false;
    let pendingGraceful = false;
    const grace = r.strategy.gracePeriod?.(obj, req.gracePeriodSeconds);
    if (grace !== undefined && grace > 0) {
      const existing = m.deletionGracePeriodSeconds;
      if (m.deletionTimestamp && existing !== undefined && existing !== null && existing > 0 && grace >= existing) {
        pendingGraceful = true; // a later delete may shorten, never lengthen
      } else {
        // However long the grace, the deadline stays a time RFC 3339 can write.
        const requested = Math.min(now + grace * 1000, latestTimeMs);
        const existingAt = parseTime(m.deletionTimestamp);
        if (!m.deletionTimestamp && (m.generation ?? 0) > 0) m.generation = m.generation! + 1;
        if (existingAt === undefined || requested < existingAt) m.deletionTimestamp = rfc3339(requested);
        m.deletionGracePeriodSeconds = grace;
        graceful = true;
      }
    } else if (m.deletionTimestamp && (m.deletionGracePeriodSeconds ?? 0) > 0 && grace === undefined && r.strategy.gracePeriod) {
      pendingGraceful = true;
    }
    const finalizers = gcFinalizers(r, obj, req);
    const finalizersChanged = finalizers.join('\u0000') !== (m.finalizers ?? []).join('\u0000');
    if (finalizers.length) m.finalizers = finalizers;
    else delete m.finalizers;
    try {
      if (pendingGraceful && !finalizersChanged) return { body: old, deleted: false, object: old };
      if (graceful || pendingGraceful || finalizers.length > 0) {
        if (!graceful && !pendingGraceful) markAsDeleting(obj, now);
        if (req.dryRun) return { body: obj, deleted: false, object: obj };
        const out = await store.rawUpdate(r, ns, name, obj, cur.revision);
        return { body: out, deleted: false, object: out };
      }
      if (req.dryRun) return { body: r.returnDeletedObject ? old : successFor(r, old), deleted: true, object: old };
      const gone = await store.deps.storage.delete(store.key(r, ns, name), { revision: cur.revision });
      store.deps.hooks.get(`${r.group}/${r.resource}`)?.afterDelete?.(gone.object);
      const last = await presentStored(r, gone.object);
      return { body: r.returnDeletedObject ? last : successFor(r, last), deleted: true, object: last };
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict' && attempt < 5) continue;
      if (err instanceof StorageError && err.code === 'NotFound') throw notFound(r, name);
      throw err;
    }
  }
}

function successFor(r: ServedResource, obj: KubeObject): Status {
  const d: NonNullable<Status['details']> = { name: obj.metadata?.name ?? '', kind: r.resource };
  if (r.group) d.group = r.group;
  if (obj.metadata?.uid) d.uid = obj.metadata.uid;
  return successStatus(d);
}
