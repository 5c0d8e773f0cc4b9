import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { newFakeCloud } from '../../cloudprovider/fake.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newCloudNodeController, UNINITIALIZED_TAINT_KEY } from './cloud-node-controller.js';

const tainted = (name: string): Kube<Node> => ({
  metadata: { name, uid: `uid-${name}`, labels: { 'kubernetes.io/hostname': name } },
  spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }, { key: 'other', effect: 'NoSchedule' }] },
});

function cloudWith(...names: string[]) {
  const cloud = newFakeCloud();
  for (const n of names) {
    cloud.instances.set(n, { providerID: `fake://${n}`, instanceType: 'big', zone: 'z1', region: 'r1', nodeAddresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: n }] });
  }
  return cloud;
}

describe('cloud node controller', () => {
  before(() => setLogOutput(() => {}));

  it('initialises a tainted node: addresses, providerID, zone, region and instance-type labels, then removes only its taint', async () => {
    const cloud = cloudWith('n0');
    const env = await setupController((f) => f.seed(GVR.nodes, tainted('n0')), (ctx) => newCloudNodeController({ ...ctx, cloud }));
    await env.c.syncNode('n0');
    const n = env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n0')!;
    assert.equal(n.spec?.providerID, 'fake://n0');
    assert.deepEqual(n.spec?.taints, [{ key: 'other', effect: 'NoSchedule' }]);
    assert.equal(n.metadata?.labels?.['topology.kubernetes.io/zone'], 'z1');
    assert.equal(n.metadata?.labels?.['failure-domain.beta.kubernetes.io/zone'], 'z1');
    assert.equal(n.metadata?.labels?.['topology.kubernetes.io/region'], 'r1');
    assert.equal(n.metadata?.labels?.['node.kubernetes.io/instance-type'], 'big');
    assert.deepEqual(n.status?.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n0' }]);
    assert.deepEqual(env.recorder.events, ['Normal Synced Node synced successfully']);
    await env.stop();
  });

  it('retries an update that conflicts (the kubelet writes the node meanwhile) up to 20 times, 50-100 ms apart, as upstream', async () => {
    const cloud = cloudWith('n0');
    const env = await setupController((f) => f.seed(GVR.nodes, tainted('n0')), (ctx) => newCloudNodeController({ ...ctx, cloud }));
    let conflicts = 0;
    env.fake.prependReactor('update', 'nodes', () => {
      if (conflicts++ < 6) throw new StatusError(newStatus(409, 'Conflict', 'Operation cannot be fulfilled on nodes "n0": the object has been modified'));
      return undefined;
    });
    const sync = env.c.syncNode('n0');
    for (let i = 0; i < 10; i++) await env.clock.advance(100);
    await sync;
    assert.equal(conflicts, 7);
    assert.deepEqual(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n0')!.spec?.taints, [{ key: 'other', effect: 'NoSchedule' }]);
    await env.stop();
  });

  it('leaves nodes without the taint alone and keeps the taint while the cloud does not know the instance', async () => {
    const cloud = cloudWith();
    const env = await setupController((f) => f.seed(GVR.nodes, tainted('gone'), { metadata: { name: 'ready' }, spec: {} }), (ctx) => newCloudNodeController({ ...ctx, cloud }));
    await env.c.syncNode('ready');
    assert.deepEqual(cloud.calls, []);
    await assert.rejects(env.c.syncNode('gone'), /instance not found/);
    assert.equal(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'gone')!.spec?.taints?.length, 2);
    await env.stop();
  });

  it('initialises nodes as they register while running', async () => {
    const cloud = cloudWith('n1');
    const env = await setupController(() => {}, (ctx) => newCloudNodeController({ ...ctx, cloud }));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await env.fake.resource(GVR.nodes).create(tainted('n1'));
    await until(() => env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n1')?.spec?.providerID === 'fake://n1', 'initialised');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered as cloud-node-controller', () => {
    assert.equal(descriptor.name, 'cloud-node-controller');
    assert.deepEqual(descriptor.aliases, ['cloud-node']);
  });
});
