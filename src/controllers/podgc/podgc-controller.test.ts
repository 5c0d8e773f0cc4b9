import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, until } from '../garbagecollector/test-support.js';
import { descriptor, newPodGCController } from './podgc-controller.js';

const pod = (name: string, phase: string, extra: { nodeName?: string; created?: string; reason?: string; deleting?: boolean } = {}) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: extra.created ?? '2024-01-01T00:00:00Z',
      ...(extra.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['test/hold'] } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'i' }], ...(extra.nodeName ? { nodeName: extra.nodeName } : {}) },
    status: { phase, ...(extra.reason ? { reason: extra.reason } : {}) },
  }) as Kube<Pod>;

const node = (name: string, ready = true, taints: Array<{ key: string; effect: string }> = []) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: { taints },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

async function setup(threshold: number, seed: (t: ReturnType<typeof newTestContext>) => void) {
  const t = newTestContext({ options: { terminatedPodGCThreshold: threshold } });
  seed(t);
  const c = newPodGCController(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  await until(() => c.hasSynced(), 'synced');
  return { t, c };
}

const deletes = (t: ReturnType<typeof newTestContext>) => t.fake.actions().filter((a) => a.verb === 'delete' && a.resource === 'pods');

describe('pod garbage collector', () => {
  before(() => setLogOutput(() => {}));

  it('deletes terminated pods beyond the threshold, evicted first then oldest', async () => {
    const { t, c } = await setup(2, (t) => {
      t.fake.seed(GVR.nodes, node('n1'));
      t.fake.seed(
        GVR.pods,
        pod('old', 'Succeeded', { nodeName: 'n1', created: '2024-01-01T00:00:01Z' }),
        pod('mid', 'Failed', { nodeName: 'n1', created: '2024-01-01T00:00:02Z' }),
        pod('new', 'Succeeded', { nodeName: 'n1', created: '2024-01-01T00:00:03Z' }),
        pod('evicted', 'Failed', { nodeName: 'n1', created: '2024-01-01T00:00:09Z', reason: 'Evicted' }),
        pod('running', 'Running', { nodeName: 'n1' }),
      );
    });
    await c.gc();
    assert.deepEqual(deletes(t).map((a) => a.name).sort(), ['evicted', 'old']);
    assert.equal(deletes(t)[0]?.deleteOptions?.gracePeriodSeconds, 0);
    assert.equal(t.fake.actions().some((a) => a.verb === 'patch'), false, 'terminal pods are not patched');
    await t.close();
  });

  it('does not collect terminated pods when the threshold is 0', async () => {
    const { t, c } = await setup(0, (t) => {
      t.fake.seed(GVR.nodes, node('n1'));
      t.fake.seed(GVR.pods, pod('a', 'Succeeded', { nodeName: 'n1' }));
    });
    await c.gc();
    assert.deepEqual(deletes(t), []);
    await t.close();
  });

  it('deletes pods on a missing node only after the 40 s quarantine and a live check, marking them Failed first', async () => {
    const { t, c } = await setup(12500, (t) => {
      t.fake.seed(GVR.pods, pod('orphan', 'Running', { nodeName: 'gone' }), pod('unbound', 'Pending'));
    });
    await c.gc();
    assert.deepEqual(deletes(t), []);
    await t.clock.advance(20_000);
    await c.gc();
    assert.deepEqual(deletes(t), []);
    await t.clock.advance(20_000);
    await c.gc();
    assert.deepEqual(deletes(t).map((a) => a.name), ['orphan']);
    const patch = t.fake.actions().find((a) => a.verb === 'patch');
    assert.equal(patch?.subresource, 'status');
    const status = (patch?.patch as { status: Pod['status'] }).status!;
    assert.equal(status.phase, 'Failed');
    assert.deepEqual(
      status.conditions?.map((x) => [x.type, x.status, x.reason, x.message]),
      [['DisruptionTarget', 'True', 'DeletionByPodGC', 'PodGC: node no longer exists']],
    );
    assert.ok(t.fake.actions().some((a) => a.verb === 'get' && a.resource === 'nodes' && a.name === 'gone'));
    await t.close();
  });

  it('keeps pods whose node reappears during quarantine (the live read finds it)', async () => {
    const { t, c } = await setup(12500, (t) => t.fake.seed(GVR.pods, pod('p', 'Running', { nodeName: 'late' })));
    await c.gc();
    t.fake.prependReactor('get', 'nodes', () => node('late'));
    await t.clock.advance(40_000);
    await c.gc();
    assert.deepEqual(deletes(t), []);
    await t.close();
  });

  it('force-deletes terminating pods that were never scheduled', async () => {
    const { t, c } = await setup(12500, (t) => t.fake.seed(GVR.pods, pod('stuck', 'Pending', { deleting: true }), pod('fine', 'Pending')));
    await c.gc();
    assert.deepEqual(deletes(t).map((a) => [a.name, a.deleteOptions?.gracePeriodSeconds]), [['stuck', 0]]);
    await t.close();
  });

  it('force-deletes terminating pods on a NotReady node tainted out-of-service, not on other nodes', async () => {
    const { t, c } = await setup(12500, (t) => {
      t.fake.seed(GVR.nodes, node('oos', false, [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }]), node('notready', false), node('ok', true, [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }]));
      t.fake.seed(
        GVR.pods,
        pod('a', 'Running', { nodeName: 'oos', deleting: true }),
        pod('b', 'Running', { nodeName: 'notready', deleting: true }),
        pod('c', 'Running', { nodeName: 'ok', deleting: true }),
        pod('d', 'Running', { nodeName: 'oos' }),
      );
    });
    await c.gc();
    assert.deepEqual(deletes(t).map((a) => a.name), ['a']);
    await t.close();
  });

  it('runs a pass every 20 s', async () => {
    const { t, c } = await setup(1, (t) => {
      t.fake.seed(GVR.nodes, node('n1'));
      t.fake.seed(GVR.pods, pod('a', 'Succeeded', { nodeName: 'n1', created: '2024-01-01T00:00:01Z' }));
    });
    const run = c.run(1, t.stop.signal);
    await t.clock.advance(100);
    assert.deepEqual(deletes(t), []);
    t.fake.seed(GVR.pods, pod('b', 'Succeeded', { nodeName: 'n1', created: '2024-01-01T00:00:02Z' }));
    await until(() => t.fake.storedList(GVR.pods).length === 2, 'seeded');
    await t.clock.advance(20_000);
    await until(() => deletes(t).length === 1, 'second pass');
    assert.equal(deletes(t)[0]?.name, 'a');
    await t.close();
    await run;
  });

  it('is registered as pod-garbage-collector-controller', () => {
    assert.equal(descriptor.name, 'pod-garbage-collector-controller');
    assert.deepEqual(descriptor.aliases, ['podgc']);
  });
});
