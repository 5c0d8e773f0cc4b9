import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, until, type TestContext } from '../garbagecollector/test-support.js';
import { descriptor, newTaintEvictionController, type TaintEvictionController } from './tainteviction-controller.js';
import { getMatchingTolerations, toleratesTaint } from '../../api/taints.js';
import { getMinTolerationTimeMs } from './tolerations.js';

const UNREACHABLE: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2024-01-01T00:00:00Z' };

function node(name: string, taints: Taint[]): Kube<Node> {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { taints } } as Kube<Node>;
}

function pod(name: string, nodeName: string, tolerations: Toleration[] = []): Kube<Pod> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns' },
    spec: { nodeName, tolerations, containers: [{ name: 'c', image: 'i' }] },
    status: { phase: 'Running' },
  } as Kube<Pod>;
}

const tolerate = (seconds?: number): Toleration => ({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}) });

async function setup(seed: (t: TestContext) => void): Promise<{ t: TestContext; c: TaintEvictionController; exists(name: string): Promise<boolean> }> {
  const t = newTestContext();
  seed(t);
  const c = newTaintEvictionController(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  await until(() => c.hasSynced(), 'synced');
  const pods = t.fake.resource<Kube<Pod>>(GVR.pods).namespace('ns');
  return {
    t,
    c,
    async exists(name) {
      try {
        await pods.get(name);
        return true;
      } catch {
        return false;
      }
    },
  };
}

const deleted = (t: TestContext) =>
  t.fake
    .actions()
    .filter((a) => a.verb === 'delete' && a.resource === 'pods')
    .map((a) => a.name);

describe('taint eviction controller', () => {
  before(() => setLogOutput(() => {}));

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'taint-eviction-controller');
  });

  it('deletes a pod without a toleration at once, one tolerating 5 s after 5 s, and keeps one tolerating an hour', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('n1', [UNREACHABLE]));
      t.fake.seed(GVR.pods, pod('none', 'n1'), pod('five', 'n1', [tolerate(5)]), pod('hour', 'n1', [tolerate(3600)]), pod('forever', 'n1', [tolerate()]));
    });
    await e.c.handleNodeUpdate('n1');
    await until(() => deleted(e.t).includes('none'), 'untolerating pod deleted');
    assert.deepEqual(deleted(e.t), ['none']);
    const patch = e.t.fake.actions().find((a) => a.verb === 'patch' && a.name === 'none');
    assert.equal(patch?.subresource, 'status');
    assert.deepEqual((patch?.patch as { status: { conditions: Array<{ type: string; reason: string; message: string }> } }).status.conditions.map((c) => [c.type, c.reason, c.message]), [
      ['DisruptionTarget', 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint'],
    ]);
    assert.ok(e.t.recorder.events.includes('Normal TaintManagerEviction Marking for deletion Pod ns/none'));

    await e.t.clock.advance(4_900);
    assert.equal(await e.exists('five'), true, 'not before tolerationSeconds');
    await e.t.clock.advance(100);
    await until(() => deleted(e.t).includes('five'), 'pod tolerating 5 s deleted');
    await e.t.clock.advance(600_000);
    assert.equal(await e.exists('hour'), true);
    assert.equal(await e.exists('forever'), true);
    assert.equal(e.c.pendingEvictions(), 1, 'the hour-long one is still pending');
    await e.t.close();
  });

  it('cancels pending evictions when the taint is removed in time', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('n1', [UNREACHABLE]));
      t.fake.seed(GVR.pods, pod('five', 'n1', [tolerate(5)]));
    });
    await e.c.handleNodeUpdate('n1');
    assert.equal(e.c.pendingEvictions(), 1);
    await e.t.clock.advance(3_000);
    await e.t.fake.resource(GVR.nodes).update(node('n1', []));
    const nodes = e.t.ctx.informers.nodes().getIndexer();
    await until(() => (nodes.getByKey('n1')?.spec?.taints ?? []).length === 0, 'node update cached');
    await e.c.handleNodeUpdate('n1');
    assert.equal(e.c.pendingEvictions(), 0);
    assert.ok(e.t.recorder.events.includes('Normal TaintManagerEviction Cancelling deletion of Pod ns/five'));
    await e.t.clock.advance(10_000);
    assert.equal(await e.exists('five'), true);
    assert.deepEqual(deleted(e.t), []);
    await e.t.close();
  });

  it('keeps the earlier deadline when the node is processed again', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('n1', [UNREACHABLE]));
      t.fake.seed(GVR.pods, pod('five', 'n1', [tolerate(5)]));
    });
    await e.c.handleNodeUpdate('n1');
    await e.t.clock.advance(3_000);
    await e.c.handleNodeUpdate('n1');
    await e.t.clock.advance(2_000);
    await until(() => deleted(e.t).includes('five'), 'deleted 5 s after the first notice');
    await e.t.close();
  });

  it('evicts pods through the running controller when a node gets a NoExecute taint', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('n1', []));
      t.fake.seed(GVR.pods, pod('p', 'n1'));
    });
    const run = e.c.run(1, e.t.stop.signal);
    await e.t.fake.resource(GVR.nodes).update(node('n1', [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]));
    for (let i = 0; i < 50 && !deleted(e.t).includes('p'); i++) await e.t.clock.advance(100);
    assert.deepEqual(deleted(e.t), ['p']);
    await e.t.close();
    await run;
  });
});

describe('tolerations', () => {
  it('matches taints by key, value, effect and operator', () => {
    const taint: Taint = { key: 'k', value: 'v', effect: 'NoExecute' };
    assert.equal(toleratesTaint({ key: 'k', value: 'v', effect: 'NoExecute' }, taint), true);
    assert.equal(toleratesTaint({ key: 'k', value: 'x' }, taint), false);
    assert.equal(toleratesTaint({ key: 'k', operator: 'Exists' }, taint), true);
    assert.equal(toleratesTaint({ operator: 'Exists' }, taint), true);
    assert.equal(toleratesTaint({ key: 'k', operator: 'Exists', effect: 'NoSchedule' }, taint), false);
  });

  it('needs every taint tolerated and takes the shortest tolerationSeconds', () => {
    const taints: Taint[] = [
      { key: 'a', effect: 'NoExecute' },
      { key: 'b', effect: 'NoExecute' },
    ];
    assert.equal(getMatchingTolerations(taints, [{ key: 'a', operator: 'Exists' }])[0], false);
    const [ok, used] = getMatchingTolerations(taints, [
      { key: 'a', operator: 'Exists', tolerationSeconds: 30 },
      { key: 'b', operator: 'Exists', tolerationSeconds: 10 },
    ]);
    assert.equal(ok, true);
    assert.equal(getMinTolerationTimeMs(used), 10_000);
    assert.equal(getMinTolerationTimeMs([{ key: 'a', operator: 'Exists' }]), -1);
    assert.equal(getMinTolerationTimeMs([{ key: 'a', operator: 'Exists', tolerationSeconds: -5 }]), 0);
  });
});
