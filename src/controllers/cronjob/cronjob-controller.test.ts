import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newBatchTestContext, type BatchTestContext } from '../job/test-context.js';
import { descriptor, newCronJobController } from './cronjob-controller.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => setLogOutput(restoreLog));

type CJ = CronJob & KubeObject;
type J = Job & KubeObject;

function cronJob(name: string, spec: Partial<NonNullable<CronJob['spec']>> = {}): CJ {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default', creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: {
      schedule: '*/1 * * * *',
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: { metadata: { labels: { app: name } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
      ...spec,
    },
  };
}

async function setup(cj: CJ, start = '2024-01-01T00:00:30Z') {
  const t = newBatchTestContext(start);
  t.fake.seed(GVR.cronJobs, cj);
  const c = newCronJobController(t.ctx);
  await t.start();
  await t.settle();
  const sync = async () => {
    const r = await c.sync(`default/${cj.metadata!.name}`);
    await t.settle();
    return r;
  };
  return { t, c, sync };
}

const jobs = (t: BatchTestContext) => t.fake.storedList<J>(GVR.jobs, 'default');
const stored = (t: BatchTestContext, name: string) => structuredClone(t.fake.stored<CJ>(GVR.cronJobs, 'default', name)!);

async function finishJob(t: BatchTestContext, name: string, type: 'Complete' | 'Failed', at: string): Promise<void> {
  const j = structuredClone(t.fake.stored<J>(GVR.jobs, 'default', name)!);
  (j as { status?: Job['status'] }).status = {
    startTime: j.status?.startTime ?? at,
    conditions: [{ type, status: 'True', lastTransitionTime: at }],
    ...(type === 'Complete' ? { completionTime: at } : {}),
  };
  await t.fake.resource<J>(GVR.jobs).namespace('default').updateStatus(j);
  await t.settle();
}

describe('cronjob controller', () => {
  it('registers as cronjob-controller with alias cronjob and 5 workers', () => {
    assert.equal(descriptor.name, 'cronjob-controller');
    assert.deepEqual(descriptor.aliases, ['cronjob']);
    assert.equal(descriptor.defaultWorkers, 5);
  });

  it('waits for the first schedule time, then creates the job named by the scheduled minute and requeues for the next', async () => {
    const { t, sync } = await setup(cronJob('tick'));
    const wait = await sync();
    assert.equal(jobs(t).length, 0);
    assert.equal(wait, 30_100, 'requeued 100 ms after 00:01:00');
    await t.clock.advance(30_100);
    const next = await sync();
    const js = jobs(t);
    assert.equal(js.length, 1);
    const j = js[0]!;
    assert.equal(j.metadata?.name, `tick-${Date.parse('2024-01-01T00:01:00Z') / 60_000}`);
    assert.equal(j.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'], '2024-01-01T00:01:00Z');
    assert.equal(j.metadata?.labels?.app, 'tick');
    assert.equal(j.metadata?.ownerReferences?.[0]?.kind, 'CronJob');
    const cj = stored(t, 'tick');
    assert.equal(cj.status?.lastScheduleTime, '2024-01-01T00:01:00Z');
    assert.equal(cj.status?.active?.[0]?.name, j.metadata?.name);
    assert.equal(next, 60_000);
    assert.ok(t.events().includes(`Normal SuccessfulCreate Created job ${j.metadata?.name}`));
    // Syncing again in the same minute does not start it twice.
    await sync();
    assert.equal(jobs(t).length, 1);
    await t.stop();
  });

  it('skips a run while a job is active under Forbid and replaces it under Replace', async () => {
    const { t, sync } = await setup(cronJob('forbid', { concurrencyPolicy: 'Forbid' }), '2024-01-01T00:01:10Z');
    await sync();
    assert.equal(jobs(t).length, 1);
    await t.clock.advance(60_000);
    await sync();
    assert.equal(jobs(t).length, 1);
    assert.ok(t.events().includes('Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid'));
    await t.stop();

    const r = await setup(cronJob('repl', { concurrencyPolicy: 'Replace' }), '2024-01-01T00:01:10Z');
    await r.sync();
    const first = jobs(r.t)[0]!.metadata!.name!;
    await r.t.clock.advance(60_000);
    await r.sync();
    const names = jobs(r.t).map((j) => j.metadata!.name);
    assert.equal(names.length, 1);
    assert.notEqual(names[0], first);
    assert.ok(r.t.events().includes(`Normal SuccessfulDelete Deleted job ${first}`));
    await r.t.stop();
  });

  it('removes finished jobs from active, records lastSuccessfulTime and prunes beyond the history limits', async () => {
    const { t, sync } = await setup(cronJob('hist', { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }), '2024-01-01T00:01:10Z');
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      await sync();
      const name = stored(t, 'hist').status!.active!.at(-1)!.name!;
      created.push(name);
      await finishJob(t, name, 'Complete', new Date(t.clock.now() + 1000).toISOString().replace('.000Z', 'Z'));
      await sync();
      await t.clock.advance(60_000);
    }
    await sync();
    const cj = stored(t, 'hist');
    assert.ok(t.events().includes(`Normal SawCompletedJob Saw completed job: ${created[0]}, status: Complete`));
    const remaining = jobs(t).map((j) => j.metadata!.name!);
    assert.ok(!remaining.includes(created[0]!) && !remaining.includes(created[1]!), `old runs pruned: ${remaining.join(',')}`);
    assert.ok(remaining.includes(created[2]!));
    assert.equal(cj.status?.lastSuccessfulTime, '2024-01-01T00:03:11Z');
    await t.stop();
  });

  it('reports an invalid time zone as an event without creating jobs', async () => {
    const { t, sync } = await setup(cronJob('tz', { timeZone: 'Mars/Olympus' }), '2024-01-01T00:05:00Z');
    await sync();
    assert.equal(jobs(t).length, 0);
    assert.ok(t.events().includes('Warning UnknownTimeZone invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus'));
    await t.stop();
  });

  it('schedules in the CronJob time zone and stamps the scheduled time with its offset', async () => {
    const { t, sync } = await setup(cronJob('ny', { schedule: '0 9 * * *', timeZone: 'America/New_York' }), '2024-01-01T14:00:30Z');
    await sync();
    const j = jobs(t)[0]!;
    assert.equal(j.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'], '2024-01-01T09:00:00-05:00');
    await t.stop();
  });

  it('reports more than 100 missed schedules and honours startingDeadlineSeconds', async () => {
    const { t, sync } = await setup(cronJob('late'), '2024-01-01T03:00:30Z');
    await sync();
    assert.ok(t.events().includes('Warning TooManyMissedTimes too many missed start times: 180. Set or decrease .spec.startingDeadlineSeconds or check clock skew'));
    assert.equal(jobs(t).length, 1, 'the most recent missed run still starts');
    await t.stop();

    const d = await setup(cronJob('deadline', { schedule: '0 * * * *', startingDeadlineSeconds: 10 }), '2024-01-01T01:00:30Z');
    await d.sync();
    assert.equal(jobs(d.t).length, 0, 'too late to start the 01:00 run');
    await d.t.stop();
  });

  it('reports an unparseable schedule in a sync and in an update, each with its upstream reason and text', async () => {
    const { t, sync } = await setup(cronJob('bad', { schedule: 'every minute' }), '2024-01-01T00:05:00Z');
    await sync();
    assert.equal(jobs(t).length, 0);
    assert.ok(t.events().includes('Warning UnparseableSchedule unparseable schedule: "every minute" : expected exactly 5 fields, found 2: [every minute]'));
    const cur = stored(t, 'bad');
    cur.spec!.schedule = 'still bad';
    await t.fake.resource<CJ>(GVR.cronJobs).namespace('default').update(cur);
    await t.settle();
    assert.ok(t.events().includes('Warning UnParseableCronJobSchedule unparseable schedule for cronjob: still bad'));
    await t.stop();
  });

  it('does nothing while suspended', async () => {
    const { t, sync } = await setup(cronJob('off', { suspend: true }), '2024-01-01T00:05:00Z');
    await sync();
    assert.equal(jobs(t).length, 0);
    await t.stop();
  });
});
