/**
 * The Recreate strategy (pkg/controller/deployment/recreate.go): scale every
 * old ReplicaSet to zero, wait until none of their pods is running, then
 * create / scale up the new ReplicaSet. No new pod exists while an old one does.
 */
import type { PodMap, SyncContext } from './sync-context.js';
import { cleanupDeployment, deploymentComplete, getAllReplicaSetsAndSyncRevision, scaleReplicaSetAndRecordEvent } from './sync.js';
import { syncRolloutStatus } from './progress.js';
import { filterActiveReplicaSets, getActualReplicaCountForReplicaSets, specReplicas } from './replica-sets.js';
import type { DeploymentObject, ReplicaSetObject } from './types.js';

export async function rolloutRecreate(sc: SyncContext, d: DeploymentObject, rsList: ReplicaSetObject[], podMap: PodMap): Promise<void> {
  // No new ReplicaSet yet: creating it now would scale up before the old ones are down.
  let { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, false);
  let allRSs: Array<ReplicaSetObject | undefined> = [...oldRSs, newRS];
  if (await scaleDownOldReplicaSetsForRecreate(sc, filterActiveReplicaSets(oldRSs), d)) {
    await syncRolloutStatus(sc, allRSs, newRS, d);
    return;
  }
  if (oldPodsRunning(newRS, oldRSs, podMap)) {
    await syncRolloutStatus(sc, allRSs, newRS, d);
    return;
  }
  if (!newRS) {
    ({ newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, true));
    allRSs = [...oldRSs, newRS];
  }
  await scaleReplicaSetAndRecordEvent(sc, newRS!, d.spec?.replicas ?? 0, d);
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(sc, oldRSs, d);
  await syncRolloutStatus(sc, allRSs, newRS, d);
}

async function scaleDownOldReplicaSetsForRecreate(sc: SyncContext, oldRSs: ReplicaSetObject[], d: DeploymentObject): Promise<boolean> {
  let scaled = false;
  for (const rs of oldRSs) {
    if (specReplicas(rs) === 0) continue;
    if ((await scaleReplicaSetAndRecordEvent(sc, rs, 0, d)).scaled) scaled = true;
  }
  return scaled;
}

/** Old ReplicaSets still report pods, or a pod of theirs is not terminal (Unknown counts as running). */
export function oldPodsRunning(newRS: ReplicaSetObject | undefined, oldRSs: ReplicaSetObject[], podMap: PodMap): boolean {
  if (getActualReplicaCountForReplicaSets(oldRSs) > 0) return true;
  for (const [uid, pods] of podMap) {
    if (newRS && newRS.metadata?.uid === uid) continue;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') continue;
      return true;
    }
  }
  return false;
}
