import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, until, type TestContext } from '../garbagecollector/test-support.js';
import { formatCIDR, newCIDRSet, parseCIDR } from './cidr-set.js';
import { descriptor, newNodeIpamController, nodeCIDRMaskSizes, parseClusterCIDRs } from './nodeipam-controller.js';

const node = (name: string, podCIDRs?: string[]): Kube<Node> =>
  ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: podCIDRs ? { podCIDR: podCIDRs[0], podCIDRs } : {} }) as Kube<Node>;

const maskOpts = { nodeCIDRMaskSize: 0, nodeCIDRMaskSizeIPv4: 0, nodeCIDRMaskSizeIPv6: 0 };

async function setup(opts: { clusterCIDR: string; nodeCIDRMaskSize?: number; serviceClusterIPRange?: string }, seed: (t: TestContext) => void) {
  const t = newTestContext({ options: { allocateNodeCIDRs: true, ...maskOpts, serviceClusterIPRange: '', ...opts } });
  seed(t);
  const c = newNodeIpamController(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  await until(() => c.hasSynced(), 'synced');
  c.recoverFromNodes();
  const get = async (n: string) => (await t.fake.resource<Kube<Node>>(GVR.nodes).get(n)).spec?.podCIDRs;
  return { t, c, get };
}

describe('cidr set', () => {
  it('hands out node subnets round robin and never twice', () => {
    const s = newCIDRSet(parseCIDR('10.244.0.0/22'), 24);
    const got = [s.allocateNext(), s.allocateNext(), s.allocateNext(), s.allocateNext()].map(formatCIDR);
    assert.deepEqual(got, ['10.244.0.0/24', '10.244.1.0/24', '10.244.2.0/24', '10.244.3.0/24']);
    assert.throws(() => s.allocateNext(), /no remaining CIDRs/);
    s.release(parseCIDR('10.244.2.0/24'));
    assert.equal(formatCIDR(s.allocateNext()), '10.244.2.0/24');
  });

  it('occupies every subnet a larger or smaller range covers and rejects ranges outside', () => {
    const s = newCIDRSet(parseCIDR('10.0.0.0/16'), 24);
    s.occupy(parseCIDR('10.0.0.0/23'));
    s.occupy(parseCIDR('10.0.5.128/25'));
    assert.equal(s.allocatedCount(), 3);
    assert.equal(formatCIDR(s.allocateNext()), '10.0.2.0/24');
    assert.throws(() => s.occupy(parseCIDR('192.168.0.0/24')), /out the range/);
  });

  it('handles IPv6 with /64 subnets', () => {
    const s = newCIDRSet(parseCIDR('fd00:10:244::/56'), 64);
    assert.equal(formatCIDR(s.allocateNext()), 'fd00:10:244::/64');
    assert.equal(formatCIDR(s.allocateNext()), 'fd00:10:244:1::/64');
  });

  it('defaults mask sizes to 24 for IPv4 and 64 for IPv6', () => {
    assert.deepEqual(nodeCIDRMaskSizes(maskOpts, parseClusterCIDRs('10.244.0.0/16,fd00::/48')), [24, 64]);
    assert.deepEqual(nodeCIDRMaskSizes({ ...maskOpts, nodeCIDRMaskSize: 26 }, parseClusterCIDRs('10.244.0.0/16')), [26]);
  });
});

describe('node ipam controller', () => {
  before(() => setLogOutput(() => {}));

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'node-ipam-controller');
    assert.deepEqual(descriptor.aliases, ['nodeipam']);
  });

  it('allocates without overlap, skipping ranges of existing nodes and the service range, and releases on delete', async () => {
    const e = await setup({ clusterCIDR: '10.244.0.0/22', serviceClusterIPRange: '10.244.1.0/24' }, (t) => t.fake.seed(GVR.nodes, node('old', ['10.244.0.0/24']), node('a'), node('b')));
    await e.c.syncNode('a');
    assert.deepEqual(await e.get('a'), ['10.244.2.0/24']);
    await e.c.syncNode('b');
    assert.deepEqual(await e.get('b'), ['10.244.3.0/24']);
    await e.t.fake.resource(GVR.nodes).create(node('c'));
    const idx = e.t.ctx.informers.nodes().getIndexer();
    await until(() => !!idx.getByKey('c'), 'c cached');
    await assert.rejects(e.c.syncNode('c'), /failed to allocate cidr/);
    assert.ok(e.t.recorder.events.includes('Normal CIDRNotAvailable Node c status is now: CIDRNotAvailable'));
    await e.t.fake.resource(GVR.nodes).delete('a');
    await until(() => e.c.allocatedCounts()[0] === 3, 'released on delete');
    await e.c.syncNode('c');
    assert.deepEqual(await e.get('c'), ['10.244.2.0/24']);
    const patch = e.t.fake.actions().find((a) => a.verb === 'patch' && a.name === 'c');
    assert.deepEqual(patch?.patch, { spec: { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] } });
    await e.t.close();
  });

  it('gives dual-stack nodes one IPv4 and one IPv6 range', async () => {
    const e = await setup({ clusterCIDR: '10.244.0.0/16,fd00:10:244::/56' }, (t) => t.fake.seed(GVR.nodes, node('a')));
    await e.c.syncNode('a');
    assert.deepEqual(await e.get('a'), ['10.244.0.0/24', 'fd00:10:244::/64']);
    await e.t.close();
  });
});
