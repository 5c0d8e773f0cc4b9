/**
 * The RollingUpdate strategy (pkg/controller/deployment/rolling.go): grow
 * the new ReplicaSet within maxSurge, shrink old ones while keeping
 * spec.replicas - maxUnavailable pods available, unhealthy old pods first.
 */
import { cleanupDeployment, deploymentComplete, getAllReplicaSetsAndSyncRevision, scaleReplicaSetAndRecordEvent } from './sync.js';
import { syncRolloutStatus } from './progress.js';
import {
  compareByCreationTimestamp,
  filterActiveReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  specReplicas,
} from './replica-sets.js';
import { maxUnavailable, newRSNewReplicas } from './rolling-math.js';
import type { SyncContext } from './sync-context.js';
import type { DeploymentObject, ReplicaSetObject } from './types.js';

export async function rolloutRolling(sc: SyncContext, d: DeploymentObject, rsList: ReplicaSetObject[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, true);
  const allRSs = [...oldRSs, newRS!];
  if (await reconcileNewReplicaSet(sc, allRSs, newRS!, d)) {
    await syncRolloutStatus(sc, allRSs, newRS, d);
    return;
  }
  if (await reconcileOldReplicaSets(sc, allRSs, filterActiveReplicaSets(oldRSs), newRS!, d)) {
    await syncRolloutStatus(sc, allRSs, newRS, d);
    return;
  }
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(sc, oldRSs, d);
  await syncRolloutStatus(sc, allRSs, newRS, d);
}

/** Scales the new ReplicaSet toward spec.replicas within maxSurge; true when it scaled. */
export async function reconcileNewReplicaSet(sc: SyncContext, allRSs: ReplicaSetObject[], newRS: ReplicaSetObject, d: DeploymentObject): Promise<boolean> {
  const replicas = d.spec?.replicas ?? 0;
  if (specReplicas(newRS) === replicas) return false;
  if (specReplicas(newRS) > replicas) return (await scaleReplicaSetAndRecordEvent(sc, newRS, replicas, d)).scaled;
  const count = newRSNewReplicas(d, allRSs, newRS);
  return (await scaleReplicaSetAndRecordEvent(sc, newRS, count, d)).scaled;
}

/** Scales old ReplicaSets down as far as availability allows; true when anything was scaled down. */
export async function reconcileOldReplicaSets(
  sc: SyncContext,
  allRSs: ReplicaSetObject[],
  oldRSs: ReplicaSetObject[],
  newRS: ReplicaSetObject,
  d: DeploymentObject,
): Promise<boolean> {
  if (getReplicaCountForReplicaSets(oldRSs) === 0) return false;
  const allPodsCount = getReplicaCountForReplicaSets(allRSs);
  const minAvailable = (d.spec?.replicas ?? 0) - maxUnavailable(d);
  const newRSUnavailable = specReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = allPodsCount - minAvailable - newRSUnavailable;
  if (maxScaledDown <= 0) return false;
  // Unhealthy old pods first: they would otherwise block the rollout.
  const { oldRSs: cleaned, count: cleanupCount } = await cleanupUnhealthyReplicas(sc, oldRSs, d, maxScaledDown);
  const scaledDown = await scaleDownOldReplicaSetsForRollingUpdate(sc, [...cleaned, newRS], cleaned, d);
  return cleanupCount + scaledDown > 0;
}

async function cleanupUnhealthyReplicas(
  sc: SyncContext,
  oldRSs: ReplicaSetObject[],
  d: DeploymentObject,
  maxCleanupCount: number,
): Promise<{ oldRSs: ReplicaSetObject[]; count: number }> {
  const sorted = [...oldRSs].sort(compareByCreationTimestamp);
  let total = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (total >= maxCleanupCount) break;
    const rs = sorted[i]!;
    const size = specReplicas(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (size === 0 || size === available) continue;
    const count = Math.min(maxCleanupCount - total, size - available);
    const newCount = size - count;
    if (newCount > size) throw new Error(`when cleaning up unhealthy replicas, got invalid request to scale down ${rs.metadata?.namespace}/${rs.metadata?.name} ${size} -> ${newCount}`);
    const { rs: updated } = await scaleReplicaSetAndRecordEvent(sc, rs, newCount, d);
    total += count;
    sorted[i] = updated;
  }
  return { oldRSs: sorted, count: total };
}

async function scaleDownOldReplicaSetsForRollingUpdate(
  sc: SyncContext,
  allRSs: ReplicaSetObject[],
  oldRSs: ReplicaSetObject[],
  d: DeploymentObject,
): Promise<number> {
  const minAvailable = (d.spec?.replicas ?? 0) - maxUnavailable(d);
  const available = getAvailableReplicaCountForReplicaSets(allRSs);
  if (available <= minAvailable) return 0;
  const toScaleDown = available - minAvailable;
  let total = 0;
  for (const rs of [...oldRSs].sort(compareByCreationTimestamp)) {
    if (total >= toScaleDown) break;
    const size = specReplicas(rs);
    if (size === 0) continue;
    const count = Math.min(size, toScaleDown - total);
    await scaleReplicaSetAndRecordEvent(sc, rs, size - count, d);
    total += count;
  }
  return total;
}
