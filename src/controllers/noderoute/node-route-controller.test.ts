import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { newFakeCloud, type FakeCloud } from '../../cloudprovider/fake.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController } from '../endpointslice/test-support.js';
import type { ControllerContext } from '../types.js';
import { descriptor, newNodeRouteController } from './node-route-controller.js';

const node = (name: string, podCIDR?: string): Kube<Node> => ({
  metadata: { name, uid: `uid-${name}` },
  spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {},
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});

const withCloud = (cloud: FakeCloud) => (ctx: ControllerContext) =>
  newNodeRouteController({ ...ctx, cloud, options: { ...ctx.options, allocateNodeCIDRs: true, clusterCIDR: '10.244.0.0/16' } });

const networkCondition = (n: Kube<Node> | undefined) => n?.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');

describe('node route controller', () => {
  before(() => setLogOutput(() => {}));

  it('creates a route per pod CIDR and marks the node NetworkUnavailable=False (RouteCreated); skips nodes without a CIDR', async () => {
    const cloud = newFakeCloud();
    const env = await setupController((f) => f.seed(GVR.nodes, node('n0', '10.244.0.0/24'), node('n1')), withCloud(cloud));
    await env.c.reconcileNodeRoutes();
    assert.deepEqual(cloud.routeTable, [{ name: 'kubernetes-uid-n0', targetNode: 'n0', destinationCIDR: '10.244.0.0/24' }]);
    const cond = networkCondition(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n0'));
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'RouteCreated');
    assert.equal(cond?.message, 'RouteController created a route');
    assert.equal(networkCondition(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n1')), undefined);
    await env.stop();
  });

  it('deletes routes of gone nodes inside the cluster CIDR and leaves other routes alone', async () => {
    const cloud = newFakeCloud();
    cloud.routeTable.push({ name: 'old', targetNode: 'gone', destinationCIDR: '10.244.9.0/24' }, { name: 'foreign', targetNode: 'gone', destinationCIDR: '192.168.0.0/24' });
    const env = await setupController(() => {}, withCloud(cloud));
    await env.c.reconcileNodeRoutes();
    assert.deepEqual(cloud.routeTable.map((r) => r.name), ['foreign']);
    await env.stop();
  });

  it('marks the node NetworkUnavailable=True (NoRouteCreated) with a FailedToCreateRoute event when the cloud fails', async () => {
    const cloud = newFakeCloud();
    cloud.errors.set('createRoute', new Error('boom'));
    const env = await setupController((f) => f.seed(GVR.nodes, node('n0', '10.244.0.0/24')), withCloud(cloud));
    await env.c.reconcileNodeRoutes();
    const cond = networkCondition(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n0'));
    assert.equal(cond?.status, 'True');
    assert.equal(cond?.reason, 'NoRouteCreated');
    assert.match(env.recorder.events[0] ?? '', /^Warning FailedToCreateRoute Could not create route uid-n0 10.244.0.0\/24 for node n0 after .*: boom$/);
    await env.stop();
  });

  it('is not built without --allocate-node-cidrs', async () => {
    const cloud = newFakeCloud();
    await assert.rejects(
      setupController(() => {}, (ctx) => newNodeRouteController({ ...ctx, cloud, options: { ...ctx.options, allocateNodeCIDRs: false } })),
      /Will not configure cloud provider routes for allocate-node-cidrs: false/,
    );
    assert.equal(descriptor.name, 'node-route-controller');
    assert.deepEqual(descriptor.aliases, ['route']);
  });
});
