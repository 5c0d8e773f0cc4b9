import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './test-server.js';

const deploy = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } } },
});

describe('API handler: core verbs', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('creates an object with server-set metadata and answers 201', async () => {
    const res = await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('web'));
    assert.equal(res.status, 201, res.text);
    const m = res.body.metadata;
    assert.equal(res.body.kind, 'Deployment');
    assert.equal(res.body.apiVersion, 'apps/v1');
    assert.equal(m.namespace, 'default');
    assert.match(m.uid, /^[0-9a-f-]{36}$/);
    assert.match(m.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(m.generation, 1);
    assert.ok(Number(m.resourceVersion) > 0);
    const got = await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web');
    assert.equal(got.status, 200);
    assert.equal(got.body.metadata.uid, m.uid);
  });

  it('refuses a duplicate create with 409 AlreadyExists', async () => {
    const res = await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('web'));
    assert.equal(res.status, 409);
    assert.equal(res.body.reason, 'AlreadyExists');
    assert.equal(res.body.message, 'deployments.apps "web" already exists');
  });

  it('answers 404 with the upstream message for a missing object', async () => {
    const res = await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/nope');
    assert.equal(res.status, 404);
    assert.equal(res.body.kind, 'Status');
    assert.equal(res.body.message, 'deployments.apps "nope" not found');
    assert.deepEqual(res.body.details, { name: 'nope', group: 'apps', kind: 'deployments' });
  });

  it('bumps generation on spec changes but not on label changes, and keeps status on a main update', async () => {
    const cur = (await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).body;
    cur.metadata.labels = { x: 'y' };
    cur.status = { replicas: 42 };
    const u1 = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', cur);
    assert.equal(u1.status, 200, u1.text);
    assert.equal(u1.body.metadata.generation, 1);
    assert.equal(u1.body.status?.replicas, undefined);
    u1.body.spec.replicas = 3;
    const u2 = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', u1.body);
    assert.equal(u2.status, 200, u2.text);
    assert.equal(u2.body.metadata.generation, 2);
  });

  it('answers 409 Conflict with the upstream message on a stale resourceVersion', async () => {
    const cur = (await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).body;
    const stale = structuredClone(cur);
    cur.spec.replicas = 4;
    assert.equal((await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', cur)).status, 200);
    stale.spec.replicas = 5;
    const res = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', stale);
    assert.equal(res.status, 409);
    assert.equal(res.body.reason, 'Conflict');
    assert.equal(res.body.message, 'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again');
  });

  it('treats a PUT without resourceVersion as unconditional', async () => {
    const cur = (await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).body;
    delete cur.metadata.resourceVersion;
    cur.spec.replicas = 6;
    const res = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', cur);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.spec.replicas, 6);
  });

  it('does not write a no-op update', async () => {
    const cur = (await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).body;
    const res = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', cur);
    assert.equal(res.body.metadata.resourceVersion, cur.metadata.resourceVersion);
  });

  it('splits status: PUT /status changes status only', async () => {
    const cur = (await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).body;
    cur.status = { replicas: 2, observedGeneration: cur.metadata.generation };
    cur.spec.replicas = 99;
    const res = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web/status', cur);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status.replicas, 2);
    assert.equal(res.body.spec.replicas, 6);
  });

  it('answers 404 for PUT to a missing object of a kind without create-on-update', async () => {
    const res = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/ghost', deploy('ghost'));
    assert.equal(res.status, 404);
  });

  it('creates on PUT for kinds that allow it (endpoints)', async () => {
    const res = await t.request('PUT', '/api/v1/namespaces/default/endpoints/e1', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'e1' } });
    assert.equal(res.status, 201, res.text);
  });

  it('names objects from generateName', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'cfg-' }, data: { a: '1' } });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.metadata.name, /^cfg-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('rejects a namespace mismatch between body and URL with 400', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x', namespace: 'other' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'the namespace of the provided object does not match the namespace sent on the request');
  });

  it('rejects a name mismatch on PUT and a wrong kind with 400', async () => {
    const a = await t.request('PUT', '/api/v1/namespaces/default/configmaps/x', { metadata: { name: 'y' } });
    assert.equal(a.status, 400);
    const b = await t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'z' } });
    assert.equal(b.status, 400);
    const c = await t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'z' } });
    assert.equal(c.status, 400);
  });

  it('answers 422 Invalid with causes', async () => {
    const res = await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('bad', -1));
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.reason, 'Invalid');
    assert.match(res.body.message, /^Deployment\.apps "bad" is invalid: /);
    assert.ok(res.body.message.includes('spec.replicas: Invalid value: -1: must be greater than or equal to 0'), res.body.message);
    const cause = res.body.details.causes.find((c: any) => c.field === 'spec.replicas');
    assert.equal(cause.reason, 'FieldValueInvalid');
  });

  it('answers 400 for malformed JSON, 413 for oversized bodies, 404 for unknown paths and 405 for unsupported verbs', async () => {
    const bad = await t.request('POST', '/api/v1/namespaces/default/configmaps', '{"metadata": ', { 'Content-Type': 'application/json' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, 'BadRequest');
    const big = await t.request('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(3 * 1024 * 1024 + 10) } }));
    assert.equal(big.status, 413);
    assert.equal(big.body.reason, 'RequestEntityTooLarge');
    const unknown = await t.request('GET', '/apis/nope.example.com/v1/widgets');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.kind, 'Status');
    const odd = await t.request('GET', '/not/a/path');
    assert.equal(odd.status, 404);
    const post = await t.request('POST', '/api/v1/namespaces/default/configmaps/x', { metadata: { name: 'x' } });
    assert.equal(post.status, 405);
  });

  it('accepts YAML bodies', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/configmaps', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n', { 'Content-Type': 'application/yaml' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.k, 'v');
  });

  it('honours dryRun=All without writing', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'dry' } });
    assert.equal(res.status, 201);
    assert.equal((await t.request('GET', '/api/v1/namespaces/default/configmaps/dry')).status, 404);
  });
});
