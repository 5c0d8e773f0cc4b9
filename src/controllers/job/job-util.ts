/**
 * Names, conditions and pod predicates of the Job controller
 * (pkg/controller/job/util, pkg/apis/batch). Timestamps are RFC 3339 strings.
 */
import type { Job, JobCondition } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import { parseTime, rfc3339 } from '../../util/clock/clock.js';

export type JobObject = Job & KubeObject;
export type PodObject = Pod & KubeObject;

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
export const JOB_COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';
export const JOB_INDEX_FAILURE_COUNT_ANNOTATION = 'batch.kubernetes.io/job-index-failure-count';
export const JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = 'batch.kubernetes.io/job-index-ignored-failure-count';
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

export const REASON_BACKOFF_LIMIT_EXCEEDED = 'BackoffLimitExceeded';
export const REASON_DEADLINE_EXCEEDED = 'DeadlineExceeded';
export const REASON_POD_FAILURE_POLICY = 'PodFailurePolicy';
export const REASON_MAX_FAILED_INDEXES_EXCEEDED = 'MaxFailedIndexesExceeded';
export const REASON_FAILED_INDEXES = 'FailedIndexes';
export const REASON_SUCCESS_POLICY = 'SuccessPolicy';
export const REASON_COMPLETIONS_REACHED = 'CompletionsReached';

/** Delay after the first pod failure (DefaultJobPodFailureBackOff), doubling per failure. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
/** Cap of the pod failure backoff (MaxJobPodFailureBackOff). */
export const MAX_POD_FAILURE_BACKOFF_MS = 6 * 60_000;
/** Most pods created or deleted per sync (MaxPodCreateDeletePerSync). */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
/** Most UIDs in status.uncountedTerminatedPods (MaxUncountedPods). */
export const MAX_UNCOUNTED_PODS = 500;

export type ConditionType = 'Complete' | 'Failed' | 'Suspended' | 'FailureTarget' | 'SuccessCriteriaMet';

export function newCondition(type: ConditionType, status: 'True' | 'False', reason: string, message: string, now: number): JobCondition {
  const t = rfc3339(now);
  return { type, status, lastProbeTime: t, lastTransitionTime: t, reason, message };
}

export function findCondition(job: Job, type: ConditionType): JobCondition | undefined {
  return (job.status?.conditions ?? []).find((c) => c.type === type);
}

function hasTrueCondition(job: Job, type: ConditionType): boolean {
  return findCondition(job, type)?.status === 'True';
}

/** Complete or Failed is True (util.IsJobFinished). */
export function isJobFinished(job: Job): boolean {
  return hasTrueCondition(job, 'Complete') || hasTrueCondition(job, 'Failed');
}

/** The finish time of a finished job (the Complete/Failed condition's transition), epoch ms. */
export function jobFinishTime(job: Job): number | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return parseTime(c.lastTransitionTime);
  }
  return undefined;
}

/**
 * Appends or updates the condition of `type` (ensureJobConditionStatus): a
 * missing condition is not added with status False. Returns whether the list
 * changed.
 */
export function ensureCondition(
  conditions: JobCondition[],
  type: ConditionType,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = conditions[i]!;
    if (c.status !== status || c.reason !== reason || c.message !== message) {
      conditions[i] = newCondition(type, status, reason, message, now);
      return true;
    }
    return false;
  }
  if (status !== 'False') {
    conditions.push(newCondition(type, status, reason, message, now));
    return true;
  }
  return false;
}

export function isSuspended(job: Job): boolean {
  return job.spec?.suspend === true;
}

export function isIndexedJob(job: Job): boolean {
  return job.spec?.completionMode === 'Indexed';
}

export function hasBackoffLimitPerIndex(job: Job): boolean {
  return job.spec?.backoffLimitPerIndex != null;
}

/** podReplacementPolicy Failed (or a podFailurePolicy): terminating pods are not replaced yet. */
export function onlyReplaceFailedPods(job: Job): boolean {
  return job.spec?.podReplacementPolicy === 'Failed' || job.spec?.podFailurePolicy != null;
}

export function hasTrackingFinalizer(pod: Pod): boolean {
  return (pod.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
}

/**
 * A failed pod: phase Failed, or (unless only failed pods are replaced) a
 * pod being deleted before it succeeded (isPodFailed).
 */
export function isPodFailed(pod: Pod, job: Job): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(job)) return false;
  return pod.metadata?.deletionTimestamp != null && pod.status?.phase !== 'Succeeded';
}

/** Being deleted and not yet terminal (controller.CountTerminatingPods). */
export function isPodTerminating(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return pod.metadata?.deletionTimestamp != null && phase !== 'Failed' && phase !== 'Succeeded';
}

/**
 * When a finished pod finished (getFinishedTime): the latest container
 * termination, else the Ready=False transition, else the deletion
 * timestamp, else `now`.
 */
export function podFinishTime(pod: Pod, now: number): number {
  let latest: number | undefined;
  for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const t = parseTime(cs.state?.terminated?.finishedAt);
    if (t !== undefined && (latest === undefined || t > latest)) latest = t;
  }
  if (latest !== undefined) return latest;
  const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready' && c.status === 'False');
  const readyT = parseTime(ready?.lastTransitionTime);
  if (readyT !== undefined) return readyT;
  return parseTime(pod.metadata?.deletionTimestamp) ?? now;
}

/** The strategic merge patch removing the tracking finalizer, or undefined when the pod has none. */
export function removeTrackingFinalizerPatch(pod: Pod): object | undefined {
  if (!hasTrackingFinalizer(pod)) return undefined;
  return { metadata: { [`$deleteFromPrimitiveList/finalizers`]: [JOB_TRACKING_FINALIZER] } };
}
