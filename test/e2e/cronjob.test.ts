/**
 * A CronJob with kubectl against `kcm up`: every minute it creates a Job
 * (named by the scheduled minute) and keeps the successful history limit.
 * Takes a few real minutes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { manifestVersion, notServedFor120, onRealApiServer, onRealControllerManager, startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster();
});
after(async () => {
  await kcm?.stop();
});

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', '-n', 'default', '-f', '-'], { input: JSON.stringify(obj) });
const getJson = async (args: string[]) => JSON.parse(await kcm.kubectlOk(['get', '-n', 'default', '-o', 'json', ...args]));

describe('cronjob e2e', () => {
  it('creates a job every minute and keeps successfulJobsHistoryLimit jobs', { timeout: 330_000, skip: notServedFor120('cronjobs') }, async () => {
    await apply({
      apiVersion: manifestVersion('CronJob'),
      kind: 'CronJob',
      metadata: { name: 'every' },
      spec: {
        schedule: '* * * * *',
        successfulJobsHistoryLimit: 1,
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1', command: ['sleep', '1'] }] } } } },
      },
    });
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const list = await getJson(['jobs']);
        for (const j of list.items) if (j.metadata.ownerReferences?.[0]?.name === 'every') seen.add(j.metadata.name);
        return seen.size >= 3;
      },
      300_000,
      'three runs',
      2000,
    );
    for (const name of seen) assert.match(name, /^every-\d+$/);
    const jobs = await getJson(['jobs']);
    const mine = jobs.items.filter((j: { metadata: { ownerReferences?: Array<{ name: string }> } }) => j.metadata.ownerReferences?.[0]?.name === 'every');
    const complete = mine.filter((j: { status?: { conditions?: Array<{ type: string; status: string }> } }) => j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'));
    assert.ok(complete.length <= 2, `history pruned to the limit (a just-finished run may still be counted): ${complete.length}`);
    const cj = await getJson(['cronjob', 'every']);
    assert.ok(cj.status.lastScheduleTime);
    if (!onRealApiServer) assert.ok(cj.status.lastSuccessfulTime, 'status.lastSuccessfulTime (not served by Kubernetes 1.20)');
    // The scheduled-timestamp annotation came with Kubernetes 1.28.
    if (!onRealControllerManager) {
      const ann = mine[0].metadata.annotations['batch.kubernetes.io/cronjob-scheduled-timestamp'];
      assert.match(ann, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    }
  });
});
