import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Service } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { newFakeCloud, type FakeCloud } from '../../cloudprovider/fake.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, LOAD_BALANCER_CLEANUP_FINALIZER, newServiceLBController, type ServiceLBController } from './service-lb-controller.js';

const lbService = (name: string, extra: Partial<Service['spec']> = {}, meta: Partial<Service['metadata']> = {}): Kube<Service> => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, ...meta },
  spec: { type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }], ...extra },
});
const node = (name: string, labels: Record<string, string> = {}, providerID = `fake://${name}`): Kube<Node> => ({
  metadata: { name, labels },
  spec: { providerID },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});

async function setup(seed: (f: Parameters<Parameters<typeof setupController>[0]>[0]) => void, cloud: FakeCloud = newFakeCloud()) {
  const env = await setupController(seed, (ctx) => newServiceLBController({ ...ctx, cloud }), { 'cluster-name': 'kubernetes' });
  return { ...env, cloud };
}

const stored = (env: { fake: FakeClient }, name: string) => env.fake.stored<Kube<Service>>(GVR.services, 'default', name);

describe('service-lb controller', () => {
  before(() => setLogOutput(() => {}));

  it('adds the cleanup finalizer, ensures a balancer over the load-balancer nodes and writes status.loadBalancer', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, lbService('web'));
      f.seed(GVR.nodes, node('n0'), node('n1', { 'node.kubernetes.io/exclude-from-external-load-balancers': '' }), node('n2', {}, ''));
    });
    await env.c.syncService('default/web');
    const svc = stored(env, 'web')!;
    assert.deepEqual(svc.metadata?.finalizers, [LOAD_BALANCER_CLEANUP_FINALIZER]);
    assert.deepEqual(svc.status?.loadBalancer, { ingress: [{ ip: '192.0.2.1' }] });
    assert.deepEqual([...env.cloud.balancers.values()][0]!.hosts, ['n0'], 'excluded and uninitialised nodes are left out');
    assert.deepEqual(env.recorder.events, ['Normal EnsuringLoadBalancer Ensuring load balancer', 'Normal EnsuredLoadBalancer Ensured load balancer']);
    await env.stop();
  });

  it('ignores Services with a loadBalancerClass and of other types', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, lbService('classy', { loadBalancerClass: 'example.com/lb' }), lbService('plain', { type: 'ClusterIP' }));
    });
    await env.c.syncService('default/classy');
    await env.c.syncService('default/plain');
    assert.deepEqual(env.cloud.calls.filter((c) => c.startsWith('ensure')), []);
    assert.equal(stored(env, 'classy')!.metadata?.finalizers, undefined);
    await env.stop();
  });

  it('deletes the balancer of a Service being deleted, then removes the finalizer', async () => {
    const cloud = newFakeCloud();
    const env = await setup((f) => f.seed(GVR.services, lbService('web')), cloud);
    await env.c.syncService('default/web');
    env.recorder.clear();
    await env.fake.resource(GVR.services).namespace('default').delete('web');
    await until(() => !!env.informers.services().getIndexer().getByKey('default/web')?.metadata?.deletionTimestamp, 'deletion seen');
    await env.c.syncService('default/web');
    assert.equal(cloud.balancers.size, 0);
    assert.equal(stored(env, 'web'), undefined, 'the finalizer went, so did the Service');
    assert.deepEqual(env.recorder.events, ['Normal DeletingLoadBalancer Deleting load balancer', 'Normal DeletedLoadBalancer Deleted load balancer']);
    await env.stop();
  });

  it('cleans up when the type changes away from LoadBalancer', async () => {
    const env = await setup((f) => f.seed(GVR.services, lbService('web')));
    await env.c.syncService('default/web');
    const cur = stored(env, 'web')!;
    await env.fake.resource(GVR.services).namespace('default').update({ ...cur, spec: { ...cur.spec, type: 'ClusterIP' } });
    await until(() => env.informers.services().getIndexer().getByKey('default/web')?.spec?.type === 'ClusterIP', 'update seen');
    await env.c.syncService('default/web');
    const svc = stored(env, 'web')!;
    assert.equal(svc.metadata?.finalizers, undefined);
    assert.equal(svc.status?.loadBalancer?.ingress, undefined);
    assert.equal(env.cloud.balancers.size, 0);
    await env.stop();
  });

  it('records SyncLoadBalancerFailed and fails the sync when the cloud errs', async () => {
    const cloud = newFakeCloud();
    cloud.errors.set('ensureLoadBalancer', new Error('quota exceeded'));
    const env = await setup((f) => f.seed(GVR.services, lbService('web')), cloud);
    await assert.rejects(env.c.syncService('default/web'), /failed to ensure load balancer: quota exceeded/);
    assert.ok(env.recorder.events.includes('Warning SyncLoadBalancerFailed Error syncing load balancer: failed to ensure load balancer: quota exceeded'), env.recorder.events.join('\n'));
    await env.stop();
  });

  it('points every balancer at the new node set when nodes change', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, lbService('web'));
      f.seed(GVR.nodes, node('n0'));
    });
    await env.c.nodeSync();
    await env.c.syncService('default/web');
    env.recorder.clear();
    await env.fake.resource(GVR.nodes).create(node('n1'));
    await until(() => env.informers.nodes().getIndexer().list().length === 2, 'node seen');
    await env.c.nodeSync();
    assert.deepEqual([...env.cloud.balancers.values()][0]!.hosts, ['n0', 'n1']);
    assert.ok(env.recorder.events.includes('Normal UpdatedLoadBalancer Updated load balancer with new hosts'), env.recorder.events.join('\n'));
    await env.stop();
  });

  it('ensures balancers through informer events while running', async () => {
    const env = await setup((f) => f.seed(GVR.nodes, node('n0')));
    const abort = new AbortController();
    const run = (env.c as ServiceLBController).run(1, abort.signal);
    await env.fake.resource(GVR.services).namespace('default').create(lbService('web'));
    await until(() => stored(env, 'web')?.status?.loadBalancer?.ingress?.[0]?.ip === '192.0.2.1', 'status written');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered as service-lb-controller with one worker', () => {
    assert.equal(descriptor.name, 'service-lb-controller');
    assert.deepEqual(descriptor.aliases, ['service']);
    assert.equal(descriptor.defaultWorkers, 1);
  });
});
