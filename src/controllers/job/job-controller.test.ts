import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { rfc3339 } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import { descriptor, newJobController, leavesTerminalConditionAlone, type JobController } from './job-controller.js';
import { newBatchTestContext, type BatchTestContext } from './test-context.js';
import { reportServerVersion } from '../testing/test-context.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => setLogOutput(restoreLog));

type J = Job & KubeObject;
type P = Pod & KubeObject;

function job(name: string, spec: Partial<NonNullable<Job['spec']>> = {}): J {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      selector: { matchLabels: { 'job-name': name } },
      template: { metadata: { labels: { 'job-name': name } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      ...spec,
    } as Job['spec'],
  };
}

/** `minor`: the controller is built by its descriptor against an API server 1.<minor>. */
async function setup(j: J, minor?: string) {
  const t = newBatchTestContext();
  t.fake.seed(GVR.jobs, j);
  let c: JobController;
  if (minor === undefined) c = newJobController(t.ctx);
  else {
    reportServerVersion(t.ctx, minor);
    c = (await descriptor.create(t.ctx)) as JobController;
  }
  await t.start();
  await t.settle();
  const sync = async () => {
    await c.sync(`default/${j.metadata!.name}`);
    await t.settle();
  };
  return { t, c, sync };
}

const pods = (t: BatchTestContext) => t.fake.storedList<P>(GVR.pods, 'default');
const stored = (t: BatchTestContext, name: string) => structuredClone(t.fake.stored<J>(GVR.jobs, 'default', name)!);

async function finishPod(t: BatchTestContext, p: P, phase: 'Succeeded' | 'Failed', exitCode = phase === 'Succeeded' ? 0 : 1): Promise<void> {
  const cur = structuredClone(t.fake.stored<P>(GVR.pods, 'default', p.metadata!.name!)!);
  const now = rfc3339(t.clock.now());
  (cur as { status?: Pod["status"] }).status = {
    phase,
    containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, finishedAt: now, startedAt: now } } }],
  };
  await t.fake.resource<P>(GVR.pods).namespace('default').updateStatus(cur);
  await t.settle();
}

const condition = (j: J, type: string) => j.status?.conditions?.find((c) => c.type === type);

describe('job controller', () => {
  it('registers as job-controller with alias job and 5 workers', () => {
    assert.equal(descriptor.name, 'job-controller');
    assert.deepEqual(descriptor.aliases, ['job']);
    assert.equal(descriptor.defaultWorkers, 5);
  });

  it('creates parallelism pods with the tracking finalizer and a controller reference, and sets startTime and active', async () => {
    const { t, sync } = await setup(job('work', { parallelism: 2, completions: 4 }));
    await sync();
    const ps = pods(t);
    assert.equal(ps.length, 2);
    for (const p of ps) {
      assert.match(p.metadata!.name!, /^work-[a-z0-9]{5}$/);
      assert.deepEqual(p.metadata?.finalizers, ['batch.kubernetes.io/job-tracking']);
      assert.equal(p.metadata?.ownerReferences?.[0]?.kind, 'Job');
      assert.equal(p.metadata?.ownerReferences?.[0]?.controller, true);
    }
    const j = stored(t, 'work');
    assert.equal(j.status?.active, 2);
    assert.equal(j.status?.startTime, '2024-01-01T00:00:00Z');
    assert.ok(t.events().some((e) => e.startsWith('Normal SuccessfulCreate Created pod: work-')));
    await t.stop();
  });

  it('counts finished pods through uncountedTerminatedPods exactly once and completes after all completions', async () => {
    const { t, sync } = await setup(job('work', { parallelism: 2, completions: 2 }));
    await sync();
    for (const p of pods(t)) await finishPod(t, p, 'Succeeded');
    t.fake.clearActions();
    await sync();
    const statusWrites = t.fake.actions().filter((a) => a.resource === 'jobs' && a.subresource === 'status');
    // First write records the UIDs as uncounted, the last moves them into succeeded.
    assert.equal(((statusWrites[0]!.object as J).status?.uncountedTerminatedPods?.succeeded ?? []).length, 2);
    assert.ok(pods(t).every((p) => !(p.metadata?.finalizers ?? []).includes('batch.kubernetes.io/job-tracking')));
    const j = stored(t, 'work');
    assert.equal(j.status?.succeeded, 2);
    assert.equal(condition(j, 'SuccessCriteriaMet')?.reason, 'CompletionsReached');
    assert.equal(condition(j, 'Complete')?.status, 'True');
    assert.equal(condition(j, 'Complete')?.message, 'Reached expected number of succeeded pods');
    assert.equal(j.status?.completionTime, '2024-01-01T00:00:00Z');
    assert.ok(t.events().includes('Normal Completed Job completed'));
    // A further sync counts nothing twice.
    await sync();
    assert.equal(stored(t, 'work').status?.succeeded, 2);
    await t.stop();
  });

  it('waits 10 s then 20 s before replacing failed pods, and fails with BackoffLimitExceeded past backoffLimit', async () => {
    const { t, sync } = await setup(job('flaky', { backoffLimit: 2 }));
    await sync();
    await finishPod(t, pods(t)[0]!, 'Failed');
    await sync();
    assert.equal(stored(t, 'flaky').status?.failed, 1);
    assert.equal(pods(t).filter((p) => !p.status?.phase || p.status.phase === 'Pending').length, 0, 'no replacement during the backoff');
    await t.clock.advance(9_000);
    await sync();
    assert.equal(pods(t).length, 1);
    await t.clock.advance(1_000);
    await sync();
    assert.equal(pods(t).length, 2, 'replacement after 10 s');
    const second = pods(t).find((p) => p.status?.phase !== 'Failed')!;
    await finishPod(t, second, 'Failed');
    await sync();
    await t.clock.advance(19_000);
    await sync();
    assert.equal(pods(t).length, 2, 'second backoff is 20 s');
    await t.clock.advance(1_000);
    await sync();
    assert.equal(pods(t).length, 3);
    const third = pods(t).find((p) => p.status?.phase !== 'Failed')!;
    await finishPod(t, third, 'Failed');
    await sync();
    await sync();
    const j = stored(t, 'flaky');
    assert.equal(j.status?.failed, 3);
    assert.equal(condition(j, 'FailureTarget')?.reason, 'BackoffLimitExceeded');
    assert.equal(condition(j, 'Failed')?.reason, 'BackoffLimitExceeded');
    assert.equal(condition(j, 'Failed')?.message, 'Job has reached the specified backoff limit');
    assert.ok(t.events().includes('Warning BackoffLimitExceeded Job has reached the specified backoff limit'));
    await t.stop();
  });

  it('gives Indexed pods their index annotation, label, hostname, env and records completedIndexes', async () => {
    const { t, sync } = await setup(job('idx', { completionMode: 'Indexed', completions: 3, parallelism: 3 }));
    await sync();
    const ps = pods(t).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    assert.deepEqual(ps.map((p) => p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index']), ['0', '1', '2']);
    assert.deepEqual(ps.map((p) => p.metadata?.labels?.['batch.kubernetes.io/job-completion-index']), ['0', '1', '2']);
    assert.deepEqual(ps.map((p) => p.spec?.hostname), ['idx-0', 'idx-1', 'idx-2']);
    assert.match(ps[1]!.metadata!.name!, /^idx-1-[a-z0-9]{5}$/);
    assert.equal(ps[0]!.spec?.containers[0]?.env?.[0]?.name, 'JOB_COMPLETION_INDEX');
    await finishPod(t, ps[0]!, 'Succeeded');
    await finishPod(t, ps[2]!, 'Succeeded');
    await sync();
    assert.equal(stored(t, 'idx').status?.completedIndexes, '0,2');
    await finishPod(t, ps[1]!, 'Succeeded');
    await sync();
    const j = stored(t, 'idx');
    assert.equal(j.status?.completedIndexes, '0-2');
    assert.equal(j.status?.succeeded, 3);
    assert.equal(condition(j, 'Complete')?.status, 'True');
    await t.stop();
  });

  it('fails the job at once on a FailJob pod failure policy rule and does not count failures an Ignore rule matches', async () => {
    const policy = {
      rules: [
        { action: 'Ignore', onExitCodes: { operator: 'In', values: [3] } },
        { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } },
      ],
    };
    const { t, sync } = await setup(job('pfp', { podFailurePolicy: policy as NonNullable<Job['spec']>['podFailurePolicy'], podReplacementPolicy: 'Failed' }));
    await sync();
    await finishPod(t, pods(t)[0]!, 'Failed', 3);
    await sync();
    assert.equal(stored(t, 'pfp').status?.failed ?? 0, 0, 'ignored failure is not counted');
    assert.equal(pods(t).length, 1, 'the pod failure backoff applies to ignored failures too');
    await t.clock.advance(10_000);
    await sync();
    assert.equal(pods(t).length, 2);
    const second = pods(t).find((p) => p.status?.phase !== 'Failed')!;
    await finishPod(t, second, 'Failed', 42);
    await sync();
    await sync();
    const j = stored(t, 'pfp');
    assert.equal(condition(j, 'Failed')?.reason, 'PodFailurePolicy');
    assert.equal(condition(j, 'Failed')?.message, `Container c for pod default/${second.metadata!.name} failed with exit code 42 matching FailJob rule at index 1`);
    await t.stop();
  });

  it('deletes active pods when suspended, clears startTime, and resumes with a new startTime', async () => {
    const j0 = job('sus', { parallelism: 2, completions: 2 });
    const { t, sync } = await setup(j0);
    await sync();
    assert.equal(pods(t).length, 2);
    const cur = stored(t, 'sus');
    cur.spec!.suspend = true;
    await t.fake.resource<J>(GVR.jobs).namespace('default').update(cur);
    await t.settle();
    await sync();
    assert.equal(pods(t).length, 0);
    let j = stored(t, 'sus');
    assert.equal(condition(j, 'Suspended')?.status, 'True');
    assert.equal(condition(j, 'Suspended')?.reason, 'JobSuspended');
    assert.equal(condition(j, 'Suspended')?.message, 'Job suspended');
    assert.equal(j.status?.startTime, undefined);
    assert.ok(t.events().includes('Normal Suspended Job suspended'));
    await t.clock.advance(60_000);
    j = stored(t, 'sus');
    j.spec!.suspend = false;
    await t.fake.resource<J>(GVR.jobs).namespace('default').update(j);
    await t.settle();
    await sync();
    j = stored(t, 'sus');
    assert.equal(condition(j, 'Suspended')?.status, 'False');
    assert.equal(condition(j, 'Suspended')?.reason, 'JobResumed');
    assert.equal(condition(j, 'Suspended')?.message, 'Job resumed');
    assert.ok(t.events().includes('Normal Resumed Job resumed'));
    assert.equal(j.status?.startTime, '2024-01-01T00:01:00Z');
    assert.equal(pods(t).length, 2);
    await t.stop();
  });

  it('fails with DeadlineExceeded once activeDeadlineSeconds pass, deleting the running pods', async () => {
    const { t, sync } = await setup(job('slow', { activeDeadlineSeconds: 30 }));
    await sync();
    assert.equal(pods(t).length, 1);
    await t.clock.advance(30_000);
    await sync();
    // The pod got a deletionTimestamp but keeps the finalizer until counted.
    await sync();
    const j = stored(t, 'slow');
    assert.equal(condition(j, 'FailureTarget')?.reason, 'DeadlineExceeded');
    assert.equal(condition(j, 'Failed')?.message, 'Job was active longer than specified deadline');
    assert.equal(j.status?.failed, 1);
    assert.equal(pods(t).length, 0);
    await t.stop();
  });
});

describe('job conditions by API server version', () => {
  it('leaves Complete or Failed alone, without the interim conditions, before 1.31', () => {
    assert.equal(leavesTerminalConditionAlone({ major: '1', minor: '20' }), true);
    assert.equal(leavesTerminalConditionAlone({ major: '1', minor: '30' }), true);
    assert.equal(leavesTerminalConditionAlone({ major: '1', minor: '31' }), false);
    assert.equal(leavesTerminalConditionAlone({ major: '1', minor: '33' }), false);
    assert.equal(leavesTerminalConditionAlone({ major: '', minor: '' }), false);
  });

  for (const [minor, types] of [
    ['20', ['Complete']],
    ['33', ['SuccessCriteriaMet', 'Complete']],
  ] as const) {
    it(`completes a Job with the conditions kube-controller-manager 1.${minor} sets, on a 1.${minor} API server`, async () => {
      const { t, sync } = await setup(job('work', { parallelism: 2, completions: 2 }), minor);
      await sync();
      for (const p of pods(t)) await finishPod(t, p, 'Succeeded');
      await sync();
      await sync();
      const j = stored(t, 'work');
      assert.deepEqual(j.status?.conditions?.map((c) => c.type), types);
      // 1.20's Complete says no reason and no message.
      const complete = condition(j, 'Complete')!;
      assert.deepEqual([complete.reason || undefined, complete.message || undefined], minor === '20' ? [undefined, undefined] : ['CompletionsReached', 'Reached expected number of succeeded pods']);
      assert.equal(j.status?.succeeded, 2);
      assert.equal(j.status?.completionTime, '2024-01-01T00:00:00Z');
      assert.ok(t.events().includes('Normal Completed Job completed'));
      await t.stop();
    });
  }

  for (const [minor, types] of [
    ['20', ['Failed']],
    ['33', ['FailureTarget', 'Failed']],
  ] as const) {
    it(`fails a Job past its backoff limit with the conditions kube-controller-manager 1.${minor} sets, on a 1.${minor} API server`, async () => {
      const { t, sync } = await setup(job('flaky', { parallelism: 2, completions: 2, backoffLimit: 0 }), minor);
      await sync();
      await finishPod(t, pods(t)[0]!, 'Failed');
      for (let i = 0; i < 4; i++) await sync();
      const j = stored(t, 'flaky');
      assert.deepEqual(j.status?.conditions?.map((c) => c.type), types);
      assert.equal(condition(j, 'Failed')?.reason, 'BackoffLimitExceeded');
      assert.ok(t.events().includes('Warning BackoffLimitExceeded Job has reached the specified backoff limit'));
      await t.stop();
    });
  }
});
