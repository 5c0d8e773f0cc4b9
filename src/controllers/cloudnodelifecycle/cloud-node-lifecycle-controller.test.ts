import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { newFakeCloud } from '../../cloudprovider/fake.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newCloudNodeLifecycleController, SHUTDOWN_TAINT_KEY } from './cloud-node-lifecycle-controller.js';

const node = (name: string, ready: string, taints: Node['spec'] extends infer S ? S extends { taints?: infer T } ? T : never : never = []): Kube<Node> => ({
  metadata: { name, uid: `uid-${name}` },
  spec: { providerID: `fake://${name}`, ...(taints && taints.length ? { taints } : {}) },
  status: { conditions: [{ type: 'Ready', status: ready }] },
});

function cloudWith(instances: Record<string, boolean>) {
  const cloud = newFakeCloud();
  for (const [n, shutdown] of Object.entries(instances)) cloud.instances.set(n, { providerID: `fake://${n}`, instanceType: 't', zone: 'z', region: 'r', nodeAddresses: [], shutdown });
  return cloud;
}

describe('cloud node lifecycle controller', () => {
  before(() => setLogOutput(() => {}));

  it('deletes a NotReady node whose instance is gone, with a DeletingNode event, and keeps Ready ones', async () => {
    const cloud = cloudWith({});
    const env = await setupController((f) => f.seed(GVR.nodes, node('gone', 'Unknown'), node('fine', 'True')), (ctx) => newCloudNodeLifecycleController({ ...ctx, cloud }));
    await env.c.monitorNodes();
    assert.equal(env.fake.stored(GVR.nodes, '', 'gone'), undefined);
    assert.ok(env.fake.stored(GVR.nodes, '', 'fine'));
    assert.deepEqual(env.recorder.events, ['Normal DeletingNode Deleting node gone because it does not exist in the cloud provider']);
    assert.ok(!cloud.calls.some((c) => c.endsWith(' fine')), 'a Ready node is not looked up');
    await env.stop();
  });

  it('taints a NotReady node whose instance is shut down, and untaints it once Ready', async () => {
    const cloud = cloudWith({ off: true });
    const env = await setupController((f) => f.seed(GVR.nodes, node('off', 'False')), (ctx) => newCloudNodeLifecycleController({ ...ctx, cloud }));
    await env.c.monitorNodes();
    const tainted = env.fake.stored<Kube<Node>>(GVR.nodes, '', 'off')!;
    assert.deepEqual(tainted.spec?.taints, [{ key: SHUTDOWN_TAINT_KEY, effect: 'NoSchedule' }]);
    await env.fake.resource(GVR.nodes).updateStatus({ ...tainted, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    await until(() => (env.informers.nodes().getIndexer().getByKey('off') as Node | undefined)?.status?.conditions?.[0]?.status === 'True' && !!(env.informers.nodes().getIndexer().getByKey('off') as Node | undefined)?.spec?.taints, 'update seen');
    await env.c.monitorNodes();
    assert.equal(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'off')!.spec?.taints, undefined);
    await env.stop();
  });

  it('keeps a NotReady node whose instance exists', async () => {
    const cloud = cloudWith({ slow: false });
    const env = await setupController((f) => f.seed(GVR.nodes, node('slow', 'Unknown')), (ctx) => newCloudNodeLifecycleController({ ...ctx, cloud }));
    await env.c.monitorNodes();
    assert.ok(env.fake.stored(GVR.nodes, '', 'slow'));
    assert.deepEqual(env.recorder.events, []);
    await env.stop();
  });

  it('is registered as cloud-node-lifecycle-controller', () => {
    assert.equal(descriptor.name, 'cloud-node-lifecycle-controller');
    assert.deepEqual(descriptor.aliases, ['cloud-node-lifecycle']);
  });
});
