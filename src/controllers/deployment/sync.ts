/**
 * Scaling, revisions, history clean-up and status of a Deployment
 * (pkg/controller/deployment/sync.go). Functions mutate the Deployment copy
 * they are given (its status and revision annotation), as upstream does.
 */
import type { DeploymentStatus } from 'kubernetes-types/apps/v1.js';
import { isAlreadyExists, isNotFound, isStatusError } from '../../client/errors.js';
import { newControllerRef } from '../../controller/controller-ref-manager.js';
import { computeHash } from '../../controller/hash.js';
import {
  compareByRevision,
  desiredReplicasAnnotation,
  maxRevision,
  replicasAnnotationsNeedUpdate,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './annotations.js';
import {
  deploymentComplete,
  getDeploymentCondition,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  newDeploymentCondition,
  setDeploymentCondition,
} from './conditions.js';
import { addInt64 } from './go-int.js';
import { proportionalScale } from './proportional.js';
import {
  dropNulls,
  filterActiveReplicaSets,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  getActualReplicaCountForReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getReadyReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  specReplicas,
} from './replica-sets.js';
import { isRollingUpdate, isSaturated, maxSurge, maxUnavailable, newRSNewReplicas } from './rolling-math.js';
import { scalingMessage, type SyncContext } from './sync-context.js';
import {
  DEPLOYMENT_AVAILABLE,
  DEPLOYMENT_PROGRESSING,
  FAILED_RS_CREATE_REASON,
  FOUND_NEW_RS_REASON,
  MINIMUM_REPLICAS_AVAILABLE,
  MINIMUM_REPLICAS_UNAVAILABLE,
  NEW_RS_REASON,
  PAUSED_DEPLOY_REASON,
  POD_TEMPLATE_HASH_LABEL,
  RESUMED_DEPLOY_REASON,
  REVISION_ANNOTATION,
  TIMED_OUT_REASON,
  type DeploymentObject,
  type ReplicaSetObject,
} from './types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const DEPLOYMENT_GVK = { group: 'apps', version: 'v1', kind: 'Deployment' };

/** Writes d's status (and revision annotation) and keeps d's resourceVersion current. */
export async function updateDeploymentStatus(sc: SyncContext, d: DeploymentObject): Promise<void> {
  const updated = await sc.deployments.namespace(d.metadata?.namespace ?? '').updateStatus(d);
  if (updated.metadata?.resourceVersion) (d.metadata as { resourceVersion?: string }).resourceVersion = updated.metadata.resourceVersion;
}

/**
 * The new ReplicaSet (created when `create` and missing) and all old ones,
 * with the new one's revision and annotations brought up to date
 * (getAllReplicaSetsAndSyncRevision).
 */
export async function getAllReplicaSetsAndSyncRevision(
  sc: SyncContext,
  d: DeploymentObject,
  rsList: ReplicaSetObject[],
  create: boolean,
): Promise<{ newRS: ReplicaSetObject | undefined; oldRSs: ReplicaSetObject[] }> {
  const { all } = findOldReplicaSets(d, rsList);
  const newRS = await getNewReplicaSet(sc, d, rsList, all, create);
  return { newRS, oldRSs: all };
}

async function getNewReplicaSet(
  sc: SyncContext,
  d: DeploymentObject,
  rsList: ReplicaSetObject[],
  oldRSs: ReplicaSetObject[],
  create: boolean,
): Promise<ReplicaSetObject | undefined> {
  const existing = findNewReplicaSet(d, rsList);
  // int64 arithmetic: revisions may exceed 2^53 (an adopted ReplicaSet can carry any value).
  const newRevision = String(addInt64(maxRevision(oldRSs, sc.log), 1n));
  const ns = d.metadata?.namespace ?? '';

  if (existing) {
    const rsCopy = deepCopy(existing);
    const annotationsUpdated = setNewReplicaSetAnnotations(d, rsCopy, newRevision, true, sc.log);
    const minReadyChanged = (rsCopy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
    if (annotationsUpdated || minReadyChanged) {
      rsCopy.spec!.minReadySeconds = d.spec?.minReadySeconds ?? 0;
      const updated = await sc.replicaSets.namespace(ns).update(rsCopy);
      // Later steps of this sync read rsList again: let them see what was written.
      const i = rsList.indexOf(existing);
      if (i >= 0) rsList[i] = updated;
      return updated;
    }
    let needsUpdate = setDeploymentRevision(d, rsCopy.metadata?.annotations?.[REVISION_ANNOTATION] ?? '');
    const cond = getDeploymentCondition(d.status, DEPLOYMENT_PROGRESSING);
    if (hasProgressDeadline(d) && !cond) {
      const msg = `Found new replica set "${rsCopy.metadata?.name ?? ''}"`;
      d.status ??= {};
      setDeploymentCondition(d.status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', FOUND_NEW_RS_REASON, msg, sc.clock.now()));
      needsUpdate = true;
    }
    if (needsUpdate) await updateDeploymentStatus(sc, d);
    return rsCopy;
  }
  if (!create) return undefined;

  const template = dropNulls(deepCopy(d.spec?.template ?? {}));
  const hash = computeHash(template, d.status?.collisionCount);
  template.metadata ??= {};
  template.metadata.labels = { ...(d.spec?.template?.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const selector = deepCopy(d.spec?.selector ?? {});
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const newRS: ReplicaSetObject = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata?.name ?? ''}-${hash}`,
      namespace: ns,
      ownerReferences: [newControllerRef(d, DEPLOYMENT_GVK)],
      labels: { ...template.metadata.labels },
    },
    spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
  };
  const newReplicasCount = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
  newRS.spec!.replicas = newReplicasCount;
  setNewReplicaSetAnnotations(d, newRS, newRevision, false, sc.log);

  let created: ReplicaSetObject;
  let alreadyExists = false;
  try {
    created = await sc.replicaSets.namespace(ns).create(newRS);
  } catch (err) {
    if (isAlreadyExists(err)) {
      alreadyExists = true;
      const found = sc.rsLister.namespace(ns).get(newRS.metadata!.name!);
      if (!found) throw err; // the cache has not seen it yet: retry later
      const ref = found.metadata?.ownerReferences?.find((r) => r.controller === true);
      if (ref && ref.uid === d.metadata?.uid && equalTemplates(d, found)) {
        created = found;
      } else {
        // A different object holds the name: change the hash by bumping collisionCount.
        d.status ??= {};
        const before = d.status.collisionCount ?? 0;
        d.status.collisionCount = before + 1;
        try {
          await updateDeploymentStatus(sc, d);
          sc.log.v(2).info({ deployment: `${ns}/${d.metadata?.name}`, old: before, new: before + 1 }, 'found a hash collision for deployment - bumping collisionCount to resolve it');
        } catch (statusErr) {
          sc.log.error(statusErr, { deployment: `${ns}/${d.metadata?.name}` }, 'failed to bump collisionCount');
        }
        throw err;
      }
    } else if (isStatusError(err) && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')) {
      throw err;
    } else {
      const msg = `Failed to create new replica set "${newRS.metadata!.name}": ${err instanceof Error ? err.message : String(err)}`;
      if (hasProgressDeadline(d)) {
        d.status ??= {};
        setDeploymentCondition(d.status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'False', FAILED_RS_CREATE_REASON, msg, sc.clock.now()));
        await updateDeploymentStatus(sc, d).catch((e: unknown) => sc.log.error(e, {}, 'failed to record ReplicaSetCreateError'));
      }
      sc.recorder.event(d, 'Warning', FAILED_RS_CREATE_REASON, msg);
      throw err;
    }
  }
  if (!alreadyExists && newReplicasCount > 0) {
    sc.recorder.event(d, 'Normal', 'ScalingReplicaSet', scalingMessage('up', created.metadata?.name ?? '', 0, newReplicasCount, sc.legacyScalingMessages));
  }
  let needsUpdate = setDeploymentRevision(d, newRevision);
  if (!alreadyExists && hasProgressDeadline(d)) {
    const msg = `Created new replica set "${created.metadata?.name ?? ''}"`;
    d.status ??= {};
    setDeploymentCondition(d.status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', NEW_RS_REASON, msg, sc.clock.now()));
    needsUpdate = true;
  }
  if (needsUpdate) await updateDeploymentStatus(sc, d);
  return created;
}

function equalTemplates(d: DeploymentObject, rs: ReplicaSetObject): boolean {
  return findNewReplicaSet(d, [rs]) !== undefined;
}

/**
 * Sets `rs` to `newScale` replicas (and its desired/max-replicas annotations),
 * recording ScalingReplicaSet when the size changed (scaleReplicaSet).
 * Returns whether it scaled and the ReplicaSet as written.
 */
export async function scaleReplicaSet(
  sc: SyncContext,
  rs: ReplicaSetObject,
  newScale: number,
  d: DeploymentObject,
  operation: string,
): Promise<{ scaled: boolean; rs: ReplicaSetObject }> {
  const desired = d.spec?.replicas ?? 0;
  const max = desired + maxSurge(d);
  const sizeNeedsUpdate = specReplicas(rs) !== newScale;
  if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
  const oldScale = specReplicas(rs);
  const copy = deepCopy(rs);
  copy.spec!.replicas = newScale;
  setReplicasAnnotations(copy, desired, max);
  const updated = await sc.replicaSets.namespace(copy.metadata?.namespace ?? '').update(copy);
  if (sizeNeedsUpdate) {
    sc.recorder.event(d, 'Normal', 'ScalingReplicaSet', scalingMessage(operation, updated.metadata?.name ?? '', oldScale, newScale, sc.legacyScalingMessages));
  }
  return { scaled: sizeNeedsUpdate, rs: updated };
}

/** scaleReplicaSet with the direction derived from the sizes; no-op when already at `newScale`. */
export async function scaleReplicaSetAndRecordEvent(
  sc: SyncContext,
  rs: ReplicaSetObject,
  newScale: number,
  d: DeploymentObject,
): Promise<{ scaled: boolean; rs: ReplicaSetObject }> {
  if (specReplicas(rs) === newScale) return { scaled: false, rs };
  return scaleReplicaSet(sc, rs, newScale, d, specReplicas(rs) < newScale ? 'up' : 'down');
}

/**
 * Scales for a change of spec.replicas (DeploymentController.scale): one
 * active ReplicaSet takes all; a saturated new one lets the old drain; in the
 * middle of a rolling update the change is spread proportionally.
 */
export async function scale(sc: SyncContext, d: DeploymentObject, newRS: ReplicaSetObject | undefined, oldRSs: ReplicaSetObject[]): Promise<void> {
  const replicas = d.spec?.replicas ?? 0;
  const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
  if (activeOrLatest) {
    if (specReplicas(activeOrLatest) === replicas) return;
    await scaleReplicaSetAndRecordEvent(sc, activeOrLatest, replicas, d);
    return;
  }
  if (isSaturated(d, newRS)) {
    for (const old of filterActiveReplicaSets(oldRSs)) await scaleReplicaSetAndRecordEvent(sc, old, 0, d);
    return;
  }
  if (isRollingUpdate(d)) {
    const plan = proportionalScale(d, [...oldRSs, newRS]);
    for (const { rs, size } of plan.targets) {
      // Stop at the first failure; the Deployment is requeued.
      await scaleReplicaSet(sc, rs, size, d, plan.operation);
    }
  }
}

/**
 * Deletes the oldest old ReplicaSets beyond revisionHistoryLimit, but only
 * those fully scaled down, observed and not already being deleted
 * (cleanupDeployment).
 */
export async function cleanupDeployment(sc: SyncContext, oldRSs: ReplicaSetObject[], d: DeploymentObject): Promise<void> {
  if (!hasRevisionHistoryLimit(d)) return;
  const cleanable = oldRSs.filter((rs) => !rs.metadata?.deletionTimestamp);
  const diff = cleanable.length - (d.spec?.revisionHistoryLimit ?? 0);
  if (diff <= 0) return;
  cleanable.sort(compareByRevision);
  sc.log.v(4).info({ deployment: `${d.metadata?.namespace}/${d.metadata?.name}`, count: diff }, 'looking to cleanup old replica sets');
  for (const rs of cleanable.slice(0, diff)) {
    if ((rs.status?.replicas ?? 0) !== 0 || specReplicas(rs) !== 0 || (rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
    sc.log.v(4).info({ replicaSet: `${rs.metadata?.namespace}/${rs.metadata?.name}` }, 'trying to cleanup replica set for deployment');
    try {
      await sc.replicaSets.namespace(rs.metadata?.namespace ?? '').delete(rs.metadata?.name ?? '');
    } catch (err) {
      // Stop at the first failure rather than hammering the API server.
      if (!isNotFound(err)) throw err;
    }
  }
}

/** The status the Deployment's ReplicaSets add up to, with the Available condition (calculateStatus). */
export function calculateStatus(allRSs: Array<ReplicaSetObject | undefined>, newRS: ReplicaSetObject | undefined, d: DeploymentObject, now: number): DeploymentStatus {
  const available = getAvailableReplicaCountForReplicaSets(allRSs);
  const total = getReplicaCountForReplicaSets(allRSs);
  const unavailable = Math.max(0, total - available);
  const status: DeploymentStatus = {};
  const set = (k: 'observedGeneration' | 'replicas' | 'updatedReplicas' | 'readyReplicas' | 'availableReplicas' | 'unavailableReplicas', v: number) => {
    if (v !== 0) status[k] = v;
  };
  set('observedGeneration', d.metadata?.generation ?? 0);
  set('replicas', getActualReplicaCountForReplicaSets(allRSs));
  set('updatedReplicas', getActualReplicaCountForReplicaSets([newRS]));
  set('readyReplicas', getReadyReplicaCountForReplicaSets(allRSs));
  set('availableReplicas', available);
  set('unavailableReplicas', unavailable);
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (d.status?.conditions) status.conditions = d.status.conditions.map((c) => ({ ...c }));
  if (available >= (d.spec?.replicas ?? 0) - maxUnavailable(d)) {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_AVAILABLE, 'True', MINIMUM_REPLICAS_AVAILABLE, 'Deployment has minimum availability.', now));
  } else {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_AVAILABLE, 'False', MINIMUM_REPLICAS_UNAVAILABLE, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

/** JSON equality of two statuses (zero counts are absent in both). */
export function statusEqual(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  const norm = (s: DeploymentStatus | undefined) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s ?? {}).sort(([x], [y]) => x.localeCompare(y))) {
      if (v === 0 && k !== 'collisionCount') continue;
      if (v === undefined) continue;
      o[k] = v;
    }
    return JSON.stringify(o);
  };
  return norm(a) === norm(b);
}

/** Writes the computed status when it differs (syncDeploymentStatus). */
export async function syncDeploymentStatus(sc: SyncContext, allRSs: Array<ReplicaSetObject | undefined>, newRS: ReplicaSetObject | undefined, d: DeploymentObject): Promise<void> {
  const status = calculateStatus(allRSs, newRS, d, sc.clock.now());
  if (statusEqual(d.status, status)) return;
  d.status = status;
  await updateDeploymentStatus(sc, d);
}

/** Scaling and paused Deployments: scale, clean up when paused, update status (sync). */
export async function syncScaleOrPaused(sc: SyncContext, d: DeploymentObject, rsList: ReplicaSetObject[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, false);
  await scale(sc, d, newRS, oldRSs);
  if (d.spec?.paused) await cleanupDeployment(sc, oldRSs, d);
  await syncDeploymentStatus(sc, [...oldRSs, newRS], newRS, d);
}

/** Only the status (a Deployment being deleted). */
export async function syncStatusOnly(sc: SyncContext, d: DeploymentObject, rsList: ReplicaSetObject[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, false);
  await syncDeploymentStatus(sc, [...oldRSs, newRS], newRS, d);
}

/**
 * Records DeploymentPaused / DeploymentResumed in the Progressing condition so
 * that time spent paused does not count against the progress deadline
 * (checkPausedConditions).
 */
export async function checkPausedConditions(sc: SyncContext, d: DeploymentObject): Promise<void> {
  if (!hasProgressDeadline(d)) return;
  const cond = getDeploymentCondition(d.status, DEPLOYMENT_PROGRESSING);
  if (cond?.reason === TIMED_OUT_REASON) return;
  const pausedCondExists = cond?.reason === PAUSED_DEPLOY_REASON;
  d.status ??= {};
  const now = sc.clock.now();
  if (d.spec?.paused && !pausedCondExists) {
    setDeploymentCondition(d.status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'Unknown', PAUSED_DEPLOY_REASON, 'Deployment is paused', now));
  } else if (!d.spec?.paused && pausedCondExists) {
    setDeploymentCondition(d.status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'Unknown', RESUMED_DEPLOY_REASON, 'Deployment is resumed', now));
  } else {
    return;
  }
  await updateDeploymentStatus(sc, d);
}

/** An active ReplicaSet was sized for another spec.replicas (isScalingEvent). */
export async function isScalingEvent(sc: SyncContext, d: DeploymentObject, rsList: ReplicaSetObject[]): Promise<boolean> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, false);
  for (const rs of filterActiveReplicaSets([...oldRSs, newRS])) {
    const desired = desiredReplicasAnnotation(rs);
    if (desired === undefined) continue;
    if (desired !== (d.spec?.replicas ?? 0)) return true;
  }
  return false;
}

export { deploymentComplete };
