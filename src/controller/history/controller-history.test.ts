import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import { selectorFromSet } from '../../api/labels.js';
import { newIndexer, namespaceIndexers } from '../../tools/cache/store.js';
import { newLister } from '../../tools/cache/listers.js';
import { FakeClock } from '../../util/clock/clock.js';
import { newFakeClient } from '../testing/fake-client.js';
import {
  REVISION_HASH_LABEL,
  controllerRevisionName,
  equalRevision,
  hashControllerRevision,
  newControllerRevision,
  newHistory,
  nextRevision,
  revisionsToPrune,
  sortControllerRevisions,
  templateFromRevision,
  templatePatch,
  type Revision,
} from './controller-history.js';

const SS_KIND = { group: 'apps', version: 'v1', kind: 'StatefulSet' };
const parent = { metadata: { name: 'web', namespace: 'ns', uid: 'uid-web' } };
const template = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });

describe('controller revision hashing', () => {
  it('gives equal templates equal hashes and names, different templates different ones', () => {
    const a = newControllerRevision(parent, SS_KIND, { app: 'web' }, templatePatch(template('nginx:1')), 1);
    const b = newControllerRevision(parent, SS_KIND, { app: 'web' }, templatePatch(template('nginx:1')), 7);
    const c = newControllerRevision(parent, SS_KIND, { app: 'web' }, templatePatch(template('nginx:2')), 1);
    assert.equal(a.metadata?.name, b.metadata?.name);
    assert.notEqual(a.metadata?.name, c.metadata?.name);
    assert.match(a.metadata!.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(a.metadata?.labels?.['controller.kubernetes.io/hash'], a.metadata!.name!.slice(4), 'the revision hash label of history.NewControllerRevision');
    assert.ok(equalRevision(a, b));
    assert.ok(!equalRevision(a, c));
  });

  it('mixes the collision count into the hash', () => {
    const data = { data: templatePatch(template('nginx:1')) };
    assert.equal(hashControllerRevision(data), hashControllerRevision({ data: templatePatch(template('nginx:1')) }));
    assert.notEqual(hashControllerRevision(data), hashControllerRevision(data, 1));
    assert.notEqual(hashControllerRevision(data, 1), hashControllerRevision(data, 2));
  });

  it('stores the template as a replace patch and reads it back', () => {
    const patch = templatePatch(template('nginx:1'));
    assert.equal(patch.spec.template['$patch'], 'replace');
    assert.deepEqual(templateFromRevision({ data: patch as never }), template('nginx:1'));
  });

  it("writes the patch with keys sorted at every level, as upstream's getPatch (json.Marshal of a map)", () => {
    const t = { spec: { containers: [{ name: 'c', image: 'i', args: ['z', 'a'] }], restartPolicy: 'Always' }, metadata: { labels: { b: '1', a: '2' }, creationTimestamp: null } };
    assert.equal(
      JSON.stringify(templatePatch(t)),
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"a":"2","b":"1"}},"spec":{"containers":[{"args":["z","a"],"image":"i","name":"c"}],"restartPolicy":"Always"}}}}',
    );
  });

  it('cuts long prefixes to 223 characters', () => {
    assert.equal(controllerRevisionName('x'.repeat(300), 'abc').length, 223 + 4);
  });

  it('orders revisions by number and prunes the oldest unused ones beyond the limit', () => {
    const mk = (name: string, revision: number): Revision => ({ metadata: { name, creationTimestamp: '2024-01-01T00:00:00Z' }, revision });
    const revs = [mk('c', 3), mk('a', 1), mk('b', 2), mk('d', 4)];
    assert.deepEqual(sortControllerRevisions([...revs]).map((r) => r.metadata?.name), ['a', 'b', 'c', 'd']);
    assert.equal(nextRevision(revs), 5);
    assert.equal(nextRevision([]), 1);
    const pruned = revisionsToPrune(revs, 1, (r) => r.metadata?.name === 'a' || r.metadata?.name === 'd');
    assert.deepEqual(pruned.map((r) => r.metadata?.name), ['b']);
    assert.deepEqual(revisionsToPrune(revs, 10, () => false), []);
  });
});

describe('history', () => {
  function setup() {
    const fake = newFakeClient({ clock: new FakeClock() });
    const indexer = newIndexer<Revision>({ indexers: namespaceIndexers() });
    return { fake, indexer, history: newHistory(fake, newLister(indexer)) };
  }

  it('creates a revision and returns the existing one when an equal revision holds the name', async () => {
    const { fake, indexer, history } = setup();
    const rev = newControllerRevision(parent, SS_KIND, { app: 'web' }, templatePatch(template('nginx:1')), 1);
    const cc = { value: 0 };
    const created = await history.createControllerRevision(parent, rev, cc);
    indexer.add(created);
    const again = await history.createControllerRevision(parent, rev, cc);
    assert.equal(again.metadata?.uid, created.metadata?.uid);
    assert.equal(cc.value, 0);
    assert.equal(fake.storedList(GVR.controllerRevisions, 'ns').length, 1);
  });

  it('bumps the collision count when a different revision holds the hashed name', async () => {
    const { fake, indexer, history } = setup();
    const rev = newControllerRevision(parent, SS_KIND, { app: 'web' }, templatePatch(template('nginx:1')), 1);
    const name = controllerRevisionName('web', hashControllerRevision(rev, 0));
    const [squatter] = fake.seed<Revision>(GVR.controllerRevisions, {
      metadata: { name, namespace: 'ns', labels: { [REVISION_HASH_LABEL]: 'other' } },
      data: { other: true } as never,
      revision: 1,
    });
    indexer.add(squatter!);
    const cc = { value: 0 };
    const created = await history.createControllerRevision(parent, rev, cc);
    assert.equal(cc.value, 1);
    assert.equal(created.metadata?.name, controllerRevisionName('web', hashControllerRevision(rev, 1)));
  });

  it('lists owned and orphaned revisions but not those of another controller', () => {
    const { indexer, history } = setup();
    const own = (name: string, uid?: string): Revision => ({
      metadata: {
        name,
        namespace: 'ns',
        labels: { app: 'web' },
        ...(uid ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x', uid, controller: true }] } : {}),
      },
      revision: 1,
    });
    indexer.add(own('mine', 'uid-web'));
    indexer.add(own('orphan'));
    indexer.add(own('theirs', 'uid-other'));
    const names = history.listControllerRevisions(parent, selectorFromSet({ app: 'web' })).map((r) => r.metadata?.name).sort();
    assert.deepEqual(names, ['mine', 'orphan']);
  });

  it('updates the revision number, adopts and releases', async () => {
    const { fake, history } = setup();
    const [rev] = fake.seed<Revision>(GVR.controllerRevisions, { metadata: { name: 'web-1', namespace: 'ns', labels: { app: 'web' } }, revision: 1 });
    const updated = await history.updateControllerRevision(rev!, 5);
    assert.equal(updated.revision, 5);
    const adopted = await history.adoptControllerRevision(parent, SS_KIND, updated);
    assert.equal(adopted.metadata?.ownerReferences?.[0]?.uid, 'uid-web');
    const released = await history.releaseControllerRevision(parent, adopted);
    assert.equal(released?.metadata?.ownerReferences?.length ?? 0, 0);
    await assert.rejects(history.adoptControllerRevision({ metadata: { name: 'o', uid: 'u2' } }, SS_KIND, adopted));
  });
});
