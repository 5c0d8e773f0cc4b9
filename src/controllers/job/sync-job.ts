/**
 * One sync of a Job (pkg/controller/job/job_controller.go syncJob).
 *
 * Contract:
 * - Pods are counted through the `batch.kubernetes.io/job-tracking`
 *   finalizer: a finished pod still holding it is first recorded in
 *   status.uncountedTerminatedPods, then its finalizer is removed, then it
 *   moves into status.succeeded / status.failed. A pod is therefore counted
 *   exactly once, even when it is deleted right after finishing.
 * - A Job meeting a terminal criterion first gets the interim FailureTarget
 *   or SuccessCriteriaMet condition, its active pods are deleted, and only
 *   when no pod is terminating and nothing is uncounted does it get Failed or
 *   Complete (with completionTime), with the Completed / <reason> event.
 * - New pods wait for the failure backoff (10 s doubling to 6 min since the
 *   last success); the sync requeues itself for the remaining time.
 */
import type { Job, JobCondition, JobStatus } from 'kubernetes-types/batch/v1.js';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { selectorFromLabelSelector } from '../../api/labels.js';
import { splitKey } from '../../api/types.js';
import { isNotFound, isStatusError } from '../../client/errors.js';
import type { ResourceInterface } from '../../client/interfaces.js';
import type { ControllerExpectations } from '../../controller/expectations.js';
import { getControllerOf, newControllerRef, newControllerRefManager, recheckDeletionTimestamp } from '../../controller/controller-ref-manager.js';
import type { PodControl } from '../../controller/pod-control.js';
import { isPodActive, isPodReady } from '../../controller/pod-util.js';
import { activePodsLess, sortActivePods } from '../../controller/ranking.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { parseTime, rfc3339, type Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { remainingTime, remainingTimeForFailures, type BackoffRecord, type BackoffStore } from './backoff.js';
import type { FinalizerExpectations } from './finalizer-expectations.js';
import {
  addCompletionIndexEnv,
  applyCompletionIndex,
  duplicatedIndexPods,
  firstPendingIndexes,
  formatIntervals,
  getCompletionIndex,
  intervalsFromIndexes,
  intervalsHas,
  intervalsTotal,
  matchSuccessPolicy,
  parseIntervals,
  podGenerateNameWithIndex,
  withIndexes,
  type Intervals,
} from './indexes.js';
import {
  JOB_INDEX_FAILURE_COUNT_ANNOTATION,
  JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
  JOB_TRACKING_FINALIZER,
  MAX_POD_CREATE_DELETE_PER_SYNC,
  MAX_UNCOUNTED_PODS,
  REASON_BACKOFF_LIMIT_EXCEEDED,
  REASON_COMPLETIONS_REACHED,
  REASON_DEADLINE_EXCEEDED,
  REASON_FAILED_INDEXES,
  REASON_MAX_FAILED_INDEXES_EXCEEDED,
  REASON_POD_FAILURE_POLICY,
  REASON_SUCCESS_POLICY,
  ensureCondition,
  findCondition,
  hasBackoffLimitPerIndex,
  hasTrackingFinalizer,
  isIndexedJob,
  isJobFinished,
  isPodFailed,
  isPodTerminating,
  isSuspended,
  newCondition,
  onlyReplaceFailedPods,
  podFinishTime,
  removeTrackingFinalizerPatch,
  type JobObject,
  type PodObject,
} from './job-util.js';
import { failJobMessage, matchPodFailurePolicy } from './pod-failure-policy.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const JOB_KIND = { group: 'batch', version: 'v1', kind: 'Job' } as const;

export interface JobSyncDeps {
  clock: Clock;
  log: Logger;
  recorder: EventRecorder;
  podControl: PodControl;
  jobs: ResourceInterface<JobObject>;
  pods: ResourceInterface<PodObject>;
  jobLister: Lister<JobObject>;
  podLister: Lister<PodObject>;
  expectations: ControllerExpectations;
  finalizerExpectations: FinalizerExpectations;
  backoff: BackoffStore;
  /** Requeues the job key after `ms`. */
  enqueueAfter(key: string, ms: number): void;
  /** Complete / Failed replace the interim condition, and Complete says no reason (JobControllerOptions). */
  terminalConditionAlone?: boolean;
}

interface SyncCtx {
  key: string;
  job: JobObject;
  pods: PodObject[];
  activePods: PodObject[];
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  expectedRm: ReadonlySet<string>;
  newBackoff: BackoffRecord;
  finished?: JobCondition;
  prevSucceededIndexes: Intervals;
  succeededIndexes: Intervals;
  failedIndexes?: Intervals;
  /** Per index, the last failed pod whose finalizer stays until its replacement exists (backoffLimitPerIndex). */
  delayed: Map<number, PodObject>;
}

const intAnnotation = (p: PodObject, key: string): number => {
  const v = p.metadata?.annotations?.[key];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
};

export class JobSyncer {
  constructor(private readonly d: JobSyncDeps) {}

  async sync(key: string): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    const shared = this.d.jobLister.namespace(ns).get(name);
    if (!shared) {
      this.d.log.v(4).info({ key }, 'Job has been deleted');
      this.d.expectations.deleteExpectations(key);
      this.d.finalizerExpectations.deleteExpectations(key);
      this.d.backoff.remove(key);
      return;
    }
    if (isJobFinished(shared)) {
      this.d.backoff.remove(key);
      await this.releaseFinishedPods(shared);
      return;
    }
    const mode = shared.spec?.completionMode;
    if (mode != null && mode !== 'NonIndexed' && mode !== 'Indexed') {
      this.d.recorder.event(shared, 'Warning', 'UnknownCompletionMode', 'Skipped Job sync because completion mode is unknown');
      return;
    }
    const job = deepCopy(shared);
    job.status ??= {};
    job.status.uncountedTerminatedPods ??= {};
    const now = this.d.clock.now();
    // Expectations first: a pod created after this check is seen by the next sync.
    const satisfied = this.d.expectations.satisfiedExpectations(key);
    const pods = await this.podsForJob(job);
    const activePods = pods.filter(isPodActive);
    const c: SyncCtx = {
      key,
      job,
      pods,
      activePods,
      ready: activePods.filter(isPodReady).length,
      terminating: pods.filter(isPodTerminating).length,
      succeeded: 0,
      failed: 0,
      uncountedSucceeded: new Set(job.status.uncountedTerminatedPods.succeeded ?? []),
      uncountedFailed: new Set(job.status.uncountedTerminatedPods.failed ?? []),
      expectedRm: this.d.finalizerExpectations.expectedUIDs(key),
      newBackoff: { failuresAfterLastSuccess: 0 },
      prevSucceededIndexes: [],
      succeededIndexes: [],
      delayed: new Map(),
    };
    let active = activePods.length;
    const newSucceeded = this.newFinishedPods(c, c.uncountedSucceeded, (p) => p.status?.phase === 'Succeeded');
    const newFailed = this.newFinishedPods(c, c.uncountedFailed, (p) => isPodFailed(p, job));
    const countedNewFailed = newFailed.filter((p) => matchPodFailurePolicy(job.spec?.podFailurePolicy, p).countFailed).length;
    c.succeeded = (job.status.succeeded ?? 0) + newSucceeded.length + c.uncountedSucceeded.size;
    c.failed = (job.status.failed ?? 0) + countedNewFailed + c.uncountedFailed.size;

    if (!job.status.startTime && !isSuspended(job)) job.status.startTime = rfc3339(now);
    c.newBackoff = this.d.backoff.next(key, newSucceeded, newFailed, now);

    const backoffLimit = job.spec?.backoffLimit ?? 6;
    const met = findCondition(job, 'SuccessCriteriaMet');
    if (met?.status === 'True') c.finished = met;
    if (!c.finished) {
      const target = findCondition(job, 'FailureTarget');
      if (target?.status === 'True') {
        c.finished = newCondition('Failed', 'True', target.reason ?? '', target.message ?? '', now);
      } else {
        const msg = failJobMessage(job, pods.filter((p) => isPodFailed(p, job)));
        if (msg) c.finished = newCondition('FailureTarget', 'True', REASON_POD_FAILURE_POLICY, msg, now);
      }
    }
    if (!c.finished) {
      if (c.failed > backoffLimit || pastBackoffLimitOnFailure(job, pods)) {
        c.finished = newCondition('FailureTarget', 'True', REASON_BACKOFF_LIMIT_EXCEEDED, 'Job has reached the specified backoff limit', now);
      } else if (this.pastActiveDeadline(job)) {
        c.finished = newCondition('FailureTarget', 'True', REASON_DEADLINE_EXCEEDED, 'Job was active longer than specified deadline', now);
      } else if (job.spec?.activeDeadlineSeconds != null && !isSuspended(job)) {
        const start = parseTime(job.status.startTime) ?? now;
        const wait = job.spec.activeDeadlineSeconds * 1000 - (now - start);
        this.d.log.v(2).info({ key, nextSyncInMs: wait }, 'Job has activeDeadlineSeconds configuration. Will sync this job again');
        this.d.enqueueAfter(key, wait);
      }
    }

    if (isIndexedJob(job)) {
      const completions = job.spec?.completions ?? 0;
      c.prevSucceededIndexes = parseIntervals(job.status.completedIndexes, completions);
      const fresh = pods.filter((p) => p.status?.phase === 'Succeeded' && hasTrackingFinalizer(p)).map(getCompletionIndex).filter((ix) => ix >= 0 && ix < completions);
      c.succeededIndexes = withIndexes(c.prevSucceededIndexes, fresh);
      c.succeeded = intervalsTotal(c.succeededIndexes);
      if (hasBackoffLimitPerIndex(job)) {
        c.failedIndexes = this.failedIndexes(job, pods);
        if (!c.finished) {
          const nFailed = intervalsTotal(c.failedIndexes);
          if (job.spec?.maxFailedIndexes != null && nFailed > job.spec.maxFailedIndexes) {
            c.finished = newCondition('FailureTarget', 'True', REASON_MAX_FAILED_INDEXES_EXCEEDED, 'Job has exceeded the specified maximal number of failed indexes', now);
          } else if (nFailed > 0 && nFailed + c.succeeded >= completions) {
            c.finished = newCondition('FailureTarget', 'True', REASON_FAILED_INDEXES, 'Job has failed indexes', now);
          }
        }
        c.delayed = this.delayedDeletionPerIndex(c);
      }
      if (!c.finished) {
        const msg = matchSuccessPolicy(job.spec?.successPolicy, completions, c.succeededIndexes);
        if (msg) c.finished = newCondition('SuccessCriteriaMet', 'True', REASON_SUCCESS_POLICY, msg, now);
      }
    }

    let suspendChanged = false;
    let manageErr: unknown;
    if (c.finished) {
      const { deleted, deletedReady, error } = await this.deleteActivePods(job, c.activePods);
      if (deleted !== active || !satisfied) c.finished = undefined; // not yet: wait for the cache
      active -= deleted;
      c.terminating += deleted;
      c.ready -= deletedReady;
      manageErr = error;
    } else {
      let managed = false;
      if (satisfied && !job.metadata?.deletionTimestamp) {
        const r = await this.manageJob(c);
        active = r.active;
        manageErr = r.error;
        managed = true;
      }
      const completions = job.spec?.completions;
      const complete = completions == null ? c.succeeded > 0 && active === 0 : c.succeeded >= completions && active === 0;
      if (complete) {
        c.finished = newCondition('SuccessCriteriaMet', 'True', REASON_COMPLETIONS_REACHED, 'Reached expected number of succeeded pods', now);
      } else if (managed) {
        const conds = (job.status.conditions ??= []);
        if (isSuspended(job)) {
          if (ensureCondition(conds, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)) {
            suspendChanged = true;
            this.d.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
          }
          if (active === 0 && job.status.startTime) {
            // The active deadline counts continuous activity: a suspended Job has no start time.
            delete job.status.startTime;
            suspendChanged = true;
          }
        } else if (ensureCondition(conds, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)) {
          suspendChanged = true;
          this.d.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
          job.status.startTime = rfc3339(now);
        }
        if (conds.length === 0) delete job.status.conditions;
      }
    }

    const st = job.status;
    const needsUpdate = suspendChanged || active !== (st.active ?? 0) || c.ready !== st.ready || c.terminating !== st.terminating;
    if (active > 0) st.active = active;
    else delete st.active;
    st.ready = c.ready;
    st.terminating = c.terminating;
    await this.trackStatusAndRemoveFinalizers(c, needsUpdate);
    if (manageErr) throw manageErr;
  }

  // --- pods -----------------------------------------------------------------

  /** Pods this Job owns after adoption and release (getPodsForJob); adopted pods get the tracking finalizer. */
  private async podsForJob(job: JobObject): Promise<PodObject[]> {
    const selector = selectorFromLabelSelector(job.spec?.selector);
    const all = this.d.podLister.namespace(job.metadata?.namespace ?? '').list();
    const jobs = this.d.jobs.namespace(job.metadata?.namespace ?? '');
    const podsClient = this.d.pods;
    const manager = newControllerRefManager<PodObject>({
      controller: job,
      controllerKind: JOB_KIND,
      selector,
      canAdopt: recheckDeletionTimestamp(job, () => jobs.get(job.metadata?.name ?? '')),
      patch: (obj, patch) => {
        const meta = (patch as { metadata?: { ownerReferences?: Array<{ $patch?: string }>; finalizers?: string[] } }).metadata;
        const adopting = meta?.ownerReferences?.some((r) => r.$patch !== 'delete');
        if (adopting && meta) meta.finalizers = [JOB_TRACKING_FINALIZER];
        return podsClient.namespace(obj.metadata?.namespace ?? '').patch(obj.metadata?.name ?? '', 'strategic', patch);
      },
      logger: this.d.log,
    });
    const owned = await manager.claim(all);
    const uid = job.metadata?.uid;
    return owned.map((p) => {
      const adopted = !(p.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
      if (adopted && !hasTrackingFinalizer(p)) {
        const copy = deepCopy(p);
        copy.metadata!.finalizers = [...(copy.metadata?.finalizers ?? []), JOB_TRACKING_FINALIZER];
        return copy;
      }
      return p;
    });
  }

  /** Finished pods not yet counted: holding the finalizer, not uncounted, not expected to lose it (getValidPodsWithFilter). */
  private newFinishedPods(c: SyncCtx, uncounted: Set<string>, filter: (p: PodObject) => boolean): PodObject[] {
    const completions = c.job.spec?.completions ?? 0;
    return c.pods.filter((p) => {
      const uid = p.metadata?.uid ?? '';
      if (!hasTrackingFinalizer(p) || uncounted.has(uid) || c.expectedRm.has(uid)) return false;
      if (isIndexedJob(c.job)) {
        const ix = getCompletionIndex(p);
        if (ix < 0 || ix >= completions) return false;
      }
      return filter(p);
    });
  }

  private pastActiveDeadline(job: Job): boolean {
    const ads = job.spec?.activeDeadlineSeconds;
    const start = parseTime(job.status?.startTime);
    if (ads == null || start === undefined || isSuspended(job)) return false;
    return this.d.clock.now() - start >= ads * 1000;
  }

  private failedIndexes(job: JobObject, pods: PodObject[]): Intervals {
    const completions = job.spec?.completions ?? 0;
    const limit = job.spec?.backoffLimitPerIndex ?? 0;
    const fresh: number[] = [];
    for (const p of pods) {
      if (!hasTrackingFinalizer(p) || !isPodFailed(p, job)) continue;
      const ix = getCompletionIndex(p);
      if (ix < 0 || ix >= completions) continue;
      const m = matchPodFailurePolicy(job.spec?.podFailurePolicy, p);
      if (m.action === 'FailIndex' || (m.countFailed && intAnnotation(p, JOB_INDEX_FAILURE_COUNT_ANNOTATION) >= limit)) fresh.push(ix);
    }
    return withIndexes(parseIntervals(job.status?.failedIndexes, completions), fresh);
  }

  private delayedDeletionPerIndex(c: SyncCtx): Map<number, PodObject> {
    const now = this.d.clock.now();
    const completions = c.job.spec?.completions ?? 0;
    const busy = new Set(c.activePods.map(getCompletionIndex));
    const out = new Map<number, PodObject>();
    for (const p of c.pods) {
      if (!hasTrackingFinalizer(p) || !isPodFailed(p, c.job) || c.expectedRm.has(p.metadata?.uid ?? '')) continue;
      const ix = getCompletionIndex(p);
      if (ix < 0 || ix >= completions || busy.has(ix)) continue;
      if (intervalsHas(c.succeededIndexes, ix) || intervalsHas(c.failedIndexes ?? [], ix)) continue;
      const prev = out.get(ix);
      if (!prev || podFinishTime(prev, now) < podFinishTime(p, now)) out.set(ix, p);
    }
    return out;
  }

  /** Deletes pods keeping their finalizers (deleteActivePods). */
  private async deleteActivePods(job: JobObject, pods: PodObject[]): Promise<{ deleted: number; deletedReady: number; error?: unknown }> {
    let deleted = 0;
    let deletedReady = 0;
    let error: unknown;
    await Promise.all(
      pods.map(async (p) => {
        try {
          await this.d.podControl.deletePod(job.metadata?.namespace ?? '', p.metadata?.name ?? '', job);
        } catch (err) {
          if (!isNotFound(err)) {
            error ??= err;
            this.d.log.error(err, { pod: p.metadata?.name }, 'deleting pod of finished job');
            return;
          }
        }
        deleted++;
        if (isPodReady(p)) deletedReady++;
      }),
    );
    return { deleted, deletedReady, ...(error !== undefined ? { error } : {}) };
  }

  /** Removes the finalizer, then deletes (deleteJobPods); each failure lowers the deletion expectations. */
  private async deleteJobPods(c: SyncCtx, pods: PodObject[]): Promise<{ removed: number; removedReady: number; error?: unknown }> {
    let removed = 0;
    let removedReady = 0;
    let error: unknown;
    const ns = c.job.metadata?.namespace ?? '';
    await Promise.all(
      pods.map(async (p) => {
        try {
          const patch = removeTrackingFinalizerPatch(p);
          if (patch) await this.d.podControl.patchPod(ns, p.metadata?.name ?? '', patch);
          await this.d.podControl.deletePod(ns, p.metadata?.name ?? '', c.job);
        } catch (err) {
          this.d.expectations.deletionObserved(c.key);
          if (!isNotFound(err)) {
            error ??= err;
            this.d.log.v(2).info({ job: c.key, pod: p.metadata?.name, err: String(err) }, 'Failed to delete Pod');
            return;
          }
        }
        removed++;
        if (isPodReady(p)) removedReady++;
      }),
    );
    return { removed, removedReady, ...(error !== undefined ? { error } : {}) };
  }

  /** Active pods to delete: repeated or invalid indexes first, then in ActivePods order (activePodsForRemoval). */
  private podsForRemoval(job: JobObject, pods: PodObject[], atLeast: number): PodObject[] {
    let rm: PodObject[] = [];
    let left = pods;
    if (isIndexedJob(job)) [rm, left] = duplicatedIndexPods(pods, job.spec?.completions ?? 0, activePodsLess);
    if (rm.length < atLeast) rm = [...rm, ...sortActivePods(left).slice(0, atLeast - rm.length)];
    return rm;
  }

  /** Creates or deletes pods toward the wanted number of active pods (manageJob). */
  private async manageJob(c: SyncCtx): Promise<{ active: number; error?: unknown }> {
    const job = c.job;
    let active = c.activePods.length;
    const parallelism = job.spec?.parallelism ?? 1;
    if (isSuspended(job)) {
      const victims = this.podsForRemoval(job, c.activePods, active);
      this.d.expectations.expectDeletions(c.key, victims.length);
      const r = await this.deleteJobPods(c, victims);
      c.terminating += r.removed;
      c.ready -= r.removedReady;
      return { active: active - r.removed, ...(r.error !== undefined ? { error: r.error } : {}) };
    }
    let want: number;
    const completions = job.spec?.completions;
    if (completions == null) want = c.succeeded > 0 ? active : parallelism;
    else want = Math.max(0, Math.min(completions - c.succeeded, parallelism));

    let victims = this.podsForRemoval(job, c.activePods, Math.max(0, active - want));
    if (victims.length > MAX_POD_CREATE_DELETE_PER_SYNC) victims = victims.slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (victims.length > 0) {
      this.d.expectations.expectDeletions(c.key, victims.length);
      this.d.log.v(4).info({ job: c.key, deleted: victims.length, target: want }, 'Too many pods running for job');
      const r = await this.deleteJobPods(c, victims);
      c.terminating += r.removed;
      c.ready -= r.removedReady;
      return { active: active - r.removed, ...(r.error !== undefined ? { error: r.error } : {}) };
    }

    const terminating = onlyReplaceFailedPods(job) ? c.terminating : 0;
    let diff = want - terminating - active;
    if (diff <= 0) return { active };
    const now = this.d.clock.now();
    if (!hasBackoffLimitPerIndex(job)) {
      const wait = remainingTime(c.newBackoff, now);
      if (wait > 0) {
        this.d.log.v(4).info({ job: c.key, waitMs: wait }, 'enqueueing job with delay (pod failure backoff)');
        this.d.enqueueAfter(c.key, wait);
        return { active };
      }
    }
    diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexes: number[] = [];
    if (isIndexedJob(job)) {
      const nonPending = intervalsFromIndexes([...expand(c.succeededIndexes), ...expand(c.failedIndexes ?? [])]);
      const busy = onlyReplaceFailedPods(job) ? [...c.activePods, ...c.pods.filter(isPodTerminating)] : c.activePods;
      indexes = firstPendingIndexes(completions ?? 0, diff, nonPending, busy);
      if (hasBackoffLimitPerIndex(job)) {
        const ready: number[] = [];
        let minWait: number | undefined;
        for (const ix of indexes) {
          const last = c.delayed.get(ix);
          const w = last
            ? remainingTimeForFailures(now, intAnnotation(last, JOB_INDEX_FAILURE_COUNT_ANNOTATION) + intAnnotation(last, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION) + 1, podFinishTime(last, now))
            : 0;
          if (w === 0) ready.push(ix);
          else if (minWait === undefined || w < minWait) minWait = w;
        }
        if (ready.length === 0 && minWait !== undefined) {
          this.d.enqueueAfter(c.key, minWait);
          return { active };
        }
        indexes = ready;
      }
      diff = indexes.length;
    }
    if (diff <= 0) return { active };

    this.d.expectations.expectCreations(c.key, diff);
    this.d.log.v(4).info({ job: c.key, need: want, creating: diff }, 'Too few pods running');
    const template = deepCopy(job.spec?.template ?? {}) as PodTemplateSpec;
    if (isIndexedJob(job)) addCompletionIndexEnv(template);
    template.metadata ??= {};
    const fin = template.metadata.finalizers ?? [];
    if (!fin.includes(JOB_TRACKING_FINALIZER)) template.metadata.finalizers = [...fin, JOB_TRACKING_FINALIZER];
    const ref = newControllerRef(job, JOB_KIND);
    const ns = job.metadata?.namespace ?? '';
    const jobName = job.metadata?.name ?? '';
    active += diff;
    let error: unknown;
    let remaining = diff;
    for (let batch = Math.min(diff, 1); remaining > 0; batch = Math.min(2 * batch, remaining)) {
      const before = error;
      const results = await Promise.all(
        Array.from({ length: batch }, async () => {
          const ix = indexes.shift();
          let t = template;
          let generateName = '';
          if (ix !== undefined) {
            t = deepCopy(template);
            applyCompletionIndex(t, jobName, ix);
            generateName = podGenerateNameWithIndex(jobName, ix);
            if (hasBackoffLimitPerIndex(job)) setIndexFailureCounts(t, job, c.delayed.get(ix));
          }
          try {
            await this.d.podControl.createPodsWithGenerateName(ns, t, job, ref, generateName);
            return true;
          } catch (err) {
            if (isStatusError(err) && (err.status.details?.causes ?? []).some((x) => x.reason === 'NamespaceTerminating')) return true;
            this.d.log.v(2).info({ job: c.key, err: String(err) }, 'Failed creation, decrementing expectations');
            this.d.expectations.creationObserved(c.key);
            active--;
            error ??= err;
            return false;
          }
        }),
      );
      remaining -= batch;
      if (results.some((ok) => !ok) && before === undefined && remaining > 0) {
        this.d.log.v(2).info({ job: c.key, skipped: remaining }, 'Slow-start failure. Skipping creating pods, decrementing expectations');
        active -= remaining;
        for (let i = 0; i < remaining; i++) this.d.expectations.creationObserved(c.key);
        break;
      }
    }
    return { active, ...(error !== undefined ? { error } : {}) };
  }

  // --- status ---------------------------------------------------------------

  /** trackJobStatusAndRemoveFinalizers: the uncountedTerminatedPods protocol, then the terminal condition. */
  private async trackStatusAndRemoveFinalizers(c: SyncCtx, needsFlushIn: boolean): Promise<void> {
    let needsFlush = needsFlushIn;
    const job = c.job;
    const st = job.status!;
    const uncounted = st.uncountedTerminatedPods!;
    const indexed = isIndexedJob(job);
    const completions = job.spec?.completions ?? 0;
    const pods = indexed ? [...c.pods].sort((a, b) => getCompletionIndex(a) - getCompletionIndex(b)) : c.pods;
    const withFinalizer = new Set<string>();
    for (const p of pods) {
      const uid = p.metadata?.uid ?? '';
      if (hasTrackingFinalizer(p) && !c.expectedRm.has(uid)) withFinalizer.add(uid);
    }
    if (cleanUncounted(st, withFinalizer)) needsFlush = true;
    const toRemove: PodObject[] = [];
    const newSucceededIndexes: number[] = [];
    let reachedMax = false;
    for (const p of pods) {
      const uid = p.metadata?.uid ?? '';
      if (!hasTrackingFinalizer(p) || c.expectedRm.has(uid)) continue;
      const failed = isPodFailed(p, job);
      if (!this.canRemoveFinalizer(c, p, failed)) continue;
      toRemove.push(p);
      if (p.status?.phase === 'Succeeded' && !c.uncountedFailed.has(uid)) {
        if (indexed) {
          const ix = getCompletionIndex(p);
          if (ix >= 0 && ix < completions && !intervalsHas(c.prevSucceededIndexes, ix)) {
            newSucceededIndexes.push(ix);
            needsFlush = true;
          }
        } else if (!c.uncountedSucceeded.has(uid)) {
          needsFlush = true;
          (uncounted.succeeded ??= []).push(uid);
        }
      } else if (failed || (c.finished && c.finished.type !== 'SuccessCriteriaMet')) {
        const ix = getCompletionIndex(p);
        if (!c.uncountedFailed.has(uid) && (!indexed || (ix >= 0 && ix < completions))) {
          if (matchPodFailurePolicy(job.spec?.podFailurePolicy, p).countFailed) {
            needsFlush = true;
            (uncounted.failed ??= []).push(uid);
          }
        }
      }
      if (newSucceededIndexes.length + (uncounted.succeeded?.length ?? 0) + (uncounted.failed?.length ?? 0) >= MAX_UNCOUNTED_PODS) {
        reachedMax = true;
        break;
      }
    }
    if (indexed) {
      c.succeededIndexes = withIndexes(c.succeededIndexes, newSucceededIndexes);
      const s = formatIntervals(c.succeededIndexes);
      if (s !== (st.completedIndexes ?? '')) needsFlush = true;
      st.succeeded = intervalsTotal(c.succeededIndexes);
      if (s) st.completedIndexes = s;
      else delete st.completedIndexes;
      if (c.failedIndexes) {
        const f = formatIntervals(c.failedIndexes);
        if (f !== st.failedIndexes) {
          st.failedIndexes = f;
          needsFlush = true;
        }
      }
    }
    const now = this.d.clock.now();
    if (c.finished?.type === 'FailureTarget') {
      (st.conditions ??= []).push(c.finished);
      needsFlush = true;
      c.finished = newCondition('Failed', 'True', c.finished.reason ?? '', c.finished.message ?? '', now);
    }
    if (c.finished?.type === 'SuccessCriteriaMet') {
      if (findCondition(job, 'SuccessCriteriaMet')?.status !== 'True') {
        (st.conditions ??= []).push(c.finished);
        needsFlush = true;
      }
      // Complete has carried the criterion's reason and message since 1.31; before, neither.
      const said = !this.d.terminalConditionAlone || c.finished.reason === REASON_SUCCESS_POLICY;
      c.finished = newCondition('Complete', 'True', said ? (c.finished.reason ?? '') : '', said ? (c.finished.message ?? '') : '', now);
    }

    // 1. Persist the uncounted UIDs (and interim conditions) before touching finalizers.
    if (needsFlush) {
      c.job = await this.updateStatus(c.job);
      this.d.backoff.set(c.key, c.newBackoff);
      needsFlush = false;
    }
    // 2. Remove finalizers; 3. move pods that lost theirs into the counters.
    let rmErr: unknown;
    if (toRemove.length > 0) {
      const ok = await this.removeTrackingFinalizers(c.key, toRemove);
      ok.forEach((done, i) => {
        if (done) withFinalizer.delete(toRemove[i]!.metadata?.uid ?? '');
        else rmErr ??= new Error(`removing tracking finalizer from pod ${toRemove[i]!.metadata?.name}`);
      });
    }
    if (cleanUncounted(c.job.status!, withFinalizer)) needsFlush = true;
    if (rmErr !== undefined && needsFlush) {
      await this.updateStatus(c.job);
      throw rmErr;
    }
    if (rmErr !== undefined) throw rmErr;
    const finished = !reachedMax && this.enactFinished(c);
    if (finished) needsFlush = true;
    if (needsFlush) {
      c.job = await this.updateStatus(c.job);
      if (finished && c.finished) this.recordFinished(c.job, c.finished);
    }
  }

  private canRemoveFinalizer(c: SyncCtx, p: PodObject, failed: boolean): boolean {
    if (c.job.metadata?.deletionTimestamp || c.finished || p.status?.phase === 'Succeeded') return true;
    if (!failed) return false;
    if (hasBackoffLimitPerIndex(c.job)) {
      const d = c.delayed.get(getCompletionIndex(p));
      if (d && d.metadata?.uid === p.metadata?.uid) return false;
    }
    return true;
  }

  /** Adds Complete or Failed once nothing is uncounted or terminating (enactJobFinished). */
  private enactFinished(c: SyncCtx): boolean {
    if (!c.finished) return false;
    const st = c.job.status!;
    const uncounted = (st.uncountedTerminatedPods?.succeeded?.length ?? 0) + (st.uncountedTerminatedPods?.failed?.length ?? 0);
    if (uncounted > 0 || c.terminating > 0) return false;
    const now = this.d.clock.now();
    // Before 1.31 a Job got its terminal condition alone: the interim one, which carried the Job's finished state
    // between syncs (also where the API server does not store uncountedTerminatedPods), goes in the same write.
    if (this.d.terminalConditionAlone) st.conditions = (st.conditions ?? []).filter((x) => x.type !== 'SuccessCriteriaMet' && x.type !== 'FailureTarget');
    const conds = (st.conditions ??= []);
    ensureCondition(conds, c.finished.type as 'Complete' | 'Failed', 'True', c.finished.reason ?? '', c.finished.message ?? '', now);
    if (c.finished.type === 'Complete') st.completionTime = rfc3339(now);
    return true;
  }

  private recordFinished(job: JobObject, cond: JobCondition): void {
    if (cond.type === 'Complete') {
      const completions = job.spec?.completions;
      if (completions != null && (job.status?.succeeded ?? 0) > completions) {
        this.d.recorder.event(job, 'Warning', 'TooManySucceededPods', 'Too many succeeded pods running after completion count reached');
      }
      this.d.recorder.event(job, 'Normal', 'Completed', 'Job completed');
    } else {
      this.d.recorder.event(job, 'Warning', cond.reason ?? '', cond.message ?? '');
    }
  }

  private async removeTrackingFinalizers(jobKey: string, pods: PodObject[]): Promise<boolean[]> {
    this.d.finalizerExpectations.expectRemoved(jobKey, pods.map((p) => p.metadata?.uid ?? ''));
    return Promise.all(
      pods.map(async (p) => {
        const patch = removeTrackingFinalizerPatch(p);
        if (!patch) return true;
        try {
          await this.d.podControl.patchPod(p.metadata?.namespace ?? '', p.metadata?.name ?? '', patch);
          return true;
        } catch (err) {
          this.d.finalizerExpectations.removalObserved(jobKey, p.metadata?.uid ?? '');
          if (isNotFound(err)) return true;
          this.d.log.error(err, { pod: p.metadata?.name }, 'removing tracking finalizer');
          return false;
        }
      }),
    );
  }

  private async updateStatus(job: JobObject): Promise<JobObject> {
    const st = job.status;
    if (st?.uncountedTerminatedPods) {
      if (!st.uncountedTerminatedPods.succeeded?.length) delete st.uncountedTerminatedPods.succeeded;
      if (!st.uncountedTerminatedPods.failed?.length) delete st.uncountedTerminatedPods.failed;
    }
    const updated = await this.d.jobs.namespace(job.metadata?.namespace ?? '').updateStatus(job);
    // Keep working on our copy of the status (the server may drop empty fields), with the new resourceVersion.
    return { ...job, metadata: { ...job.metadata, resourceVersion: updated.metadata?.resourceVersion } } as JobObject;
  }

  /** A finished Job lets go of pods that still hold its finalizer (the orphan cleanup upstream does per pod). */
  private async releaseFinishedPods(job: JobObject): Promise<void> {
    const uid = job.metadata?.uid;
    const pods = this.d.podLister
      .namespace(job.metadata?.namespace ?? '')
      .list()
      .filter((p) => hasTrackingFinalizer(p) && getControllerOf(p)?.uid === uid);
    if (pods.length === 0) return;
    const ok = await Promise.all(
      pods.map(async (p) => {
        try {
          await this.d.podControl.patchPod(p.metadata?.namespace ?? '', p.metadata?.name ?? '', removeTrackingFinalizerPatch(p));
          return true;
        } catch (err) {
          if (isNotFound(err)) return true;
          this.d.log.error(err, { pod: p.metadata?.name }, 'removing tracking finalizer of a finished job');
          return false;
        }
      }),
    );
    if (ok.includes(false)) throw new Error(`removing tracking finalizers of finished job ${job.metadata?.name}`);
  }
}

function expand(iv: Intervals): number[] {
  const out: number[] = [];
  for (const [a, b] of iv) for (let x = a; x <= b; x++) out.push(x);
  return out;
}

/** Moves uncounted UIDs whose pods lost their finalizer into the counters (cleanUncountedPodsWithoutFinalizers). */
function cleanUncounted(st: JobStatus, withFinalizer: ReadonlySet<string>): boolean {
  const u = (st.uncountedTerminatedPods ??= {});
  let changed = false;
  const s = (u.succeeded ?? []).filter((x) => withFinalizer.has(x));
  if (s.length !== (u.succeeded ?? []).length) {
    st.succeeded = (st.succeeded ?? 0) + (u.succeeded!.length - s.length);
    u.succeeded = s;
    changed = true;
  }
  const f = (u.failed ?? []).filter((x) => withFinalizer.has(x));
  if (f.length !== (u.failed ?? []).length) {
    st.failed = (st.failed ?? 0) + (u.failed!.length - f.length);
    u.failed = f;
    changed = true;
  }
  return changed;
}

/** restartPolicy OnFailure: container restarts of running pods reach backoffLimit (pastBackoffLimitOnFailure). */
function pastBackoffLimitOnFailure(job: Job, pods: PodObject[]): boolean {
  if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    for (const cs of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) restarts += cs.restartCount ?? 0;
  }
  const limit = job.spec?.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/** Carries the index's failure counts to its replacement pod (addIndexFailureCountAnnotation). */
function setIndexFailureCounts(t: PodTemplateSpec, job: Job, lastFailed: PodObject | undefined): void {
  let failures = 0;
  let ignored = 0;
  if (lastFailed) {
    failures = intAnnotation(lastFailed, JOB_INDEX_FAILURE_COUNT_ANNOTATION);
    ignored = intAnnotation(lastFailed, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION);
    if (matchPodFailurePolicy(job.spec?.podFailurePolicy, lastFailed).countFailed) failures++;
    else ignored++;
  }
  t.metadata ??= {};
  const ann: Record<string, string> = { ...(t.metadata.annotations ?? {}), [JOB_INDEX_FAILURE_COUNT_ANNOTATION]: String(failures) };
  if (ignored > 0) ann[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = String(ignored);
  t.metadata.annotations = ann;
}
