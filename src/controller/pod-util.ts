/**
 * Pod state helpers (k8s.io/kubernetes pkg/api/v1/pod util and
 * pkg/controller). Timestamps are RFC 3339 strings; times are epoch ms.
 */
import type { Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import { parseTime } from '../util/clock/clock.js';

/** Not Succeeded, not Failed, not being deleted. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}

/** Succeeded or Failed. */
export function isPodTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The condition of `type` and its index, or index -1. */
export function getPodCondition(
  status: PodStatus | undefined,
  type: string,
): { index: number; condition: PodCondition | undefined } {
  const conditions = status?.conditions ?? [];
  for (let i = 0; i < conditions.length; i++) {
    if (conditions[i]!.type === type) return { index: i, condition: conditions[i] };
  }
  return { index: -1, condition: undefined };
}

export function getPodReadyCondition(status: PodStatus | undefined): PodCondition | undefined {
  return getPodCondition(status, 'Ready').condition;
}

/** The Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return getPodReadyCondition(pod.status)?.status === 'True';
}

/**
 * Ready for at least `minReadySeconds` at `now` (epoch ms). With
 * minReadySeconds 0, ready is enough (podutil.IsPodAvailable).
 */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const since = parseTime(getPodReadyCondition(pod.status)?.lastTransitionTime);
  return since !== undefined && since + minReadySeconds * 1000 < now;
}

/** When the pod became ready (epoch ms); undefined when not ready or unknown. */
export function podReadyTime(pod: Pod): number | undefined {
  if (!isPodReady(pod)) return undefined;
  return parseTime(getPodReadyCondition(pod.status)?.lastTransitionTime);
}

/** The pods that are active (see isPodActive), in order. */
export function filterActivePods<P extends Pod>(pods: readonly P[]): P[] {
  return pods.filter(isPodActive);
}

/** Highest restart count over the pod's containers. */
export function maxContainerRestarts(pod: Pod): number {
  let max = 0;
  for (const c of pod.status?.containerStatuses ?? []) max = Math.max(max, c.restartCount ?? 0);
  return max;
}

/**
 * Sets `condition` in `status` (mutating it), as podutil.UpdatePodCondition:
 * lastTransitionTime becomes `now` when the status changes and is kept when
 * it does not. Returns true when anything changed.
 */
export function updatePodCondition(status: PodStatus, condition: PodCondition, now: string): boolean {
  const next: PodCondition = { ...condition, lastTransitionTime: now };
  const { index, condition: old } = getPodCondition(status, condition.type);
  if (!old) {
    status.conditions = [...(status.conditions ?? []), next];
    return true;
  }
  if (next.status === old.status) next.lastTransitionTime = old.lastTransitionTime;
  const equal =
    next.status === old.status &&
    next.reason === old.reason &&
    next.message === old.message &&
    next.lastProbeTime === old.lastProbeTime &&
    next.lastTransitionTime === old.lastTransitionTime;
  status.conditions![index] = next;
  return !equal;
}
