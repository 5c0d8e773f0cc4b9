/**
 * The CronJob controller (pkg/controller/cronjob/cronjob_controllerv2.go;
 * `cronjob-controller`, --concurrent-cron-job-syncs, default 5).
 *
 * Contract of one sync of a CronJob key:
 * - reconcile status.active with the Jobs it controls (SawCompletedJob,
 *   MissingJob, UnexpectedJob), lastSuccessfulTime, and prune finished Jobs
 *   beyond successfulJobsHistoryLimit / failedJobsHistoryLimit (oldest first);
 * - unless suspended or being deleted, start the Job of the most recent
 *   unmet schedule time (honouring startingDeadlineSeconds and
 *   concurrencyPolicy), named `<cronjob>-<minutes since epoch>`, so that a
 *   restart never starts the same run twice;
 * - requeue the key for the next schedule time (+100 ms): no polling.
 */
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { splitKey, type KubeObject } from '../../api/types.js';
import { isAlreadyExists, isNotFound, isStatusError } from '../../client/errors.js';
import type { ResourceInterface } from '../../client/interfaces.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { getControllerOf, newControllerRef } from '../../controller/controller-ref-manager.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { DeletedFinalStateUnknown, Lister, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { parseTime, rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { parseSchedule, validateTimeZone, formatInZone, type Schedule } from './cron.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const CRONJOB_CONTROLLER_NAME = 'cronjob-controller';
export const CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** Added to every requeue so the sync runs just after the schedule time (nextScheduleDelta). */
export const NEXT_SCHEDULE_DELTA_MS = 100;
const CRONJOB_KIND = { group: 'batch', version: 'v1', kind: 'CronJob' } as const;

type CronJobObject = CronJob & KubeObject;
type JobObject = Job & KubeObject;

export interface CronJobController extends Controller {
  /** Syncs one `namespace/name` key; returns the requeue delay (ms), if any. */
  sync(key: string): Promise<number | undefined>;
  readonly worker: QueueWorker;
}

function finishedType(job: Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  }
  return undefined;
}

function inActiveList(cj: CronJob, uid: string | undefined): boolean {
  return (cj.status?.active ?? []).some((r) => r.uid === uid);
}

function deleteFromActiveList(cj: CronJob, uid: string | undefined): void {
  if (!cj.status?.active) return;
  cj.status.active = cj.status.active.filter((r) => r.uid !== uid);
  if (cj.status.active.length === 0) delete cj.status.active;
}

/** `<cronjob>-<scheduled time in minutes since the epoch>` (getJobName). */
export function jobNameFor(cronJobName: string, scheduledTime: number): string {
  return `${cronJobName}-${Math.floor(scheduledTime / 60_000)}`;
}

/** The schedule with the CronJob's time zone (formatSchedule). */
function scheduleOf(cj: CronJob): Schedule {
  return parseSchedule(cj.spec?.schedule ?? '', cj.spec?.timeZone ?? 'UTC');
}

/**
 * The most recent schedule time not after `now` since the last schedule (or
 * creation), and how many were missed (mostRecentScheduleTime). Throws when
 * two consecutive schedule times are less than a second apart (impossible
 * schedules such as 31 February).
 */
export function mostRecentScheduleTime(cj: CronJobObject, now: number, sched: Schedule, withStartingDeadline: boolean): { earliest: number; mostRecent?: number; missed: number } {
  let earliest = parseTime(cj.status?.lastScheduleTime) ?? parseTime(cj.metadata?.creationTimestamp) ?? now;
  const sds = cj.spec?.startingDeadlineSeconds;
  if (withStartingDeadline && sds != null) {
    const deadline = now - sds * 1000;
    if (deadline > earliest) earliest = deadline;
  }
  const t1 = sched.next(earliest);
  if (t1 === undefined) throw new Error('time difference between two schedules is less than 1 second');
  if (now < t1) return { earliest, missed: 0 };
  const t2 = sched.next(t1);
  if (t2 === undefined || Math.round((t2 - t1) / 1000) < 1) throw new Error('time difference between two schedules is less than 1 second');
  if (now < t2) return { earliest, mostRecent: t1, missed: 1 };
  const between = Math.round((t2 - t1) / 1000);
  const missed = Math.floor(Math.floor((now - t1) / 1000) / between) + 1;
  // Jump close to now, then walk (exact for irregular schedules like @monthly).
  let t: number | undefined = missed > 2 ? (sched.next(t1 + (missed - 2) * between * 1000 - 1000) ?? t1) : t1;
  let mostRecent = t1;
  while (t !== undefined && t <= now) {
    mostRecent = t;
    t = sched.next(t);
  }
  return { earliest, mostRecent, missed };
}

class CronJobControllerImpl implements CronJobController {
  readonly name = CRONJOB_CONTROLLER_NAME;
  readonly worker: QueueWorker;
  private readonly cjInformer: SharedIndexInformer<CronJobObject>;
  private readonly jobInformer: SharedIndexInformer<JobObject>;
  private readonly cjLister: Lister<CronJobObject>;
  private readonly jobLister: Lister<JobObject>;
  private readonly cronJobs: ResourceInterface<CronJobObject>;
  private readonly jobs: ResourceInterface<JobObject>;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(CRONJOB_CONTROLLER_NAME);
    this.recorder = ctx.recorder(CRONJOB_CONTROLLER_NAME);
    this.cronJobs = ctx.client.resource<CronJobObject>(GVR.cronJobs);
    this.jobs = ctx.client.resource<JobObject>(GVR.jobs);
    this.worker = newQueueWorker({
      name: 'cronjob',
      clock: ctx.clock,
      logger: this.log,
      sync: async (key) => {
        const after = await this.sync(key);
        if (after !== undefined) this.worker.enqueueAfter(key, Math.max(0, after));
      },
    });
    this.cjInformer = ctx.informers.cronJobs() as SharedIndexInformer<CronJobObject>;
    this.jobInformer = ctx.informers.jobs() as SharedIndexInformer<JobObject>;
    this.cjLister = newLister(this.cjInformer.getIndexer());
    this.jobLister = newLister(this.jobInformer.getIndexer());

    this.cjInformer.addEventHandler({
      onAdd: (cj) => this.worker.enqueue(keyFunc(cj)),
      onUpdate: (oldCJ, curCJ) => this.updateCronJob(oldCJ, curCJ),
      onDelete: (obj) => this.worker.enqueue(keyFunc(obj)),
    });
    this.jobInformer.addEventHandler({
      onAdd: (job) => this.enqueueOwner(job),
      onUpdate: (oldJob, curJob) => {
        const oldRef = getControllerOf(oldJob);
        const curRef = getControllerOf(curJob);
        if (oldRef && JSON.stringify(oldRef) !== JSON.stringify(curRef ?? null)) this.enqueueOwner(oldJob);
        this.enqueueOwner(curJob);
      },
      onDelete: (obj: JobObject | DeletedFinalStateUnknown<JobObject>) => {
        const job = objectFromDeleted(obj);
        if (job) this.enqueueOwner(job);
      },
    });
  }

  healthy(): boolean {
    return this.worker.healthy();
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({ controller: this.name }, 'Starting cronjob controller v2');
    const synced = await waitForCacheSync(this.name, signal, this.ctx.clock, () => this.cjInformer.hasSynced(), () => this.jobInformer.hasSynced());
    if (!synced) return;
    await this.worker.run(workers, signal);
    this.log.info({ controller: this.name }, 'Shutting down cronjob controller v2');
  }

  private enqueueOwner(job: JobObject): void {
    const ref = getControllerOf(job);
    if (!ref || ref.kind !== 'CronJob') return;
    const cj = this.cjLister.namespace(job.metadata?.namespace ?? '').get(ref.name);
    if (cj && cj.metadata?.uid === ref.uid) this.worker.enqueue(keyFunc(cj));
  }

  private updateCronJob(oldCJ: CronJobObject, curCJ: CronJobObject): void {
    const key = keyFunc(curCJ);
    if (oldCJ.spec?.schedule !== curCJ.spec?.schedule || oldCJ.spec?.timeZone !== curCJ.spec?.timeZone) {
      let sched: Schedule;
      try {
        sched = scheduleOf(curCJ);
      } catch (err) {
        this.log.v(2).info({ cronjob: key, schedule: curCJ.spec?.schedule, err: String(err) }, 'Unparseable schedule for cronjob');
        // Upstream's updateCronJob uses this reason and text (syncCronJob has its own UnparseableSchedule).
        this.recorder.eventf(curCJ, 'Warning', 'UnParseableCronJobSchedule', 'unparseable schedule for cronjob: %s', curCJ.spec?.schedule);
        return;
      }
      const d = this.nextScheduleDuration(curCJ, this.ctx.clock.now(), sched);
      if (d !== undefined) this.worker.enqueueAfter(key, d);
      return;
    }
    this.worker.enqueue(key);
  }

  /** Time from now to just after the next schedule time (nextScheduleTimeDuration). */
  private nextScheduleDuration(cj: CronJobObject, now: number, sched: Schedule): number | undefined {
    let r;
    try {
      r = mostRecentScheduleTime(cj, now, sched, false);
    } catch {
      return undefined;
    }
    const next = sched.next(r.mostRecent ?? r.earliest);
    return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - now;
  }

  async sync(key: string): Promise<number | undefined> {
    const { namespace, name } = splitKey(key);
    const shared = this.cjLister.namespace(namespace).get(name);
    if (!shared) {
      this.log.v(4).info({ cronjob: key }, 'CronJob not found, may be it is deleted');
      return undefined;
    }
    const jobs = this.jobLister
      .namespace(namespace)
      .list()
      .filter((j) => {
        const ref = getControllerOf(j);
        return ref?.kind === 'CronJob' && ref.name === name;
      });
    const cj = deepCopy(shared);
    cj.status ??= {};
    const cleaned = await this.cleanupFinishedJobs(cj, jobs);
    let result: { requeueAfter?: number; updateStatus: boolean } = { updateStatus: false };
    let syncErr: unknown;
    try {
      result = await this.syncCronJob(cj, jobs);
    } catch (err) {
      syncErr = err;
      result.updateStatus = (err as { updateStatus?: boolean }).updateStatus ?? true;
    }
    if (cleaned || result.updateStatus) {
      try {
        await this.cronJobs.namespace(namespace).updateStatus(cj);
      } catch (err) {
        this.log.v(2).info({ cronjob: key, resourceVersion: cj.metadata?.resourceVersion, err: String(err) }, 'Unable to update status for cronjob');
        throw err;
      }
    }
    if (syncErr) throw syncErr;
    return result.requeueAfter;
  }

  private async syncCronJob(cj: CronJobObject, jobs: JobObject[]): Promise<{ requeueAfter?: number; updateStatus: boolean }> {
    const now = this.ctx.clock.now();
    let updateStatus = false;
    const ns = cj.metadata?.namespace ?? '';
    const children = new Set<string>();
    for (const j of jobs) {
      const uid = j.metadata?.uid ?? '';
      children.add(uid);
      const found = inActiveList(cj, uid);
      const finished = finishedType(j);
      if (!found && !finished) {
        const fresh = await this.cronJobs.namespace(ns).get(cj.metadata?.name ?? '');
        if (inActiveList(fresh, uid)) {
          cj.status = { ...(fresh.status ?? {}), ...{} };
          cj.metadata = fresh.metadata;
          continue;
        }
        this.recorder.eventf(cj, 'Warning', 'UnexpectedJob', 'Saw a job that the controller did not create or forgot: %s', j.metadata?.name);
      } else if (found && finished) {
        deleteFromActiveList(cj, uid);
        this.recorder.eventf(cj, 'Normal', 'SawCompletedJob', 'Saw completed job: %s, status: %v', j.metadata?.name, finished);
        updateStatus = true;
      } else if (finished === 'Complete') {
        const done = parseTime(j.status?.completionTime);
        const last = parseTime(cj.status!.lastSuccessfulTime);
        if (done !== undefined && (last === undefined || done > last)) {
          cj.status!.lastSuccessfulTime = j.status!.completionTime!;
          updateStatus = true;
        }
      }
      // A job that completed in this same sync also records its success time.
      if (found && finished === 'Complete') {
        const done = parseTime(j.status?.completionTime);
        const last = parseTime(cj.status!.lastSuccessfulTime);
        if (done !== undefined && (last === undefined || done > last)) cj.status!.lastSuccessfulTime = j.status!.completionTime!;
      }
    }
    for (const ref of [...(cj.status?.active ?? [])]) {
      if (children.has(ref.uid ?? '')) continue;
      try {
        await this.jobs.namespace(ref.namespace ?? ns).get(ref.name ?? '');
      } catch (err) {
        if (!isNotFound(err)) throw Object.assign(err as object, { updateStatus });
        this.recorder.eventf(cj, 'Normal', 'MissingJob', 'Active job went missing: %v', ref.name);
        deleteFromActiveList(cj, ref.uid);
        updateStatus = true;
      }
    }
    if (cj.metadata?.deletionTimestamp) return { updateStatus };

    const tz = cj.spec?.timeZone;
    if (tz != null) {
      const bad = validateTimeZone(tz);
      if (bad) {
        this.log.v(4).info({ cronjob: keyFunc(cj), timeZone: tz }, 'Not starting job because timeZone is invalid');
        this.recorder.eventf(cj, 'Warning', 'UnknownTimeZone', 'invalid timeZone: %q: %s', tz, bad);
        return { updateStatus };
      }
    }
    if (cj.spec?.suspend) {
      this.log.v(4).info({ cronjob: keyFunc(cj) }, 'Not starting job because the cron is suspended');
      return { updateStatus };
    }
    if (tz != null && /^(CRON_TZ|TZ)=/.test(cj.spec?.schedule ?? '')) {
      this.recorder.eventf(cj, 'Warning', 'UnsupportedSchedule', 'CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details', cj.spec?.schedule);
    }
    let sched: Schedule;
    try {
      sched = scheduleOf(cj);
    } catch (err) {
      this.log.v(2).info({ cronjob: keyFunc(cj), schedule: cj.spec?.schedule, err: String(err) }, 'Unparseable schedule');
      this.recorder.eventf(cj, 'Warning', 'UnparseableSchedule', 'unparseable schedule: %q : %s', cj.spec?.schedule, err instanceof Error ? err.message : err);
      return { updateStatus };
    }
    let scheduled: number | undefined;
    try {
      const r = mostRecentScheduleTime(cj, now, sched, true);
      if (r.missed > 100) {
        this.recorder.eventf(cj, 'Warning', 'TooManyMissedTimes', 'too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew', r.missed);
        this.log.info({ cronjob: keyFunc(cj), missedTimes: r.missed }, 'too many missed times');
      }
      scheduled = r.mostRecent !== undefined && r.mostRecent <= now ? r.mostRecent : undefined;
    } catch (err) {
      this.recorder.eventf(cj, 'Warning', 'InvalidSchedule', 'invalid schedule: %s : %s', cj.spec?.schedule, err instanceof Error ? err.message : err);
      return { updateStatus };
    }
    const requeue = () => this.nextScheduleDuration(cj, now, sched);
    if (scheduled === undefined) {
      this.log.v(4).info({ cronjob: keyFunc(cj) }, 'No unmet start times');
      return { updateStatus, ...opt(requeue()) };
    }
    const sds = cj.spec?.startingDeadlineSeconds;
    if (sds != null && scheduled + sds * 1000 < now) {
      this.log.v(4).info({ cronjob: keyFunc(cj) }, 'Missed starting window');
      this.recorder.eventf(cj, 'Warning', 'MissSchedule', 'Missed scheduled time to start a job: %s', rfc1123z(scheduled));
      return { updateStatus, ...opt(requeue()) };
    }
    const jobName = jobNameFor(cj.metadata?.name ?? '', scheduled);
    if ((cj.status?.active ?? []).some((r) => r.name === jobName && r.namespace === ns) || parseTime(cj.status?.lastScheduleTime) === scheduled) {
      this.log.v(4).info({ cronjob: keyFunc(cj), job: jobName }, 'Not starting job because the scheduled time is already processed');
      return { updateStatus, ...opt(requeue()) };
    }
    const policy = cj.spec?.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (cj.status?.active?.length ?? 0) > 0) {
      this.log.v(4).info({ cronjob: keyFunc(cj) }, 'Not starting job because prior execution is still running and concurrency policy is Forbid');
      this.recorder.event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return { updateStatus, ...opt(requeue()) };
    }
    if (policy === 'Replace') {
      for (const ref of [...(cj.status?.active ?? [])]) {
        let job: JobObject;
        try {
          job = await this.jobs.namespace(ref.namespace ?? ns).get(ref.name ?? '');
        } catch (err) {
          this.recorder.eventf(cj, 'Warning', 'FailedGet', 'Get job: %v', err);
          throw Object.assign(err as object, { updateStatus });
        }
        if (!(await this.deleteJob(cj, job))) throw Object.assign(new Error(`could not replace job ${ref.namespace}/${ref.name}`), { updateStatus });
        updateStatus = true;
      }
    }

    const jobReq = this.jobFromTemplate(cj, scheduled, jobName);
    let created: JobObject;
    try {
      created = await this.jobs.namespace(ns).create(jobReq);
      this.recorder.eventf(cj, 'Normal', 'SuccessfulCreate', 'Created job %v', created.metadata?.name);
    } catch (err) {
      if (isStatusError(err) && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')) throw Object.assign(err, { updateStatus });
      if (!isAlreadyExists(err)) {
        this.recorder.eventf(cj, 'Warning', 'FailedCreate', 'Error creating job: %v', err);
        throw Object.assign(err as object, { updateStatus });
      }
      this.log.info({ cronjob: keyFunc(cj), job: jobName }, 'Job already exists');
      created = await this.jobs.namespace(ns).get(jobName);
      const ref = getControllerOf(created);
      if (ref?.uid !== cj.metadata?.uid) return { updateStatus };
      if (inActiveList(cj, created.metadata?.uid)) return { updateStatus };
    }
    const jobRef: ObjectReference = {
      kind: 'Job',
      namespace: created.metadata?.namespace ?? ns,
      name: created.metadata?.name ?? jobName,
      uid: created.metadata?.uid ?? '',
      apiVersion: 'batch/v1',
      resourceVersion: created.metadata?.resourceVersion ?? '',
    };
    (cj.status!.active ??= []).push(jobRef);
    cj.status!.lastScheduleTime = rfc3339(scheduled);
    return { updateStatus: true, ...opt(requeue()) };
  }

  /** The Job of one run (getJobFromTemplate2). */
  private jobFromTemplate(cj: CronJobObject, scheduled: number, name: string): JobObject {
    const t = cj.spec?.jobTemplate ?? {};
    const tz = cj.spec?.timeZone && !validateTimeZone(cj.spec.timeZone) ? cj.spec.timeZone : 'UTC';
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: cj.metadata?.namespace,
        labels: { ...(t.metadata?.labels ?? {}) },
        annotations: { ...(t.metadata?.annotations ?? {}), [CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION]: formatInZone(scheduled, tz) },
        ownerReferences: [newControllerRef(cj, CRONJOB_KIND)],
      },
      spec: deepCopy(t.spec ?? { template: { spec: { containers: [] } } }),
    } as JobObject;
  }

  /** Deletes a Job in the background (pods go with it); false on failure (deleteJob). */
  private async deleteJob(cj: CronJobObject, job: JobObject): Promise<boolean> {
    try {
      await this.jobs.namespace(job.metadata?.namespace ?? '').delete(job.metadata?.name ?? '', { propagationPolicy: 'Background' });
    } catch (err) {
      if (!isNotFound(err)) {
        this.recorder.eventf(cj, 'Warning', 'FailedDelete', 'Deleted job: %v', err);
        this.log.error(err, { cronjob: keyFunc(cj), job: job.metadata?.name }, 'Error deleting job from cronjob');
        return false;
      }
    }
    deleteFromActiveList(cj, job.metadata?.uid);
    this.recorder.eventf(cj, 'Normal', 'SuccessfulDelete', 'Deleted job %v', job.metadata?.name);
    return true;
  }

  /** History limits: deletes the oldest finished Jobs beyond each limit (cleanupFinishedJobs). */
  private async cleanupFinishedJobs(cj: CronJobObject, jobs: JobObject[]): Promise<boolean> {
    const sLimit = cj.spec?.successfulJobsHistoryLimit;
    const fLimit = cj.spec?.failedJobsHistoryLimit;
    if (sLimit == null && fLimit == null) return false;
    let changed = false;
    const succeeded = jobs.filter((j) => finishedType(j) === 'Complete');
    const failed = jobs.filter((j) => finishedType(j) === 'Failed');
    if (sLimit != null && (await this.removeOldest(cj, succeeded, sLimit))) changed = true;
    if (fLimit != null && (await this.removeOldest(cj, failed, fLimit))) changed = true;
    return changed;
  }

  private async removeOldest(cj: CronJobObject, jobs: JobObject[], limit: number): Promise<boolean> {
    const n = jobs.length - limit;
    if (n <= 0) return false;
    const byStart = [...jobs].sort((a, b) => {
      const ta = parseTime(a.status?.startTime);
      const tb = parseTime(b.status?.startTime);
      if (ta === undefined && tb !== undefined) return 1;
      if (tb === undefined && ta !== undefined) return -1;
      if (ta !== tb) return (ta ?? 0) - (tb ?? 0);
      return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
    });
    let changed = false;
    for (const j of byStart.slice(0, n)) if (await this.deleteJob(cj, j)) changed = true;
    return changed;
  }
}

function opt(ms: number | undefined): { requeueAfter?: number } {
  return ms === undefined ? {} : { requeueAfter: ms };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Go's time.RFC1123Z in UTC: `Mon, 02 Jan 2006 15:04:05 +0000`. */
function rfc1123z(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${WEEKDAYS[d.getUTCDay()]}, ${p(d.getUTCDate())} ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

export function newCronJobController(ctx: ControllerContext): CronJobController {
  return new CronJobControllerImpl(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: CRONJOB_CONTROLLER_NAME,
  aliases: ['cronjob'],
  requiredResources: [GVR.cronJobs, GVR.jobs],
  defaultWorkers: 5,
  create: (ctx) => newCronJobController(ctx),
};
