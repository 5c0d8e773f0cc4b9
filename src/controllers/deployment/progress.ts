/**
 * Rollout progress (pkg/controller/deployment/progress.go): the Progressing
 * condition (ReplicaSetUpdated, NewReplicaSetAvailable,
 * ProgressDeadlineExceeded), ReplicaFailure copied from the ReplicaSets, and
 * a requeue at the deadline so a stalled rollout is reported on time.
 */
import type { DeploymentStatus } from 'kubernetes-types/apps/v1.js';
import { parseTime } from '../../util/clock/clock.js';
import {
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  getDeploymentCondition,
  hasProgressDeadline,
  newDeploymentCondition,
  removeDeploymentCondition,
  replicaSetToDeploymentCondition,
  setDeploymentCondition,
} from './conditions.js';
import { calculateStatus, statusEqual, updateDeploymentStatus } from './sync.js';
import type { SyncContext } from './sync-context.js';
import {
  DEPLOYMENT_PROGRESSING,
  DEPLOYMENT_REPLICA_FAILURE,
  NEW_RS_AVAILABLE_REASON,
  REPLICA_SET_UPDATED_REASON,
  TIMED_OUT_REASON,
  type DeploymentCondition,
  type DeploymentObject,
  type ReplicaSetObject,
} from './types.js';

/** Status with progress estimated, written when changed (syncRolloutStatus). */
export async function syncRolloutStatus(
  sc: SyncContext,
  allRSs: Array<ReplicaSetObject | undefined>,
  newRS: ReplicaSetObject | undefined,
  d: DeploymentObject,
): Promise<void> {
  const now = sc.clock.now();
  const status = calculateStatus(allRSs, newRS, d, now);
  if (!hasProgressDeadline(d)) removeDeploymentCondition(status, DEPLOYMENT_PROGRESSING);

  const current = getDeploymentCondition(d.status, DEPLOYMENT_PROGRESSING);
  const isCompleteDeployment = (status.replicas ?? 0) === (status.updatedReplicas ?? 0) && current?.reason === NEW_RS_AVAILABLE_REASON;
  if (hasProgressDeadline(d) && !isCompleteDeployment) {
    const rsName = newRS?.metadata?.name;
    const what = rsName !== undefined ? `ReplicaSet "${rsName}"` : `Deployment "${d.metadata?.name ?? ''}"`;
    if (deploymentComplete(d, status)) {
      setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', NEW_RS_AVAILABLE_REASON, `${what} has successfully progressed.`, now));
    } else if (deploymentProgressing(d, status)) {
      // Progress refreshes lastUpdateTime even with the same reason (unlike setDeploymentCondition).
      const cond = newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', REPLICA_SET_UPDATED_REASON, `${what} is progressing.`, now);
      if (current) {
        if (current.status === 'True') cond.lastTransitionTime = current.lastTransitionTime;
        removeDeploymentCondition(status, DEPLOYMENT_PROGRESSING);
      }
      setDeploymentCondition(status, cond);
    } else if (deploymentTimedOut(d, status, now)) {
      setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'False', TIMED_OUT_REASON, `${what} has timed out progressing.`, now));
    }
  }

  const failures = getReplicaFailures(allRSs, newRS);
  if (failures.length > 0) setDeploymentCondition(status, failures[0]!);
  else removeDeploymentCondition(status, DEPLOYMENT_REPLICA_FAILURE);

  if (statusEqual(d.status, status)) {
    requeueStuckDeployment(sc, d, status);
    return;
  }
  d.status = status;
  await updateDeploymentStatus(sc, d);
}

/** ReplicaFailure conditions of the new ReplicaSet, else of any ReplicaSet (getReplicaFailures). */
export function getReplicaFailures(allRSs: Array<ReplicaSetObject | undefined>, newRS: ReplicaSetObject | undefined): DeploymentCondition[] {
  const of = (rs: ReplicaSetObject | undefined) =>
    (rs?.status?.conditions ?? []).filter((c) => c.type === DEPLOYMENT_REPLICA_FAILURE).map(replicaSetToDeploymentCondition);
  const fromNew = of(newRS);
  if (fromNew.length > 0) return fromNew;
  return allRSs.flatMap(of);
}

/**
 * Requeues a rollout without visible progress for when its deadline passes
 * (lastUpdateTime + progressDeadlineSeconds, plus a second of skew); now
 * (rate-limited) when that is less than a second away. Returns the delay in
 * ms, 0 for "now", -1 when no check is needed (requeueStuckDeployment).
 */
export function requeueStuckDeployment(sc: SyncContext, d: DeploymentObject, status: DeploymentStatus): number {
  const current = getDeploymentCondition(d.status, DEPLOYMENT_PROGRESSING);
  if (!hasProgressDeadline(d) || !current) return -1;
  if (deploymentComplete(d, status) || current.reason === TIMED_OUT_REASON) return -1;
  const lastUpdate = parseTime(current.lastUpdateTime) ?? sc.clock.now();
  const after = lastUpdate + d.spec!.progressDeadlineSeconds! * 1000 - sc.clock.now();
  if (after < 1000) {
    sc.log.v(4).info({ deployment: `${d.metadata?.namespace}/${d.metadata?.name}` }, 'queueing up deployment for a progress check now');
    sc.enqueueRateLimited(d);
    return 0;
  }
  sc.log.v(4).info({ deployment: `${d.metadata?.namespace}/${d.metadata?.name}`, queueAfterSeconds: Math.floor(after / 1000) }, 'queueing up deployment for a progress check');
  sc.enqueueAfter(d, after + 1000);
  return after;
}
