import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';

const path = '/apis/apps/v1/namespaces/default/deployments';

describe('PATCH', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', path, {
      metadata: { name: 'web', labels: { a: '1' } },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }, { name: 'side', image: 'busybox' }] } } },
    });
  });
  after(async () => {
    await t.close();
  });

  it('applies a merge patch and bumps generation for spec changes', async () => {
    const res = await t.request('PATCH', `${path}/web`, { spec: { replicas: 3 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.spec.replicas, 3);
    assert.equal(res.body.metadata.generation, 2);
  });

  it('applies a JSON patch', async () => {
    const res = await t.request('PATCH', `${path}/web`, [{ op: 'replace', path: '/metadata/labels/a', value: '2' }], { 'Content-Type': 'application/json-patch+json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.metadata.labels.a, '2');
  });

  it('applies a strategic merge patch that merges containers by name', async () => {
    const res = await t.request('PATCH', `${path}/web`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    const cs = res.body.spec.template.spec.containers;
    assert.deepEqual(cs.map((c: any) => [c.name, c.image]), [['c', 'nginx:1.27'], ['side', 'busybox']]);
  });

  it('patches status through the status subresource only', async () => {
    const res = await t.request('PATCH', `${path}/web/status`, { status: { replicas: 7 }, spec: { replicas: 50 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status.replicas, 7);
    assert.equal(res.body.spec.replicas, 3);
  });

  it('refuses a stale resourceVersion in a patch with 409 and unknown content types with 415', async () => {
    const stale = await t.request('PATCH', `${path}/web`, { metadata: { resourceVersion: '1' }, spec: { replicas: 4 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(stale.status, 409);
    const odd = await t.request('PATCH', `${path}/web`, { spec: {} }, { 'Content-Type': 'text/plain' });
    assert.equal(odd.status, 415);
  });

  it('answers 404 for a patch of a missing object', async () => {
    const res = await t.request('PATCH', `${path}/ghost`, { spec: { replicas: 1 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(res.status, 404);
  });

  it('patches the scale subresource', async () => {
    const res = await t.request('PATCH', `${path}/web/scale`, { spec: { replicas: 9 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.kind, 'Scale');
    assert.equal(res.body.spec.replicas, 9);
  });
});
