/**
 * Namespace lifecycle on the server side (pkg/registry/core/namespace):
 * the first DELETE marks the namespace Terminating (deletionTimestamp set)
 * and it stays until the namespace controller empties spec.finalizers with
 * PUT /finalize; then it is removed (metadata.finalizers permitting).
 */
import type { Namespace } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../api/types.js';
import { rfc3339 } from '../util/clock/clock.js';
import type { ServerContext } from './context.js';
import type { ServedResource } from './resources.js';
import type { UserInfo } from './request-info.js';
import { checkPreconditions, deleteObject, foregroundFinalizer, orphanFinalizer, type DeleteRequest, type DeleteResult } from './deletion.js';
import { meta, present } from './store.js';
import { conflictModified, notFound } from './status.js';
import { StorageError } from './storage/storage.js';
import { isNotFound } from '../client/errors.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** Namespaces kube-apiserver creates at start. */
export const systemNamespaces: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function isTerminating(ns: KubeObject): boolean {
  return !!ns.metadata?.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating';
}

export async function deleteNamespace(server: ServerContext, r: ServedResource, name: string, req: DeleteRequest): Promise<DeleteResult> {
  const cur = await server.store.getStored(r, '', name);
  if (!cur) throw notFound(r, name);
  const old = present(r, cur.object) as Namespace & KubeObject;
  checkPreconditions(r, old, req.preconditions);
  await server.store.deps.admission.validate({ operation: 'DELETE', resource: r, subresource: '', namespace: '', name, object: undefined, oldObject: old, user: req.user, dryRun: req.dryRun, request: req.admission });
  if (!old.metadata?.deletionTimestamp) {
    const ns = deepCopy(old);
    const m = meta(ns);
    m.deletionTimestamp = rfc3339(server.clock.now());
    m.deletionGracePeriodSeconds = 0;
    ns.status = { ...(ns.status ?? {}), phase: 'Terminating' };
    // Namespaces carry GC finalizers only when asked for explicitly.
    let fins = [...(m.finalizers ?? [])];
    const orphan = req.orphanDependents ?? (req.propagationPolicy !== undefined ? req.propagationPolicy === 'Orphan' : fins.includes(orphanFinalizer));
    const foreground = req.orphanDependents !== undefined ? false : req.propagationPolicy !== undefined ? req.propagationPolicy === 'Foreground' : fins.includes(foregroundFinalizer);
    fins = fins.filter((f) => f !== orphanFinalizer && f !== foregroundFinalizer);
    if (orphan) fins.push(orphanFinalizer);
    if (foreground) fins.push(foregroundFinalizer);
    if (fins.length) m.finalizers = fins;
    else delete m.finalizers;
    if ((ns.spec?.finalizers ?? []).length > 0 || fins.length > 0) {
      if (req.dryRun) return { body: ns, deleted: false, object: ns };
      const out = await server.store.rawUpdate(r, '', name, ns, cur.revision);
      return { body: out, deleted: false, object: out };
    }
  } else if ((old.spec?.finalizers ?? []).length > 0) {
    return { body: old, deleted: false, object: old };
  }
  return deleteObject(server.store, r, '', name, { ...req, preconditions: undefined });
}

/**
 * PUT /namespaces/{name}/finalize: replaces spec.finalizers only. A
 * terminating namespace with no finalizers left is removed at once.
 */
export async function finalizeNamespace(server: ServerContext, r: ServedResource, name: string, body: Namespace, opts: { dryRun: boolean; user: UserInfo }): Promise<KubeObject> {
  let updated: KubeObject | undefined;
  for (let attempt = 0; !updated; attempt++) {
    const cur = await server.store.getStored(r, '', name);
    if (!cur) throw notFound(r, name);
    const wantRv = body.metadata?.resourceVersion;
    if (wantRv && wantRv !== cur.object.metadata?.resourceVersion) throw conflictModified(r, name);
    const next = present(r, cur.object) as Namespace & KubeObject;
    const fins = body.spec?.finalizers ?? [];
    next.spec = { ...(next.spec ?? {}) };
    if (fins.length) next.spec.finalizers = [...fins];
    else delete next.spec.finalizers;
    if (opts.dryRun) return next;
    try {
      updated = await server.store.rawUpdate(r, '', name, next, cur.revision);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict' && attempt < 5) continue;
      throw err;
    }
  }
  const ns = updated as Namespace & KubeObject;
  if (isTerminating(ns) && (ns.spec?.finalizers ?? []).length === 0 && (ns.metadata?.finalizers ?? []).length === 0) {
    try {
      await deleteObject(server.store, r, '', name, { dryRun: false, user: opts.user });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return updated;
}
