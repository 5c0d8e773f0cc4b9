import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock/clock.js';
import { startTestServer, type TestServer } from './test-server.js';

const cmPath = '/api/v1/namespaces/default/configmaps';
const podPath = '/api/v1/namespaces/default/pods';
const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }], terminationGracePeriodSeconds: 30, ...extra },
});

describe('deletion', () => {
  let t: TestServer;
  const clock = new FakeClock('2024-01-01T00:00:00Z');
  before(async () => {
    t = await startTestServer({ clock });
    await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } });
  });
  after(async () => {
    await t.close();
  });

  it('deletes at once and answers a success Status with details', async () => {
    await t.request('POST', cmPath, { metadata: { name: 'd1' } });
    const res = await t.request('DELETE', `${cmPath}/d1`);
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'Status');
    assert.equal(res.body.status, 'Success');
    assert.equal(res.body.details.name, 'd1');
    assert.equal((await t.request('GET', `${cmPath}/d1`)).status, 404);
    assert.equal((await t.request('DELETE', `${cmPath}/d1`)).status, 404);
  });

  it('checks uid and resourceVersion preconditions with 409', async () => {
    const created = (await t.request('POST', cmPath, { metadata: { name: 'd2' } })).body;
    const bad = await t.request('DELETE', `${cmPath}/d2`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } });
    assert.equal(bad.status, 409);
    assert.match(bad.body.message, /Precondition failed: UID in precondition: nope/);
    const badRv = await t.request('DELETE', `${cmPath}/d2`, { preconditions: { resourceVersion: '1' } });
    assert.equal(badRv.status, 409);
    const ok = await t.request('DELETE', `${cmPath}/d2`, { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } });
    assert.equal(ok.status, 200);
  });

  it('keeps an object with finalizers until the last one is removed by an update', async () => {
    await t.request('POST', cmPath, { metadata: { name: 'fin', finalizers: ['example.com/x'] } });
    const res = await t.request('DELETE', `${cmPath}/fin`);
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'ConfigMap');
    assert.equal(res.body.metadata.deletionTimestamp, '2024-01-01T00:00:00Z');
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 0);
    const cur = (await t.request('GET', `${cmPath}/fin`)).body;
    cur.metadata.finalizers = ['example.com/x', 'example.com/new'];
    const add = await t.request('PUT', `${cmPath}/fin`, cur);
    assert.equal(add.status, 422, 'no new finalizers on a deleting object');
    cur.metadata.finalizers = [];
    const upd = await t.request('PUT', `${cmPath}/fin`, cur);
    assert.equal(upd.status, 200, upd.text);
    assert.equal((await t.request('GET', `${cmPath}/fin`)).status, 404);
  });

  it('adds orphan and foregroundDeletion finalizers for the propagation policies', async () => {
    await t.request('POST', cmPath, { metadata: { name: 'orph' } });
    const o = await t.request('DELETE', `${cmPath}/orph`, { propagationPolicy: 'Orphan' });
    assert.deepEqual(o.body.metadata.finalizers, ['orphan']);
    await t.request('POST', cmPath, { metadata: { name: 'fg' } });
    const f = await t.request('DELETE', `${cmPath}/fg?propagationPolicy=Foreground`);
    assert.deepEqual(f.body.metadata.finalizers, ['foregroundDeletion']);
    await t.request('POST', cmPath, { metadata: { name: 'legacy' } });
    const l = await t.request('DELETE', `${cmPath}/legacy`, { orphanDependents: false });
    assert.equal(l.status, 200, 'deleted at once with no dependents finalizer');
    await t.request('POST', cmPath, { metadata: { name: 'bg', finalizers: ['orphan'] } });
    const b = await t.request('DELETE', `${cmPath}/bg`, { propagationPolicy: 'Background' });
    assert.equal(b.body.kind, 'Status', 'background removes the orphan finalizer and deletes');
  });

  it('deletes unbound pods at once', async () => {
    assert.equal((await t.request('POST', podPath, pod('unbound'))).status, 201);
    const res = await t.request('DELETE', `${podPath}/unbound`);
    assert.equal(res.status, 200);
    assert.equal((await t.request('GET', `${podPath}/unbound`)).status, 404);
  });

  it('deletes bound pods gracefully; a later delete may shorten but not lengthen the grace; grace 0 deletes', async () => {
    assert.equal((await t.request('POST', podPath, pod('bound', { nodeName: 'n1' }))).status, 201);
    const d1 = await t.request('DELETE', `${podPath}/bound`);
    assert.equal(d1.status, 200);
    assert.equal(d1.body.metadata.deletionGracePeriodSeconds, 30);
    assert.equal(d1.body.metadata.deletionTimestamp, '2024-01-01T00:00:30Z');
    const d2 = await t.request('DELETE', `${podPath}/bound`, { gracePeriodSeconds: 60 });
    assert.equal(d2.body.metadata.deletionGracePeriodSeconds, 30);
    const d3 = await t.request('DELETE', `${podPath}/bound`, { gracePeriodSeconds: 10 });
    assert.equal(d3.body.metadata.deletionGracePeriodSeconds, 10);
    assert.equal(d3.body.metadata.deletionTimestamp, '2024-01-01T00:00:10Z');
    const d4 = await t.request('DELETE', `${podPath}/bound?gracePeriodSeconds=0`);
    assert.equal(d4.status, 200);
    assert.equal((await t.request('GET', `${podPath}/bound`)).status, 404);
  });

  it('caps the deletion time of a huge grace period at the latest time RFC 3339 writes', async () => {
    assert.equal((await t.request('POST', podPath, pod('forever', { nodeName: 'n1' }))).status, 201);
    const d = await t.request('DELETE', `${podPath}/forever?gracePeriodSeconds=9223372036854775807`);
    assert.equal(d.status, 200, d.text);
    assert.equal(d.body.metadata.deletionTimestamp, '9999-12-31T23:59:59Z');
    const bad = await t.request('DELETE', `${podPath}/forever?gracePeriodSeconds=1.5`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'strconv.ParseInt: parsing "1.5": invalid syntax');
  });

  it('deletes terminal pods at once', async () => {
    await t.request('POST', podPath, pod('done', { nodeName: 'n1' }));
    const cur = (await t.request('GET', `${podPath}/done`)).body;
    cur.status = { ...cur.status, phase: 'Succeeded' };
    assert.equal((await t.request('PUT', `${podPath}/done/status`, cur)).status, 200);
    await t.request('DELETE', `${podPath}/done`);
    assert.equal((await t.request('GET', `${podPath}/done`)).status, 404);
  });

  it('deletes a collection selected by labels', async () => {
    for (const n of ['a', 'b', 'c']) await t.request('POST', cmPath, { metadata: { name: `col-${n}`, labels: { grp: n === 'c' ? 'keep' : 'drop' } } });
    const res = await t.request('DELETE', `${cmPath}?labelSelector=grp%3Ddrop`);
    assert.equal(res.status, 200);
    assert.equal(res.body.items.length, 2);
    const left = (await t.request('GET', `${cmPath}?labelSelector=grp`)).body.items.map((x: any) => x.metadata.name);
    assert.deepEqual(left, ['col-c']);
  });

  it('honours dryRun on delete', async () => {
    await t.request('POST', cmPath, { metadata: { name: 'dry' } });
    assert.equal((await t.request('DELETE', `${cmPath}/dry?dryRun=All`)).status, 200);
    assert.equal((await t.request('GET', `${cmPath}/dry`)).status, 200);
  });
});
