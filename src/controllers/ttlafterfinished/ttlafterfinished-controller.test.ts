import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from 'kubernetes-types/batch/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newBatchTestContext } from '../job/test-context.js';
import { descriptor, newTTLAfterFinishedController } from './ttlafterfinished-controller.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => setLogOutput(restoreLog));

type J = Job & KubeObject;

function finishedJob(name: string, ttl: number | undefined, finishedAt = '2024-01-01T00:00:00Z'): J {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: { ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}), template: { spec: { containers: [] } } },
    status: { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: finishedAt }] },
  };
}

describe('ttl-after-finished controller', () => {
  it('registers as ttl-after-finished-controller with alias ttl-after-finished and 5 workers', () => {
    assert.equal(descriptor.name, 'ttl-after-finished-controller');
    assert.deepEqual(descriptor.aliases, ['ttl-after-finished']);
    assert.equal(descriptor.defaultWorkers, 5);
  });

  it('deletes a finished job once its TTL has passed, with a UID precondition and cascading propagation', async () => {
    const t = newBatchTestContext('2024-01-01T00:00:30Z');
    const [seeded] = t.fake.seed(GVR.jobs, finishedJob('done', 60));
    const c = newTTLAfterFinishedController(t.ctx);
    await t.start();
    await t.settle();
    await c.sync('default/done');
    assert.ok(t.fake.stored(GVR.jobs, 'default', 'done'), 'not yet: 30 s left');
    await t.clock.advance(30_000);
    await c.sync('default/done');
    const del = t.fake.actions().find((a) => a.verb === 'delete' && a.resource === 'jobs');
    assert.ok(del, 'deleted');
    assert.equal(del.deleteOptions?.propagationPolicy, 'Foreground');
    assert.equal(del.deleteOptions?.preconditions?.uid, seeded!.metadata?.uid);
    await t.stop();
  });

  it('re-checks the live job and keeps it when the TTL grew meanwhile', async () => {
    const t = newBatchTestContext('2024-01-01T00:02:00Z');
    t.fake.seed(GVR.jobs, finishedJob('grown', 60));
    const c = newTTLAfterFinishedController(t.ctx);
    await t.start();
    await t.settle();
    // The server copy changes after the cache saw it: answer the live GET with a longer TTL.
    t.fake.prependReactor('get', 'jobs', () => finishedJob('grown', 3600));
    await c.sync('default/grown');
    assert.ok(!t.fake.actions().some((a) => a.verb === 'delete'));
    await t.stop();
  });

  it('ignores jobs without a TTL or not finished', async () => {
    const t = newBatchTestContext('2024-01-01T01:00:00Z');
    const running: J = { ...finishedJob('running', 0), status: {} };
    t.fake.seed(GVR.jobs, finishedJob('keep', undefined), running);
    const c = newTTLAfterFinishedController(t.ctx);
    await t.start();
    await t.settle();
    await c.sync('default/keep');
    await c.sync('default/running');
    assert.ok(!t.fake.actions().some((a) => a.verb === 'delete'));
    await t.stop();
  });
});
