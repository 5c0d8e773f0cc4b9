import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newFakeClient } from '../controller/testing/index.js';
import { newFakeRecorder } from '../tools/record/index.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { setLogOutput } from '../util/log/logger.js';
import { setInstanceState } from './instance.js';
import { newNodeSimulator } from './node-simulator.js';

setLogOutput(() => {});

async function start() {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  const recorder = newFakeRecorder();
  const sim = newNodeSimulator({ client: fake, clock, count: 1, recorderFor: () => recorder, taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] });
  const ac = new AbortController();
  const done = sim.run(ac.signal);
  const settle = async () => {
    for (let i = 0; i < 20; i++) {
      await clock.advance(0);
      await sim.whenIdle();
      await flushMicrotasks();
    }
  };
  await settle();
  return {
    clock,
    fake,
    settle,
    stop: async () => {
      ac.abort();
      await settle();
      await done;
    },
  };
}

describe('simulated nodes as local-cloud instances', () => {
  it('registers with the uninitialized taint it is given (kubelet --cloud-provider=external)', async () => {
    const h = await start();
    const node = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!;
    assert.deepEqual(node.spec?.taints, [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }]);
    await h.stop();
  });

  it('stops the kubelet of a deleted instance and does not register its Node again', async () => {
    const h = await start();
    await setInstanceState(h.fake, 'kcm-node-0', 'deleted');
    await h.settle();
    const renewed = h.fake.stored<Lease & KubeObject>(GVR.leases, 'kube-node-lease', 'kcm-node-0')!.spec!.renewTime;
    await h.clock.advance(20_000);
    await h.settle();
    assert.equal(h.fake.stored<Lease & KubeObject>(GVR.leases, 'kube-node-lease', 'kcm-node-0')!.spec!.renewTime, renewed, 'no lease renewal');
    await h.fake.resource(GVR.nodes).delete('kcm-node-0');
    await h.settle();
    await h.clock.advance(20_000);
    await h.settle();
    assert.equal(h.fake.stored(GVR.nodes, '', 'kcm-node-0'), undefined);
    await h.stop();
  });

  it('resumes a shut-down instance when it starts again', async () => {
    const h = await start();
    await setInstanceState(h.fake, 'kcm-node-0', 'shutdown');
    await h.settle();
    assert.equal(h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!.metadata?.annotations?.['kcm.dev/instance'], 'shutdown');
    await setInstanceState(h.fake, 'kcm-node-0', 'running');
    await h.settle();
    assert.equal(h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!.metadata?.annotations?.['kcm.dev/instance'], undefined);
    await h.stop();
  });
});
