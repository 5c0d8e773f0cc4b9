/**
 * Status of a ReplicaSet / ReplicationController (pkg/controller/replicaset
 * replica_set_utils.go): counts of the pods it owns, and the ReplicaFailure
 * condition while creating or deleting pods fails.
 */
import type { ReplicaSetCondition, ReplicaSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { selectorFromSet } from '../../api/labels.js';
import type { ResourceInterface } from '../../client/interfaces.js';
import { isPodAvailable, isPodReady, podReadyTime } from '../../controller/pod-util.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { ReplicaSetLike } from './kind.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const REPLICA_FAILURE = 'ReplicaFailure';

/** How often a status write is retried after a conflict (upstream statusUpdateRetries). */
export const STATUS_UPDATE_RETRIES = 1;

/**
 * The status the object should have given its active, owned pods and the
 * outcome of this sync's pod creations / deletions (calculateStatus).
 */
export function calculateStatus(rs: ReplicaSetLike, pods: readonly Pod[], manageErr: unknown, now: number): ReplicaSetStatus {
  const status: ReplicaSetStatus = deepCopy(rs.status ?? { replicas: 0 });
  const templateSelector = selectorFromSet(rs.spec?.template?.metadata?.labels ?? {});
  const minReadySeconds = rs.spec?.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of pods) {
    if (templateSelector.matches(pod.metadata?.labels)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, now)) available++;
    }
  }
  const failure = status.conditions?.find((c) => c.type === REPLICA_FAILURE);
  if (manageErr !== undefined && !failure) {
    const diff = pods.length - (rs.spec?.replicas ?? 0);
    const reason = diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '';
    const cond: ReplicaSetCondition = {
      type: REPLICA_FAILURE,
      status: 'True',
      lastTransitionTime: rfc3339(now),
      reason,
      message: manageErr instanceof Error ? manageErr.message : String(manageErr),
    };
    status.conditions = [...(status.conditions ?? []), cond];
  } else if (manageErr === undefined && failure) {
    status.conditions = status.conditions!.filter((c) => c.type !== REPLICA_FAILURE);
    if (status.conditions.length === 0) delete status.conditions;
  }
  status.replicas = pods.length;
  setCount(status, 'fullyLabeledReplicas', fullyLabeled);
  setCount(status, 'readyReplicas', ready);
  setCount(status, 'availableReplicas', available);
  return status;
}

/** Go's omitempty: a zero count is absent. */
function setCount(status: ReplicaSetStatus, field: 'fullyLabeledReplicas' | 'readyReplicas' | 'availableReplicas', n: number): void {
  if (n === 0) delete status[field];
  else status[field] = n;
}

/**
 * When the next pod that is ready but not yet available will become
 * available, as a delay from `now` (ms); undefined when none is waiting.
 */
export function nextAvailabilityCheckMs(rs: ReplicaSetLike, pods: readonly Pod[], now: number): number | undefined {
  const minReadySeconds = rs.spec?.minReadySeconds ?? 0;
  if (minReadySeconds <= 0) return undefined;
  let next: number | undefined;
  for (const pod of pods) {
    if (!isPodReady(pod) || isPodAvailable(pod, minReadySeconds, now)) continue;
    const readyAt = podReadyTime(pod);
    if (readyAt === undefined) continue;
    const delay = Math.max(0, readyAt + minReadySeconds * 1000 - now);
    next = next === undefined ? delay : Math.min(next, delay);
  }
  return next;
}

function statusEqual(a: ReplicaSetStatus | undefined, b: ReplicaSetStatus): boolean {
  const n = (s: ReplicaSetStatus | undefined) => [
    s?.replicas ?? 0,
    s?.fullyLabeledReplicas ?? 0,
    s?.readyReplicas ?? 0,
    s?.availableReplicas ?? 0,
    JSON.stringify(s?.conditions ?? []),
  ];
  return JSON.stringify(n(a)) === JSON.stringify(n(b));
}

/**
 * Writes `status` through /status unless nothing changed and the generation
 * was already observed; on failure re-reads the object once and retries
 * (updateReplicaSetStatus). Returns the object as written (or as it was).
 */
export async function updateReplicaSetStatus(
  resource: ResourceInterface<ReplicaSetLike>,
  rs: ReplicaSetLike,
  status: ReplicaSetStatus,
): Promise<ReplicaSetLike> {
  const generation = rs.metadata?.generation ?? 0;
  if (statusEqual(rs.status, status) && generation === (rs.status?.observedGeneration ?? 0)) return rs;
  const ns = resource.namespace(rs.metadata?.namespace ?? '');
  let current = rs;
  for (let i = 0; ; i++) {
    const next: ReplicaSetStatus = { ...status, observedGeneration: generation };
    try {
      return await ns.updateStatus({ ...current, status: next });
    } catch (err) {
      if (i >= STATUS_UPDATE_RETRIES) throw err;
      current = await ns.get(rs.metadata?.name ?? '');
    }
  }
}
