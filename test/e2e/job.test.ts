/**
 * Jobs with kubectl against `kcm up`, using the simulated commands of the
 * nodes (`sleep N`, `exit N`): completions with parallelism, backoffLimit
 * failures, and an Indexed Job.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { onRealApiServer, onRealControllerManager, startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster();
});
after(async () => {
  await kcm?.stop();
});

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', '-n', 'default', '-f', '-'], { input: JSON.stringify(obj) });
const getJson = async (args: string[]) => JSON.parse(await kcm.kubectlOk(['get', '-n', 'default', '-o', 'json', ...args]));

function job(name: string, command: string[], spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1', command }] } }, ...spec },
  };
}

type Cond = { type: string; status: string; reason?: string };
/** kube-controller-manager 1.20 (or kcm's on a 1.20 API server) sets the terminal condition alone; from 1.31 an interim one comes first. */
const conditionTypes = (interim: string, terminal: string) => (onRealApiServer || onRealControllerManager ? [terminal] : [interim, terminal]);
const cond = (j: { status?: { conditions?: Cond[] } }, type: string) => j.status?.conditions?.find((c) => c.type === type && c.status === 'True');

describe('job e2e', () => {
  it('completes a job of 4 completions with parallelism 2', async () => {
    await apply(job('four', ['sh', '-c', 'sleep 1; exit 0'], { completions: 4, parallelism: 2 }));
    let maxActive = 0;
    const done = await waitFor(
      async () => {
        const j = await getJson(['job', 'four']);
        maxActive = Math.max(maxActive, j.status?.active ?? 0);
        return cond(j, 'Complete') ? j : undefined;
      },
      120_000,
      'job four complete',
      500,
    );
    assert.equal(done.status.succeeded, 4);
    assert.deepEqual(done.status.conditions.map((c: Cond) => c.type), conditionTypes('SuccessCriteriaMet', 'Complete'));
    assert.ok(maxActive <= 2, `at most 2 pods at once, saw ${maxActive}`);
    const pods = await getJson(['pods', '-l', 'job-name=four']);
    assert.equal(pods.items.filter((p: { status: { phase: string } }) => p.status.phase === 'Succeeded').length, 4);
    for (const p of pods.items) assert.ok(!(p.metadata.finalizers ?? []).includes('batch.kubernetes.io/job-tracking'));
  });

  it('completes a job created with kubectl create job running echo, as the docs example does', async () => {
    await kcm.kubectlOk(['create', 'job', 'hello', '-n', 'default', '--image=busybox', '--', 'echo', 'Hello World']);
    await kcm.kubectlOk(['wait', '-n', 'default', '--for=condition=complete', 'job/hello', '--timeout=60s'], { timeoutMs: 70_000 });
  });

  it('fails with BackoffLimitExceeded after 2 failed pods when backoffLimit is 1', async () => {
    await apply(job('fails', ['sh', '-c', 'exit 1'], { backoffLimit: 1 }));
    const failed = await waitFor(
      async () => {
        const j = await getJson(['job', 'fails']);
        return cond(j, 'Failed') ? j : undefined;
      },
      120_000,
      'job fails failed',
      500,
    );
    assert.equal(cond(failed, 'Failed')?.reason, 'BackoffLimitExceeded');
    assert.deepEqual(failed.status.conditions.map((c: Cond) => c.type), conditionTypes('FailureTarget', 'Failed'));
    assert.equal(failed.status.failed, 2);
    const events = await kcm.kubectlOk(['get', 'events', '-n', 'default', '--field-selector', 'involvedObject.name=fails', '-o', 'json']);
    assert.ok(JSON.parse(events).items.some((e: { reason: string }) => e.reason === 'BackoffLimitExceeded'));
  });

  it('completes every index of an Indexed job', { skip: (onRealApiServer || onRealControllerManager) && 'Kubernetes 1.20 has no Indexed Jobs' }, async () => {
    await apply(job('indexed', ['sleep', '1'], { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
    const done = await waitFor(
      async () => {
        const j = await getJson(['job', 'indexed']);
        return cond(j, 'Complete') ? j : undefined;
      },
      120_000,
      'indexed job complete',
      500,
    );
    assert.equal(done.status.completedIndexes, '0-2');
    const pods = await getJson(['pods', '-l', 'job-name=indexed']);
    const hostnames = pods.items.map((p: { spec: { hostname: string } }) => p.spec.hostname).sort();
    assert.deepEqual(hostnames, ['indexed-0', 'indexed-1', 'indexed-2']);
  });
});
