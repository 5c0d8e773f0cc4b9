import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Service } from 'kubernetes-types/core/v1.js';
import { initCloudProvider, UnknownCloudProviderError, validateCloudProviderName } from '../registry.js';
import { newIpPool, parseIpRange } from './ip-pool.js';
import { localCloudOptions, newLocalCloud } from './local-cloud.js';

const svc = (uid: string, extra: Partial<Service['spec']> = {}, ingressIP?: string): Service => ({
  metadata: { name: `s-${uid}`, namespace: 'default', uid },
  spec: { type: 'LoadBalancer', ...extra },
  ...(ingressIP ? { status: { loadBalancer: { ingress: [{ ip: ingressIP }] } } } : {}),
});
const node = (name: string, annotations: Record<string, string> = {}): Node => ({
  metadata: { name, annotations },
  status: { addresses: [{ type: 'InternalIP', address: '172.18.0.2' }, { type: 'Hostname', address: name }] },
});

describe('local cloud provider', () => {
  it('parses address ranges and CIDRs', () => {
    assert.deepEqual(parseIpRange('127.0.0.100-127.0.0.102'), { first: 0x7f000064, last: 0x7f000066 });
    assert.equal(newIpPool('10.1.0.0/30').size, 2, 'a /30 without network and broadcast');
    assert.throws(() => parseIpRange('127.0.0.9-127.0.0.1'), /below the first/);
    assert.throws(() => parseIpRange('nonsense'), /invalid load balancer IP range/);
  });

  it('hands out the lowest free address and takes it back on delete', async () => {
    const cloud = newLocalCloud({ loadBalancerIPRange: '127.0.0.100-127.0.0.101' });
    const lb = cloud.loadBalancer();
    const a = await lb.ensureLoadBalancer('kubernetes', svc('a'), [node('n0')]);
    const b = await lb.ensureLoadBalancer('kubernetes', svc('b'), []);
    assert.equal(a.ingress?.[0]?.ip, '127.0.0.100');
    assert.equal(b.ingress?.[0]?.ip, '127.0.0.101');
    assert.deepEqual(cloud.hostsOf('kubernetes', svc('a')), ['n0']);
    await assert.rejects(lb.ensureLoadBalancer('kubernetes', svc('c'), []), /no free IP in the load balancer range 127.0.0.100-127.0.0.101/);
    assert.deepEqual(await lb.ensureLoadBalancer('kubernetes', svc('a'), []), a, 'ensure again: same address');
    await lb.ensureLoadBalancerDeleted('kubernetes', svc('a'));
    assert.equal((await lb.getLoadBalancer('kubernetes', svc('a'))).exists, false);
    assert.equal(cloud.pool.used(), 1);
    const c = await lb.ensureLoadBalancer('kubernetes', svc('c'), []);
    assert.equal(c.ingress?.[0]?.ip, '127.0.0.100', 'the freed address is reused');
  });

  it('honours spec.loadBalancerIP inside the pool and refuses one outside it or taken', async () => {
    const lb = newLocalCloud({ loadBalancerIPRange: '127.0.0.100-127.0.0.110' }).loadBalancer();
    const s = await lb.ensureLoadBalancer('k', svc('a', { loadBalancerIP: '127.0.0.105' }), []);
    assert.equal(s.ingress?.[0]?.ip, '127.0.0.105');
    await assert.rejects(lb.ensureLoadBalancer('k', svc('b', { loadBalancerIP: '127.0.0.105' }), []), /in use by another service/);
    await assert.rejects(lb.ensureLoadBalancer('k', svc('c', { loadBalancerIP: '10.0.0.1' }), []), /not in the range/);
  });

  it('takes back the address a Service shows after a restart', async () => {
    const lb = newLocalCloud().loadBalancer();
    const got = await lb.getLoadBalancer('k', svc('a', {}, '127.0.0.150'));
    assert.equal(got.exists, true);
    const s = await lb.ensureLoadBalancer('k', svc('b'), []);
    assert.equal(s.ingress?.[0]?.ip, '127.0.0.100');
    const again = await lb.ensureLoadBalancer('k', svc('a', {}, '127.0.0.150'), []);
    assert.equal(again.ingress?.[0]?.ip, '127.0.0.150');
  });

  it('knows instances by the kcm.dev/instance annotation and spreads zones by node number', async () => {
    const inst = newLocalCloud({ zones: ['z1', 'z2'], region: 'r' }).instancesV2();
    assert.equal(await inst.instanceExists(node('kcm-node-0')), true);
    assert.equal(await inst.instanceExists(node('kcm-node-0', { 'kcm.dev/instance': 'deleted' })), false);
    assert.equal(await inst.instanceShutdown(node('kcm-node-0', { 'kcm.dev/instance': 'shutdown' })), true);
    const md0 = await inst.instanceMetadata(node('kcm-node-0'));
    const md1 = await inst.instanceMetadata(node('kcm-node-1'));
    assert.deepEqual(md0, {
      providerID: 'kcm://kcm-node-0',
      instanceType: 'kcm.standard',
      nodeAddresses: [{ type: 'InternalIP', address: '172.18.0.2' }, { type: 'Hostname', address: 'kcm-node-0' }],
      zone: 'z1',
      region: 'r',
    });
    assert.equal(md1.zone, 'z2');
  });

  it('keeps a route table', async () => {
    const routes = newLocalCloud().routes();
    await routes.createRoute('k', 'uid-1', { name: '', targetNode: 'n0', destinationCIDR: '10.244.0.0/24' });
    const list = await routes.listRoutes('k');
    assert.deepEqual(list, [{ name: 'k-uid-1', targetNode: 'n0', destinationCIDR: '10.244.0.0/24' }]);
    await routes.deleteRoute('k', list[0]!);
    assert.deepEqual(await routes.listRoutes('k'), []);
  });

  it('reads a cloud config file under the command-line options', () => {
    assert.deepEqual(localCloudOptions({ configText: 'zones: a, b\nregion: west\nloadBalancerIPRange: 10.0.0.0/24\n', options: { loadBalancerIPRange: '127.0.0.1-127.0.0.2' } }), {
      loadBalancerIPRange: '127.0.0.1-127.0.0.2',
      zones: ['a', 'b'],
      region: 'west',
    });
  });

  it('is registered as "local"; external and empty mean no provider; an unknown name is a one-line error', () => {
    assert.equal(initCloudProvider('local')?.providerName, 'local');
    assert.equal(initCloudProvider('external'), undefined);
    assert.equal(initCloudProvider(''), undefined);
    assert.throws(() => validateCloudProviderName('aws'), (err: unknown) => err instanceof UnknownCloudProviderError && err.message === 'cloud provider could not be initialized: unknown cloud provider "aws"');
  });
});
