import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './test-server.js';

describe('componentstatuses', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('reports etcd-0 and a component holding a fresh Lease as Healthy, with the deprecation warning', async () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'kube-scheduler', namespace: 'kube-system' },
      spec: { holderIdentity: 'host_x', leaseDurationSeconds: 15, renewTime: new Date().toISOString().replace('Z', '000Z') },
    };
    assert.equal((await t.request('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', lease)).status, 201);
    const res = await t.request('GET', '/api/v1/componentstatuses');
    assert.equal(res.status, 200);
    assert.equal(res.headers.warning, '299 - "v1 ComponentStatus is deprecated in v1.19+"');
    assert.equal(res.body.kind, 'ComponentStatusList');
    const byName = Object.fromEntries(res.body.items.map((i: any) => [i.metadata.name, i.conditions[0]]));
    assert.deepEqual(Object.keys(byName).sort(), ['controller-manager', 'etcd-0', 'scheduler']);
    assert.deepEqual(byName['etcd-0'], { type: 'Healthy', status: 'True', message: 'ok' });
    assert.deepEqual(byName.scheduler, { type: 'Healthy', status: 'True', message: 'ok' });
  });

  it('serves one component by name, 404 for others, and kubectl table columns', async () => {
    assert.equal((await t.request('GET', '/api/v1/componentstatuses/etcd-0')).body.metadata.name, 'etcd-0');
    assert.equal((await t.request('GET', '/api/v1/componentstatuses/nope')).status, 404);
    const table = (await t.request('GET', '/api/v1/componentstatuses/etcd-0', undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })).body;
    assert.deepEqual(table.columnDefinitions.map((c: any) => c.name), ['Name', 'Status', 'Message', 'Error']);
    assert.deepEqual(table.rows[0].cells, ['etcd-0', 'Healthy', 'ok', '']);
  });
});
