import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './test-server.js';

describe('namespace lifecycle', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('creates the system namespaces at start', async () => {
    const names = (await t.request('GET', '/api/v1/namespaces')).body.items.map((x: any) => x.metadata.name);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.ok(names.includes(n), n);
    const def = (await t.request('GET', '/api/v1/namespaces/default')).body;
    assert.equal(def.status.phase, 'Active');
    assert.deepEqual(def.spec.finalizers, ['kubernetes']);
  });

  it('refuses to delete immortal namespaces with 403', async () => {
    const res = await t.request('DELETE', '/api/v1/namespaces/kube-system');
    assert.equal(res.status, 403);
    assert.equal(res.body.reason, 'Forbidden');
    assert.equal(res.body.message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });

  it('refuses creates in a missing namespace with 404', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/nowhere/configmaps', { metadata: { name: 'x' } });
    assert.equal(res.status, 404);
    assert.equal(res.body.message, 'namespaces "nowhere" not found');
  });

  it('marks a deleted namespace Terminating, refuses new content, and removes it once finalized', async () => {
    assert.equal((await t.request('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } })).status, 201);
    const del = await t.request('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.status, 200);
    assert.equal(del.body.status.phase, 'Terminating');
    assert.ok(del.body.metadata.deletionTimestamp);
    const refused = await t.request('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'late' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    assert.equal(refused.body.details.causes[0].reason, 'NamespaceTerminating');
    const again = await t.request('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(again.status, 200);
    assert.equal((await t.request('GET', '/api/v1/namespaces/doomed')).status, 200, 'still there: spec.finalizers remain');
    const ns = (await t.request('GET', '/api/v1/namespaces/doomed')).body;
    ns.spec.finalizers = [];
    const fin = await t.request('PUT', '/api/v1/namespaces/doomed/finalize', ns);
    assert.equal(fin.status, 200, fin.text);
    assert.equal((await t.request('GET', '/api/v1/namespaces/doomed')).status, 404);
  });

  it('keeps a terminating namespace through status updates while spec.finalizers remain', async () => {
    assert.equal((await t.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'held' } })).status, 201);
    assert.equal((await t.request('DELETE', '/api/v1/namespaces/held')).status, 200);
    const ns = (await t.request('GET', '/api/v1/namespaces/held')).body;
    ns.status.conditions = [{ type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: 'x', lastTransitionTime: '2024-01-01T00:00:00Z' }];
    const put = await t.request('PUT', '/api/v1/namespaces/held/status', ns);
    assert.equal(put.status, 200);
    const after = await t.request('GET', '/api/v1/namespaces/held');
    assert.equal(after.status, 200, 'a status update must not remove a namespace the namespace controller has not finalized');
    assert.equal(after.body.status.conditions[0].type, 'NamespaceContentRemaining');
  });
});
