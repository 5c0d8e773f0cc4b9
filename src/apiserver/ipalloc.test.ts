import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { newMemoryStorage } from './storage/memory.js';
import { startTestServer, type TestServer } from './test-server.js';
import { parseCidr, nthIp } from './ipalloc.js';

const svcPath = '/api/v1/namespaces/default/services';
const svc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], selector: { app: name }, ...spec } });

describe('service IP and node port allocation', () => {
  let t: TestServer;
  const storage = newMemoryStorage();
  before(async () => {
    t = await startTestServer({ storage, serviceClusterIPRange: '10.0.0.0/24' });
  });
  after(async () => {
    await t.close();
    await storage.close();
  });

  it('parses ranges and numbers addresses from the network address', () => {
    const r = parseCidr('10.96.0.0/12');
    assert.equal(nthIp(r, 1), '10.96.0.1');
    assert.equal(r.size, 2 ** 20);
  });

  it('creates the kubernetes service with the first address on port 443', async () => {
    const k = (await t.request('GET', `${svcPath}/kubernetes`)).body;
    assert.equal(k.spec.clusterIP, '10.0.0.1');
    assert.equal(k.spec.ports[0].port, 443);
    await t.handler.setServingEndpoint('127.0.0.1', 45678);
    const ep = (await t.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).body;
    assert.deepEqual(ep.subsets[0].addresses, [{ ip: '127.0.0.1' }]);
    assert.equal(ep.subsets[0].ports[0].port, 45678);
    const slice = (await t.request('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).body;
    assert.equal(slice.ports[0].port, 45678);
  });

  it('allocates distinct in-range cluster IPs, honours requested ones and refuses taken or out-of-range ones with 422', async () => {
    const a = (await t.request('POST', svcPath, svc('a'))).body;
    const b = (await t.request('POST', svcPath, svc('b'))).body;
    assert.match(a.spec.clusterIP, /^10\.0\.0\.\d+$/);
    assert.notEqual(a.spec.clusterIP, b.spec.clusterIP);
    assert.notEqual(a.spec.clusterIP, '10.0.0.1');
    assert.deepEqual(a.spec.clusterIPs, [a.spec.clusterIP]);
    const fixed = await t.request('POST', svcPath, svc('fixed', { clusterIP: '10.0.0.7' }));
    assert.equal(fixed.status, 201, fixed.text);
    assert.equal(fixed.body.spec.clusterIP, '10.0.0.7');
    const taken = await t.request('POST', svcPath, svc('taken', { clusterIP: '10.0.0.7' }));
    assert.equal(taken.status, 422);
    assert.match(taken.body.message, /provided IP is already allocated/);
    const outside = await t.request('POST', svcPath, svc('outside', { clusterIP: '10.9.0.7' }));
    assert.equal(outside.status, 422);
    assert.match(outside.body.message, /not in the valid range/);
  });

  it('leaves headless services without an IP', async () => {
    const h = (await t.request('POST', svcPath, svc('headless', { clusterIP: 'None' }))).body;
    assert.equal(h.spec.clusterIP, 'None');
  });

  it('allocates node ports for NodePort services, refuses duplicates and releases them on delete', async () => {
    const np = await t.request('POST', svcPath, svc('np', { type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 30080 }, { name: 'b', port: 81 }] }));
    assert.equal(np.status, 201, np.text);
    assert.equal(np.body.spec.ports[0].nodePort, 30080);
    const p2 = np.body.spec.ports[1].nodePort;
    assert.ok(p2 >= 30000 && p2 <= 32767);
    const dup = await t.request('POST', svcPath, svc('dup', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
    assert.equal(dup.status, 422);
    assert.match(dup.body.message, /provided port is already allocated/);
    await t.request('DELETE', `${svcPath}/np`);
    const reuse = await t.request('POST', svcPath, svc('reuse', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
    assert.equal(reuse.status, 201, reuse.text);
  });

  it('releases the cluster IP on delete', async () => {
    await t.request('DELETE', `${svcPath}/fixed`);
    const again = await t.request('POST', svcPath, svc('fixed2', { clusterIP: '10.0.0.7' }));
    assert.equal(again.status, 201, again.text);
  });

  it('gives up and takes IPs and node ports when the type changes to and from ExternalName (dropTypeDependentFields)', async () => {
    const created = await t.request('POST', svcPath, svc('flip', { type: 'NodePort', clusterIP: '10.0.0.12', ports: [{ port: 80, nodePort: 30400 }] }));
    assert.equal(created.status, 201, created.text);
    const cur = created.body;
    cur.spec.type = 'ExternalName';
    cur.spec.externalName = 'foo.example.com';
    const en = await t.request('PUT', `${svcPath}/flip`, cur);
    assert.equal(en.status, 200, en.text);
    assert.equal(en.body.spec.clusterIP, undefined);
    assert.equal(en.body.spec.clusterIPs, undefined);
    assert.equal(en.body.spec.ipFamilies, undefined);
    assert.equal(en.body.spec.externalTrafficPolicy, undefined);
    assert.equal(en.body.spec.ports[0].nodePort, undefined);
    // Both are free again.
    const other = await t.request('POST', svcPath, svc('takes', { type: 'NodePort', clusterIP: '10.0.0.12', ports: [{ port: 80, nodePort: 30400 }] }));
    assert.equal(other.status, 201, other.text);
    await t.request('DELETE', `${svcPath}/takes`);
    // Back to ClusterIP: a fresh IP, as on create.
    const back = en.body;
    back.spec.type = 'ClusterIP';
    delete back.spec.externalName;
    const cip = await t.request('PUT', `${svcPath}/flip`, back);
    assert.equal(cip.status, 200, cip.text);
    assert.match(cip.body.spec.clusterIP, /^10\.0\.0\.\d+$/);
    assert.deepEqual(cip.body.spec.clusterIPs, [cip.body.spec.clusterIP]);
    assert.deepEqual(cip.body.spec.ipFamilies, ['IPv4']);
    await t.request('DELETE', `${svcPath}/flip`);
  });

  it('rebuilds allocations from storage at start', async () => {
    // A second server on the same storage sees 10.0.0.7 (service fixed2) as taken.
    const t2 = await startTestServer({ storage });
    try {
      const taken = await t2.request('POST', svcPath, svc('again', { clusterIP: '10.0.0.7' }));
      assert.equal(taken.status, 422, taken.text);
      const fresh = await t2.request('POST', svcPath, svc('again2', { clusterIP: '10.0.0.8' }));
      assert.equal(fresh.status, 201, fresh.text);
    } finally {
      await t2.close();
    }
  });
});
