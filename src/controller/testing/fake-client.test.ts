import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import type { KubeObject, WatchEvent } from '../../api/types.js';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, StatusError, newStatus } from '../../client/errors.js';
import { FakeClock } from '../../util/clock/clock.js';
import { newFakeClient } from './fake-client.js';

function pod(name: string, labels: Record<string, string> = { app: 'web' }, ns = 'default'): KubeObject {
  return { metadata: { name, namespace: ns, labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
}

async function take(it: AsyncIterator<WatchEvent>, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('fake client', () => {
  it('creates objects with uid, resourceVersion, creationTimestamp, generation and kind', async () => {
    const clock = new FakeClock('2024-05-01T10:00:00Z');
    const fake = newFakeClient({ clock });
    const created = await fake.resource(GVR.pods).namespace('default').create(pod('a'));
    assert.equal(created.kind, 'Pod');
    assert.equal(created.apiVersion, 'v1');
    assert.ok(created.metadata?.uid);
    assert.equal(created.metadata?.creationTimestamp, '2024-05-01T10:00:00Z');
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.metadata?.resourceVersion, '1');
    assert.deepEqual(fake.actions().map((a) => [a.verb, a.resource, a.namespace, a.name]), [['create', 'pods', 'default', 'a']]);
  });

  it('fills names from generateName and rejects duplicates', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('ns');
    const a = await pods.create({ metadata: { generateName: 'web-' } });
    assert.match(a.metadata!.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    await assert.rejects(pods.create({ metadata: { name: a.metadata!.name } }), isAlreadyExists);
  });

  it('returns NotFound for missing objects and copies, never the stored object', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('default');
    await assert.rejects(pods.get('nope'), isNotFound);
    const [seeded] = fake.seed(GVR.pods, pod('a'));
    const got = await pods.get('a');
    got.metadata!.labels = { changed: 'yes' };
    assert.deepEqual(fake.stored(GVR.pods, 'default', 'a')?.metadata?.labels, { app: 'web' });
    assert.equal(seeded!.metadata?.name, 'a');
    assert.equal(fake.actions().length, 2, 'seed records no action');
  });

  it('rejects an update with a stale resourceVersion and keeps status out of plain updates', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const rs = fake.resource(GVR.replicaSets).namespace('default');
    const created = await rs.create({ metadata: { name: 'r' }, spec: { replicas: 1 } });
    const updated = await rs.update({ ...created, spec: { replicas: 2 }, status: { replicas: 9 } });
    assert.equal(updated.metadata?.generation, 2);
    assert.equal(updated.status, undefined);
    await assert.rejects(rs.update({ ...created, spec: { replicas: 3 } }), isConflict);
    const withStatus = await rs.updateStatus({ ...updated, status: { replicas: 2 } });
    assert.deepEqual(withStatus.status, { replicas: 2 });
    assert.equal(withStatus.metadata?.generation, 2, 'status writes do not bump generation');
    const same = await rs.update(withStatus);
    assert.equal(same.metadata?.resourceVersion, withStatus.metadata?.resourceVersion, 'a no-op update keeps the resourceVersion');
  });

  it('applies merge, json and strategic patches; a wrong uid in the patch is Invalid', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('default');
    const p = await pods.create({
      ...pod('a'),
      metadata: { name: 'a', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u1' }] },
    });
    await pods.patch('a', 'merge', { metadata: { labels: { tier: 'fe' } } });
    await pods.patch('a', 'json', [{ op: 'add', path: '/metadata/annotations', value: { a: 'b' } }]);
    await pods.patch('a', 'strategic', {
      metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u2', controller: true }], uid: p.metadata!.uid },
    });
    let got = fake.stored(GVR.pods, 'default', 'a')!;
    assert.deepEqual(got.metadata?.labels, { app: 'web', tier: 'fe' });
    assert.deepEqual(got.metadata?.annotations, { a: 'b' });
    assert.deepEqual(got.metadata?.ownerReferences?.map((r) => r.uid), ['u1', 'u2']);
    await pods.patch('a', 'strategic', { metadata: { ownerReferences: [{ $patch: 'delete', uid: 'u1' }], uid: p.metadata!.uid } });
    got = fake.stored(GVR.pods, 'default', 'a')!;
    assert.deepEqual(got.metadata?.ownerReferences?.map((r) => r.uid), ['u2']);
    await assert.rejects(pods.patch('a', 'strategic', { metadata: { labels: { x: 'y' }, uid: 'other' } }), isInvalid);
  });

  it('keeps objects with finalizers until the last finalizer is removed', async () => {
    const clock = new FakeClock('2024-01-01T00:00:00Z');
    const fake = newFakeClient({ clock });
    const cms = fake.resource(GVR.configMaps).namespace('default');
    await cms.create({ metadata: { name: 'c', finalizers: ['x/y'] } });
    const lingering = (await cms.delete('c')) as KubeObject;
    assert.equal(lingering.metadata?.deletionTimestamp, '2024-01-01T00:00:00Z');
    const current = await cms.get('c');
    await cms.update({ ...current, metadata: { ...current.metadata, finalizers: [] } });
    await assert.rejects(cms.get('c'), isNotFound);
  });

  it('checks delete preconditions', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('default');
    await pods.create(pod('a'));
    await assert.rejects(pods.delete('a', { preconditions: { uid: 'wrong' } }), isConflict);
    const status = await pods.delete('a');
    assert.equal((status as { status?: string }).status, 'Success');
  });

  it('lists by namespace, label selector and field selector, with paging', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    fake.seed(GVR.pods, pod('a', { app: 'web' }, 'n1'), pod('b', { app: 'db' }, 'n1'), pod('c', { app: 'web' }, 'n2'));
    const all = await fake.resource(GVR.pods).list();
    assert.deepEqual(all.items.map((p) => p.metadata?.name), ['a', 'b', 'c']);
    const web = await fake.resource(GVR.pods).list({ labelSelector: 'app in (web)' });
    assert.deepEqual(web.items.map((p) => p.metadata?.name), ['a', 'c']);
    const n1NotWeb = await fake.resource(GVR.pods).namespace('n1').list({ labelSelector: 'app!=web' });
    assert.deepEqual(n1NotWeb.items.map((p) => p.metadata?.name), ['b']);
    const byName = await fake.resource(GVR.pods).list({ fieldSelector: 'metadata.name=c' });
    assert.deepEqual(byName.items.map((p) => p.metadata?.name), ['c']);
    const page1 = await fake.resource(GVR.pods).list({ limit: 2 });
    assert.equal(page1.items.length, 2);
    const page2 = await fake.resource(GVR.pods).list({ limit: 2, continue: page1.metadata.continue });
    assert.deepEqual(page2.items.map((p) => p.metadata?.name), ['c']);
    assert.equal(page2.metadata.continue, undefined);
  });

  it('streams changes to watchers and replays from a resourceVersion', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('default');
    await pods.create(pod('a'));
    const list = await pods.list();
    await pods.create(pod('b'));
    const w = await pods.watch({ resourceVersion: list.metadata.resourceVersion, labelSelector: 'app=web' });
    const iter = w[Symbol.asyncIterator]();
    await pods.patch('a', 'merge', { metadata: { labels: { app: 'other' } } });
    await pods.delete('b');
    const events = await take(iter, 3);
    assert.deepEqual(
      events.map((e) => [e.type, (e.object as KubeObject).metadata?.name]),
      [
        ['ADDED', 'b'],
        ['DELETED', 'a'],
        ['DELETED', 'b'],
      ],
    );
    assert.equal(fake.watcherCount(GVR.pods), 1);
    w.stop();
    assert.equal((await iter.next()).done, true);
    assert.equal(fake.watcherCount(GVR.pods), 0);
  });

  it('starts a watch without resourceVersion with the current objects', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    fake.seed(GVR.pods, pod('a'));
    const ac = new AbortController();
    const w = await fake.resource(GVR.pods).namespace('default').watch({}, ac.signal);
    const iter = w[Symbol.asyncIterator]();
    const [first] = await take(iter, 1);
    assert.equal(first!.type, 'ADDED');
    ac.abort();
    assert.equal((await iter.next()).done, true);
  });

  it('lets reactors fail, answer or pass on calls, newest first', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('default');
    let calls = 0;
    fake.addReactor('create', 'pods', () => {
      calls++;
      return undefined;
    });
    fake.prependReactor('create', 'pods', (a) => {
      if (a.object?.metadata?.name === 'bad') throw new StatusError(newStatus(500, 'InternalError', 'boom'));
      return undefined;
    });
    await assert.rejects(pods.create(pod('bad')), /boom/);
    await pods.create(pod('good'));
    assert.equal(calls, 1);
    fake.prependReactor('get', '*', () => ({ metadata: { name: 'canned' } }));
    assert.equal((await pods.get('whatever')).metadata?.name, 'canned');
    assert.deepEqual(fake.actions().map((a) => a.verb), ['create', 'create', 'get']);
    assert.equal(fake.stored(GVR.pods, 'default', 'bad'), undefined);
  });

  it('matches subresource reactors only for that subresource', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const rs = fake.resource(GVR.replicaSets).namespace('default');
    const created = await rs.create({ metadata: { name: 'r' }, spec: { replicas: 1 } });
    fake.prependReactor('update', 'replicasets/status', () => {
      throw new StatusError(newStatus(409, 'Conflict', 'nope'));
    });
    await rs.update({ ...created, spec: { replicas: 2 } });
    await assert.rejects(rs.updateStatus({ ...created, status: { replicas: 1 } }), isConflict);
  });

  it('serves scale, binding and eviction subresources', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const deps = fake.resource(GVR.deployments).namespace('default');
    await deps.create({ metadata: { name: 'd' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } } } });
    const scale = await deps.getSubresource<KubeObject>('d', 'scale');
    assert.deepEqual(scale.status, { replicas: 0, selector: 'app=web' });
    await deps.updateSubresource('d', 'scale', { spec: { replicas: 5 } });
    assert.equal((fake.stored(GVR.deployments, 'default', 'd')!.spec as { replicas: number }).replicas, 5);
    const pods = fake.resource(GVR.pods).namespace('default');
    await pods.create(pod('p'));
    await pods.createSubresource('p', 'binding', { target: { kind: 'Node', name: 'n1' } });
    assert.equal((fake.stored(GVR.pods, 'default', 'p')!.spec as { nodeName: string }).nodeName, 'n1');
    await pods.createSubresource('p', 'eviction', {});
    assert.equal(fake.stored(GVR.pods, 'default', 'p'), undefined);
  });

  it('serves metadata-only views', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    fake.seed(GVR.pods, pod('a'));
    const m = await fake.metadata(GVR.pods).namespace('default').get('a');
    assert.equal(m.kind, 'PartialObjectMetadata');
    assert.equal(m.metadata.name, 'a');
    assert.equal((m as KubeObject).spec, undefined);
  });

  it('records the write options of creates, updates and patches, and marks calls of metadata views', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const pods = fake.resource(GVR.pods).namespace('default');
    await pods.create(pod('a'));
    await pods.create(pod('b'), { fieldManager: 'me', dryRun: 'All' });
    await pods.update(pod('a'), { fieldManager: 'me' });
    await pods.updateStatus(pod('a'), { fieldValidation: 'Strict' });
    await pods.patch('a', 'apply', { metadata: { labels: { x: 'y' } } }, { fieldManager: 'me', force: true, subresource: 'status' });
    await fake.metadata(GVR.pods).namespace('default').list();
    const a = fake.actions();
    assert.equal('writeOptions' in a[0]!, false, 'no options, no field');
    assert.deepEqual(a[1]!.writeOptions, { fieldManager: 'me', dryRun: 'All' });
    assert.deepEqual(a[2]!.writeOptions, { fieldManager: 'me' });
    assert.deepEqual(a[3]!.writeOptions, { fieldValidation: 'Strict' });
    assert.deepEqual(a[4]!.writeOptions, { fieldManager: 'me', force: true });
    assert.equal(a[4]!.subresource, 'status');
    assert.equal(a[4]!.metadataOnly, undefined);
    assert.equal(a[5]!.metadataOnly, true);
  });

  it('closes open watches on request, ending their iteration', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const w = await fake.resource(GVR.pods).watch({ resourceVersion: '0' });
    await fake.resource(GVR.configMaps).watch({ resourceVersion: '0' });
    const it = w[Symbol.asyncIterator]();
    const pending = it.next();
    assert.equal(fake.closeWatches(GVR.pods), 1);
    assert.equal((await pending).done, true);
    assert.equal(fake.watcherCount(GVR.pods), 0);
    assert.equal(fake.watcherCount(GVR.configMaps), 1);
    assert.equal(fake.closeWatches(), 1);
    assert.equal(fake.watcherCount(), 0);
  });
});
