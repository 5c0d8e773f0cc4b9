/**
 * The Job controller (kube-controller-manager's `job-controller`,
 * --concurrent-job-syncs, default 5): informers, event handlers and queues.
 * The sync itself is in sync-job.ts.
 *
 * Pod events are batched: a job is synced at most once per second for pod
 * changes (syncJobBatchPeriod); job changes sync at once. Pods holding the
 * tracking finalizer whose Job is gone or finished lose the finalizer through
 * a second queue (the orphan queue upstream).
 */
import { serverOlderThan } from '../../client/discovery.js';
import { serverVersionIs } from '../server-version.js';
import { GVR } from '../../api/gvr.js';
import { splitKey } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { controllersSelecting, getControllerOf } from '../../controller/controller-ref-manager.js';
import { newControllerExpectations, type ControllerExpectations } from '../../controller/expectations.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { newPodControl, type PodControl } from '../../controller/pod-control.js';
import type { DeletedFinalStateUnknown, Lister, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import { parseTime } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { newBackoffStore, type BackoffStore } from './backoff.js';
import { newFinalizerExpectations, type FinalizerExpectations } from './finalizer-expectations.js';
import { hasTrackingFinalizer, isJobFinished, removeTrackingFinalizerPatch, type JobObject, type PodObject } from './job-util.js';
import { JobSyncer } from './sync-job.js';

export const JOB_CONTROLLER_NAME = 'job-controller';
/** Pod events of one job within this window cause one sync (syncJobBatchPeriod). */
export const SYNC_JOB_BATCH_PERIOD_MS = 1000;

export interface JobController extends Controller {
  /** Syncs one `namespace/name` job key (what a worker does). */
  sync(key: string): Promise<void>;
  /** Removes the tracking finalizer of an orphaned pod `namespace/name` (the orphan queue's work). */
  syncOrphanPod(key: string): Promise<void>;
  readonly worker: QueueWorker;
  readonly orphanWorker: QueueWorker;
  readonly expectations: ControllerExpectations;
  readonly finalizerExpectations: FinalizerExpectations;
  readonly backoff: BackoffStore;
}

export interface JobControllerOptions {
  podControl?: PodControl;
  /**
   * Leave the conditions as kube-controller-manager before 1.31 did (default
   * false): Complete or Failed alone, the interim SuccessCriteriaMet /
   * FailureTarget condition removed in the write that sets it, and Complete
   * without reason or message. Set for API servers older than 1.31.
   */
  terminalConditionAlone?: boolean;
}

class JobControllerImpl implements JobController {
  readonly name = JOB_CONTROLLER_NAME;
  readonly worker: QueueWorker;
  readonly orphanWorker: QueueWorker;
  readonly expectations: ControllerExpectations;
  readonly finalizerExpectations = newFinalizerExpectations();
  readonly backoff = newBackoffStore();
  private readonly jobInformer: SharedIndexInformer<JobObject>;
  private readonly podInformer: SharedIndexInformer<PodObject>;
  private readonly jobLister: Lister<JobObject>;
  private readonly podLister: Lister<PodObject>;
  private readonly podControl: PodControl;
  private readonly syncer: JobSyncer;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext, opts: JobControllerOptions) {
    this.log = ctx.logger(JOB_CONTROLLER_NAME);
    const recorder = ctx.recorder(JOB_CONTROLLER_NAME);
    this.podControl = opts.podControl ?? newPodControl({ client: ctx.client, recorder, logger: this.log });
    this.expectations = newControllerExpectations({ clock: ctx.clock, logger: this.log });
    this.worker = newQueueWorker({ name: 'job', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    this.orphanWorker = newQueueWorker({ name: 'job_orphan_pod', clock: ctx.clock, logger: this.log, sync: (key) => this.syncOrphanPod(key) });
    this.jobInformer = ctx.informers.jobs() as SharedIndexInformer<JobObject>;
    this.podInformer = ctx.informers.pods() as SharedIndexInformer<PodObject>;
    this.jobLister = newLister(this.jobInformer.getIndexer());
    this.podLister = newLister(this.podInformer.getIndexer());
    this.syncer = new JobSyncer({
      clock: ctx.clock,
      log: this.log,
      recorder,
      podControl: this.podControl,
      jobs: ctx.client.resource<JobObject>(GVR.jobs),
      pods: ctx.client.resource<PodObject>(GVR.pods),
      jobLister: this.jobLister,
      podLister: this.podLister,
      expectations: this.expectations,
      finalizerExpectations: this.finalizerExpectations,
      backoff: this.backoff,
      enqueueAfter: (key, ms) => this.worker.enqueueAfter(key, Math.max(0, ms)),
      terminalConditionAlone: opts.terminalConditionAlone ?? false,
    });

    this.jobInformer.addEventHandler({
      onAdd: (job) => this.worker.enqueue(keyFunc(job)),
      onUpdate: (oldJob, curJob) => this.updateJob(oldJob, curJob),
      onDelete: (obj) => this.deleteJob(obj),
    });
    this.podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (oldPod, curPod) => this.updatePod(oldPod, curPod),
      onDelete: (obj) => {
        const pod = objectFromDeleted(obj);
        if (pod) this.deletePod(pod, true);
      },
    });
  }

  healthy(): boolean {
    return this.worker.healthy() && this.orphanWorker.healthy();
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({ controller: this.name }, 'Starting job controller');
    const synced = await waitForCacheSync(this.name, signal, this.ctx.clock, () => this.jobInformer.hasSynced(), () => this.podInformer.hasSynced());
    if (!synced) return;
    await Promise.all([this.worker.run(workers, signal), this.orphanWorker.run(1, signal)]);
    this.log.info({ controller: this.name }, 'Shutting down job controller');
  }

  sync(key: string): Promise<void> {
    return this.syncer.sync(key);
  }

  async syncOrphanPod(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.podLister.namespace(namespace).get(name);
    if (!pod) return;
    const ref = getControllerOf(pod);
    if (ref) {
      if (ref.kind !== 'Job' || ref.apiVersion !== 'batch/v1') return; // another owner's finalizer business
      const job = this.resolveControllerRef(namespace, ref);
      if (job && !isJobFinished(job)) return; // adopted or still running
    }
    const patch = removeTrackingFinalizerPatch(pod);
    if (!patch) return;
    try {
      await this.podControl.patchPod(namespace, name, patch);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  // --- handlers ---------------------------------------------------------------

  private updateJob(oldJob: JobObject, curJob: JobObject): void {
    if (oldJob.metadata?.uid !== curJob.metadata?.uid) this.deleteJob(oldJob);
    const key = keyFunc(curJob);
    this.worker.enqueue(key);
    // A changed activeDeadlineSeconds moves the deadline sync.
    const ads = curJob.spec?.activeDeadlineSeconds;
    const start = parseTime(curJob.status?.startTime);
    if (ads != null && ads !== oldJob.spec?.activeDeadlineSeconds && start !== undefined) {
      this.worker.enqueueAfter(key, Math.max(0, ads * 1000 - (this.ctx.clock.now() - start)));
    }
  }

  private deleteJob(obj: JobObject | DeletedFinalStateUnknown<JobObject>): void {
    const key = keyFunc(obj);
    this.worker.enqueue(key);
    const job = objectFromDeleted(obj);
    if (!job) return;
    // Pods still holding the finalizer would never go away: release them.
    for (const pod of this.podLister.namespace(job.metadata?.namespace ?? '').list()) {
      if (hasTrackingFinalizer(pod) && getControllerOf(pod)?.uid === job.metadata?.uid) this.orphanWorker.enqueue(keyFunc(pod));
    }
  }

  private resolveControllerRef(namespace: string, ref: { kind?: string; apiVersion?: string; name: string; uid: string }): JobObject | undefined {
    if (ref.kind !== 'Job' || ref.apiVersion?.split('/')[0] !== 'batch') return undefined;
    const job = this.jobLister.namespace(namespace).get(ref.name);
    return job && job.metadata?.uid === ref.uid ? job : undefined;
  }

  private enqueueBatched(job: JobObject): void {
    this.worker.enqueueAfter(keyFunc(job), SYNC_JOB_BATCH_PERIOD_MS);
  }

  /** Jobs in the pod's namespace whose selector matches it. */
  private jobsForPod(pod: PodObject): JobObject[] {
    return controllersSelecting(this.jobLister, pod.metadata?.namespace ?? '', pod.metadata?.labels);
  }

  private addPod(pod: PodObject): void {
    if (pod.metadata?.deletionTimestamp) {
      this.deletePod(pod, false);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const job = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
      if (!job || isJobFinished(job)) {
        if (hasTrackingFinalizer(pod)) this.orphanWorker.enqueue(keyFunc(pod));
        return;
      }
      this.expectations.creationObserved(keyFunc(job));
      this.enqueueBatched(job);
      return;
    }
    if (hasTrackingFinalizer(pod)) this.orphanWorker.enqueue(keyFunc(pod));
    for (const job of this.jobsForPod(pod)) this.enqueueBatched(job);
  }

  private updatePod(oldPod: PodObject, curPod: PodObject): void {
    if (oldPod.metadata?.resourceVersion === curPod.metadata?.resourceVersion) return;
    if (curPod.metadata?.deletionTimestamp) {
      this.deletePod(curPod, false);
      return;
    }
    const finalizerRemoved = !hasTrackingFinalizer(curPod);
    const curRef = getControllerOf(curPod);
    const oldRef = getControllerOf(oldPod);
    const refChanged = JSON.stringify(curRef ?? null) !== JSON.stringify(oldRef ?? null);
    if (refChanged && oldRef) {
      const job = this.resolveControllerRef(oldPod.metadata?.namespace ?? '', oldRef);
      if (job) {
        if (finalizerRemoved) this.finalizerExpectations.removalObserved(keyFunc(job), curPod.metadata?.uid ?? '');
        this.enqueueBatched(job);
      }
    }
    if (curRef) {
      const job = this.resolveControllerRef(curPod.metadata?.namespace ?? '', curRef);
      if (!job || isJobFinished(job)) {
        if (hasTrackingFinalizer(curPod)) this.orphanWorker.enqueue(keyFunc(curPod));
        return;
      }
      if (finalizerRemoved) this.finalizerExpectations.removalObserved(keyFunc(job), curPod.metadata?.uid ?? '');
      this.enqueueBatched(job);
      return;
    }
    if (hasTrackingFinalizer(curPod)) this.orphanWorker.enqueue(keyFunc(curPod));
    const labelChanged = JSON.stringify(curPod.metadata?.labels ?? {}) !== JSON.stringify(oldPod.metadata?.labels ?? {});
    if (labelChanged || refChanged) for (const job of this.jobsForPod(curPod)) this.enqueueBatched(job);
  }

  /** `final`: the pod is gone; otherwise it only got a deletionTimestamp. */
  private deletePod(pod: PodObject, final: boolean): void {
    const ref = getControllerOf(pod);
    if (!ref) return;
    const job = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
    if (!job || isJobFinished(job)) {
      if (!final && hasTrackingFinalizer(pod)) this.orphanWorker.enqueue(keyFunc(pod));
      return;
    }
    const key = keyFunc(job);
    this.expectations.deletionObserved(key);
    if (final || !hasTrackingFinalizer(pod)) this.finalizerExpectations.removalObserved(key, pod.metadata?.uid ?? '');
    this.enqueueBatched(job);
  }
}

export function newJobController(ctx: ControllerContext, opts: JobControllerOptions = {}): JobController {
  return new JobControllerImpl(ctx, opts);
}

export const descriptor: ControllerDescriptor = {
  name: JOB_CONTROLLER_NAME,
  aliases: ['job'],
  requiredResources: [GVR.jobs, GVR.pods],
  defaultWorkers: 5,
  create: async (ctx) => {
    const terminalConditionAlone = await serverVersionIs(ctx, leavesTerminalConditionAlone, JOB_CONTROLLER_NAME, 'adding interim conditions as the current release does');
    return newJobController(ctx, { terminalConditionAlone });
  },
};

/**
 * Whether an API server of `version` came with a Job controller that set
 * Complete or Failed alone: kube-controller-manager adds the interim
 * SuccessCriteriaMet and FailureTarget conditions first, and gives Complete
 * a reason, from 1.31 (kubernetes/kubernetes#125510).
 */
export function leavesTerminalConditionAlone(version: { major?: string; minor?: string }): boolean {
  return serverOlderThan(version, 31);
}
