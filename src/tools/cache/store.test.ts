import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { DeletedFinalStateUnknown } from './interfaces.js';
import { NAMESPACE_INDEX, metaNamespaceIndexFunc, metaNamespaceKeyFunc, newIndexer, newStore } from './store.js';

function obj(ns: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { namespace: ns || undefined, name, labels } };
}
const byApp = (o: KubeObject) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []);
const byTier = (o: KubeObject) => (o.metadata?.labels?.tiers ? o.metadata.labels.tiers.split(',') : []);

describe('store', () => {
  it('keys objects by namespace/name and cluster-scoped ones by name', () => {
    assert.equal(metaNamespaceKeyFunc(obj('ns', 'a')), 'ns/a');
    assert.equal(metaNamespaceKeyFunc(obj('', 'node1')), 'node1');
    assert.equal(metaNamespaceKeyFunc(new DeletedFinalStateUnknown('x/y', obj('x', 'y'))), 'x/y');
    assert.deepEqual(metaNamespaceIndexFunc(obj('', 'n')), ['']);
  });

  it('adds, updates, gets, lists and deletes objects', () => {
    const s = newStore();
    s.add(obj('a', 'x'));
    s.add(obj('a', 'y'));
    const x2 = { ...obj('a', 'x'), spec: 2 };
    s.update(x2);
    assert.equal(s.getByKey('a/x'), x2);
    assert.equal(s.get(obj('a', 'x')), x2);
    assert.deepEqual(s.listKeys().sort(), ['a/x', 'a/y']);
    s.delete(obj('a', 'y'));
    assert.deepEqual(s.listKeys(), ['a/x']);
    assert.equal(s.list().length, 1);
    s.delete(obj('a', 'missing'));
    assert.equal(s.list().length, 1);
  });

  it('replace swaps the whole content', () => {
    const s = newStore();
    s.add(obj('a', 'x'));
    s.replace([obj('b', 'y'), obj('b', 'z')], '10');
    assert.deepEqual(s.listKeys().sort(), ['b/y', 'b/z']);
  });

  it('deletes through a DeletedFinalStateUnknown tombstone', () => {
    const s = newIndexer({ indexers: { [NAMESPACE_INDEX]: metaNamespaceIndexFunc } });
    s.add(obj('a', 'x'));
    s.delete(new DeletedFinalStateUnknown('a/x', obj('a', 'x')) as unknown as KubeObject);
    assert.equal(s.getByKey('a/x'), undefined);
    assert.deepEqual(s.listIndexFuncValues(NAMESPACE_INDEX), []);
  });
});

describe('indexer', () => {
  it('keeps byIndex, indexKeys and listIndexFuncValues right after updates and deletes', () => {
    const ix = newIndexer({ indexers: { app: byApp } });
    ix.add(obj('ns', 'a', { app: 'web' }));
    ix.add(obj('ns', 'b', { app: 'web' }));
    ix.add(obj('ns', 'c', { app: 'db' }));
    assert.deepEqual(ix.indexKeys('app', 'web').sort(), ['ns/a', 'ns/b']);
    assert.deepEqual(ix.listIndexFuncValues('app').sort(), ['db', 'web']);

    ix.update(obj('ns', 'b', { app: 'db' }));
    assert.deepEqual(ix.indexKeys('app', 'web'), ['ns/a']);
    assert.deepEqual(ix.indexKeys('app', 'db').sort(), ['ns/b', 'ns/c']);

    ix.delete(obj('ns', 'a'));
    assert.deepEqual(ix.indexKeys('app', 'web'), []);
    assert.deepEqual(ix.listIndexFuncValues('app'), ['db']);
    assert.deepEqual(
      ix.byIndex('app', 'db').map((o) => o.metadata?.name).sort(),
      ['b', 'c'],
    );

    ix.update(obj('ns', 'c', {}));
    assert.deepEqual(ix.indexKeys('app', 'db'), ['ns/b']);
  });

  it('files an object under several values and finds objects sharing any of them', () => {
    const ix = newIndexer({ indexers: { tier: byTier } });
    ix.add(obj('n', 'a', { tiers: 'x,y' }));
    ix.add(obj('n', 'b', { tiers: 'y,z' }));
    ix.add(obj('n', 'c', { tiers: 'q' }));
    const probe = obj('n', 'p', { tiers: 'x,z' });
    assert.deepEqual(ix.index('tier', probe).map((o) => o.metadata?.name).sort(), ['a', 'b']);
    ix.update(obj('n', 'a', { tiers: 'y' }));
    assert.deepEqual(ix.indexKeys('tier', 'x'), []);
    assert.deepEqual(ix.indexKeys('tier', 'y').sort(), ['n/a', 'n/b']);
  });

  it('rebuilds indices from the new content on replace', () => {
    const ix = newIndexer({ indexers: { app: byApp } });
    ix.add(obj('ns', 'a', { app: 'web' }));
    ix.replace([obj('ns', 'b', { app: 'db' })], '5');
    assert.deepEqual(ix.listIndexFuncValues('app'), ['db']);
    assert.deepEqual(ix.indexKeys('app', 'web'), []);
  });

  it('indexes existing objects when an indexer is added later', () => {
    const ix = newIndexer();
    ix.add(obj('ns1', 'a', { app: 'web' }));
    ix.add(obj('ns2', 'b', { app: 'web' }));
    ix.addIndexers({ app: byApp, [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
    assert.deepEqual(ix.indexKeys('app', 'web').sort(), ['ns1/a', 'ns2/b']);
    assert.deepEqual(ix.byIndex(NAMESPACE_INDEX, 'ns2').map((o) => o.metadata?.name), ['b']);
    assert.deepEqual(Object.keys(ix.getIndexers()).sort(), ['app', 'namespace']);
    assert.throws(() => ix.addIndexers({ app: byApp }), /conflict/);
  });

  it('throws for an index that does not exist', () => {
    const ix = newIndexer();
    assert.throws(() => ix.byIndex('nope', 'x'), /does not exist/);
    assert.throws(() => ix.indexKeys('nope', 'x'), /does not exist/);
  });
});
