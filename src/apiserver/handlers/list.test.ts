import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';

const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } });

describe('LIST', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', '/api/v1/namespaces', { metadata: { name: 'other' } });
    for (let i = 0; i < 5; i++) await t.request('POST', '/api/v1/namespaces/default/configmaps', cm(`c${i}`, { idx: String(i), tier: i % 2 ? 'odd' : 'even' }));
    await t.request('POST', '/api/v1/namespaces/other/configmaps', cm('o1', { tier: 'odd' }));
  });
  after(async () => {
    await t.close();
  });

  it('returns a ConfigMapList with the list resourceVersion', async () => {
    const res = await t.request('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'ConfigMapList');
    assert.equal(res.body.apiVersion, 'v1');
    assert.deepEqual(res.body.items.map((x: any) => x.metadata.name), ['c0', 'c1', 'c2', 'c3', 'c4']);
    // As kube-apiserver: list items of built-in kinds carry no apiVersion and kind; the first key is metadata.
    assert.equal(res.body.items[0].kind, undefined);
    assert.equal(res.body.items[0].apiVersion, undefined);
    assert.equal(Object.keys(res.body.items[0])[0], 'metadata');
    assert.ok(Number(res.body.metadata.resourceVersion) >= Number(res.body.items[4].metadata.resourceVersion));
  });

  it('lists across namespaces and filters by label selector', async () => {
    const all = await t.request('GET', '/api/v1/configmaps?labelSelector=tier%3Dodd');
    assert.deepEqual(all.body.items.map((x: any) => x.metadata.name).sort(), ['c1', 'c3', 'o1']);
    const set = await t.request('GET', `/api/v1/namespaces/default/configmaps?labelSelector=${encodeURIComponent('idx in (0,4),tier!=odd')}`);
    assert.deepEqual(set.body.items.map((x: any) => x.metadata.name), ['c0', 'c4']);
  });

  it('filters by field selector and refuses unsupported fields with 400', async () => {
    const res = await t.request('GET', '/api/v1/configmaps?fieldSelector=metadata.namespace%3Dother');
    assert.deepEqual(res.body.items.map((x: any) => x.metadata.name), ['o1']);
    const bad = await t.request('GET', '/api/v1/configmaps?fieldSelector=data.foo%3Dbar');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'field label not supported: data.foo');
  });

  it('refuses an unparsable label selector with 400', async () => {
    const bad = await t.request('GET', `/api/v1/configmaps?labelSelector=${encodeURIComponent('a in (')}`);
    assert.equal(bad.status, 400);
  });

  it('pages with limit and continue over one snapshot, with remainingItemCount', async () => {
    const p1 = await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=2');
    assert.deepEqual(p1.body.items.map((x: any) => x.metadata.name), ['c0', 'c1']);
    assert.equal(p1.body.metadata.remainingItemCount, 3);
    assert.ok(p1.body.metadata.continue);
    // A write between pages does not show up in later pages.
    await t.request('POST', '/api/v1/namespaces/default/configmaps', cm('c25'));
    const p2 = await t.request('GET', `/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    assert.deepEqual(p2.body.items.map((x: any) => x.metadata.name), ['c2', 'c3']);
    assert.equal(p2.body.metadata.resourceVersion, p1.body.metadata.resourceVersion);
    const p3 = await t.request('GET', `/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(p2.body.metadata.continue)}`);
    assert.deepEqual(p3.body.items.map((x: any) => x.metadata.name), ['c4']);
    assert.equal(p3.body.metadata.continue, undefined);
    await t.request('DELETE', '/api/v1/namespaces/default/configmaps/c25');
  });

  it('serves a list at resourceVersion 0 whole, ignoring limit, as kube-apiserver\'s watch cache does', async () => {
    const res = await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=2&resourceVersion=0');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.items.map((x: any) => x.metadata.name), ['c0', 'c1', 'c2', 'c3', 'c4']);
    assert.equal(res.body.metadata.continue, undefined);
    assert.equal(res.body.metadata.remainingItemCount, undefined);
  });

  it('answers 410 Expired for a continue token older than the compaction', async () => {
    const p1 = await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=2');
    await t.request('POST', '/api/v1/namespaces/default/configmaps', cm('late'));
    await t.storage.compact(t.storage.currentRevision());
    const p2 = await t.request('GET', `/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    assert.equal(p2.status, 410);
    assert.equal(p2.body.reason, 'Expired');
    assert.match(p2.body.message, /^The provided continue parameter is too old to display a consistent list result\./);
    assert.ok(p2.body.metadata.continue, 'an inconsistent continue token is offered');
    const p3 = await t.request('GET', `/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(p2.body.metadata.continue)}`);
    assert.equal(p3.status, 200);
    assert.deepEqual(p3.body.items.map((x: any) => x.metadata.name), ['c2', 'c3']);
    await t.request('DELETE', '/api/v1/namespaces/default/configmaps/late');
  });

  it('rejects a garbage continue token with 400', async () => {
    const res = await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=2&continue=garbage');
    assert.equal(res.status, 400);
  });

  it('serves resourceVersion with Exact match and refuses invalid combinations', async () => {
    const before = await t.request('GET', '/api/v1/namespaces/default/configmaps');
    const rv = before.body.metadata.resourceVersion;
    await t.request('POST', '/api/v1/namespaces/default/configmaps', cm('exact'));
    const exact = await t.request('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 200, exact.text);
    assert.equal(exact.body.metadata.resourceVersion, rv);
    assert.ok(!exact.body.items.some((x: any) => x.metadata.name === 'exact'));
    const newer = await t.request('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    assert.ok(newer.body.items.some((x: any) => x.metadata.name === 'exact'));
    const bad = await t.request('GET', '/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact');
    assert.equal(bad.status, 400);
    const old = await t.request('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=1&resourceVersionMatch=Exact`);
    assert.equal(old.status, 410);
  });

  it('returns metadata-only lists for as=PartialObjectMetadataList', async () => {
    const res = await t.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' });
    assert.equal(res.body.kind, 'PartialObjectMetadataList');
    assert.equal(res.body.apiVersion, 'meta.k8s.io/v1');
    assert.equal(res.body.items[0].kind, 'PartialObjectMetadata');
    assert.equal(res.body.items[0].data, undefined);
    assert.equal(res.body.items[0].metadata.name, 'c0');
    const one = await t.request('GET', '/api/v1/namespaces/default/configmaps/c0', undefined, { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' });
    assert.equal(one.body.kind, 'PartialObjectMetadata');
  });

  it('returns Tables with Name and Age for as=Table, honouring includeObject', async () => {
    const accept = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' };
    const res = await t.request('GET', '/api/v1/namespaces/default/configmaps', undefined, accept);
    assert.equal(res.body.kind, 'Table');
    assert.equal(res.body.apiVersion, 'meta.k8s.io/v1');
    const names = res.body.columnDefinitions.map((c: any) => c.name);
    assert.equal(names[0], 'Name');
    assert.ok(names.includes('Age'));
    assert.equal(res.body.rows[0].cells[0], 'c0');
    assert.equal(res.body.rows[0].object.kind, 'PartialObjectMetadata');
    const full = await t.request('GET', '/api/v1/namespaces/default/configmaps?includeObject=Object', undefined, accept);
    assert.equal(full.body.rows[0].object.kind, 'ConfigMap');
    const none = await t.request('GET', '/api/v1/namespaces/default/configmaps?includeObject=None', undefined, accept);
    assert.equal(none.body.rows[0].object, undefined);
  });
});
