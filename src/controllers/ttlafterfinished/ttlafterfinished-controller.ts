/**
 * The TTL-after-finished controller (pkg/controller/ttlafterfinished;
 * `ttl-after-finished-controller`, --concurrent-ttl-after-finished-syncs,
 * default 5).
 *
 * Contract: a Job with spec.ttlSecondsAfterFinished that is finished
 * (Complete or Failed True) is deleted ttlSecondsAfterFinished after the
 * finishing condition's lastTransitionTime. Before deleting, the Job is read
 * live and the TTL checked again (the TTL may have changed); the delete
 * carries a UID precondition and cascades (propagationPolicy Foreground, as
 * upstream), so the Job's pods go with it. Until the TTL expires the key is
 * requeued for the remaining time: no polling.
 */
import type { Job } from 'kubernetes-types/batch/v1.js';
import { GVR } from '../../api/gvr.js';
import { splitKey, type KubeObject } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import type { ResourceInterface } from '../../client/interfaces.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { keyFunc } from '../../controller/keys.js';
import type { Lister, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import { parseTime } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const TTL_AFTER_FINISHED_CONTROLLER_NAME = 'ttl-after-finished-controller';

type JobObject = Job & KubeObject;

export interface TTLAfterFinishedController extends Controller {
  /** Processes one `namespace/name` job key (what a worker does). */
  sync(key: string): Promise<void>;
  readonly worker: QueueWorker;
}

/** The finish time of a finished Job (epoch ms), or undefined when it is not finished. */
export function jobFinishTime(job: Job): number | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return parseTime(c.lastTransitionTime) ?? 0;
  }
  return undefined;
}

/** Has a TTL and is finished (needsCleanup). */
export function needsCleanup(job: Job): boolean {
  return job.spec?.ttlSecondsAfterFinished != null && jobFinishTime(job) !== undefined;
}

class TTLController implements TTLAfterFinishedController {
  readonly name = TTL_AFTER_FINISHED_CONTROLLER_NAME;
  readonly worker: QueueWorker;
  private readonly informer: SharedIndexInformer<JobObject>;
  private readonly lister: Lister<JobObject>;
  private readonly jobs: ResourceInterface<JobObject>;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(TTL_AFTER_FINISHED_CONTROLLER_NAME);
    this.jobs = ctx.client.resource<JobObject>(GVR.jobs);
    this.worker = newQueueWorker({ name: 'ttl_jobs_to_delete', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    this.informer = ctx.informers.jobs() as SharedIndexInformer<JobObject>;
    this.lister = newLister(this.informer.getIndexer());
    const consider = (job: JobObject) => {
      if (!job.metadata?.deletionTimestamp && needsCleanup(job)) this.worker.enqueue(keyFunc(job));
    };
    this.informer.addEventHandler({ onAdd: consider, onUpdate: (_old, cur) => consider(cur) });
  }

  healthy(): boolean {
    return this.worker.healthy();
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({ controller: this.name }, 'Starting TTL after finished controller');
    if (!(await waitForCacheSync(this.name, signal, this.ctx.clock, () => this.informer.hasSynced()))) return;
    await this.worker.run(workers, signal);
    this.log.info({ controller: this.name }, 'Shutting down TTL after finished controller');
  }

  /**
   * When the TTL expired: its expiry time. Otherwise undefined, and the key is
   * requeued for the time left when the job still needs cleanup (processTTL).
   */
  private processTTL(job: JobObject): number | undefined {
    if (job.metadata?.deletionTimestamp || !needsCleanup(job)) return undefined;
    const now = this.ctx.clock.now();
    const finishAt = jobFinishTime(job)!;
    if (finishAt > now) {
      this.log.info({ job: keyFunc(job) }, 'Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.');
    }
    const expireAt = finishAt + job.spec!.ttlSecondsAfterFinished! * 1000;
    const left = expireAt - now;
    if (left <= 0) return expireAt;
    this.worker.enqueueAfter(keyFunc(job), left);
    return undefined;
  }

  async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    this.log.v(4).info({ job: key }, 'Checking if Job is ready for cleanup');
    const cached = this.lister.namespace(namespace).get(name);
    if (!cached || this.processTTL(cached) === undefined) return;
    // The cached TTL may be stale: check the live object before deleting.
    let fresh: JobObject;
    try {
      fresh = await this.jobs.namespace(namespace).get(name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (this.processTTL(fresh) === undefined) return;
    this.log.v(4).info({ job: key }, 'Cleaning up Job');
    try {
      await this.jobs.namespace(namespace).delete(name, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata?.uid },
      });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}

export function newTTLAfterFinishedController(ctx: ControllerContext): TTLAfterFinishedController {
  return new TTLController(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: TTL_AFTER_FINISHED_CONTROLLER_NAME,
  aliases: ['ttl-after-finished'],
  requiredResources: [GVR.jobs],
  defaultWorkers: 5,
  create: (ctx) => newTTLAfterFinishedController(ctx),
};
