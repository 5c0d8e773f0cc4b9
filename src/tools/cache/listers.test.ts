import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import type { Labels, Selector } from '../../api/labels-selector.js';
import { newLister } from './listers.js';
import { namespaceIndexers, newIndexer } from './store.js';

/** An equality selector, enough for these tests (api/labels.ts parses real ones). */
function sel(want: Record<string, string>): Selector {
  return {
    matches: (l: Labels | undefined) => Object.entries(want).every(([k, v]) => l?.[k] === v),
    empty: () => Object.keys(want).length === 0,
    toString: () => Object.entries(want).map(([k, v]) => `${k}=${v}`).join(','),
  };
}

function obj(ns: string, name: string, app?: string): KubeObject {
  return { metadata: { ...(ns ? { namespace: ns } : {}), name, ...(app ? { labels: { app } } : {}) } };
}

describe('listers', () => {
  const ix = newIndexer({ indexers: namespaceIndexers() });
  for (const o of [obj('x', 'a', 'web'), obj('x', 'b', 'db'), obj('y', 'c', 'web'), obj('', 'node1')]) ix.add(o);
  const lister = newLister(ix);
  const names = (os: KubeObject[]) => os.map((o) => o.metadata?.name).sort();

  it('lists everything, or what a selector matches, across namespaces', () => {
    assert.deepEqual(names(lister.list()), ['a', 'b', 'c', 'node1']);
    assert.deepEqual(names(lister.list(sel({ app: 'web' }))), ['a', 'c']);
    assert.deepEqual(names(lister.list(sel({}))), ['a', 'b', 'c', 'node1']);
  });

  it('gets cluster-scoped objects by name', () => {
    assert.equal(lister.get('node1')?.metadata?.name, 'node1');
    assert.equal(lister.get('a'), undefined);
  });

  it('lists and gets within one namespace', () => {
    assert.deepEqual(names(lister.namespace('x').list()), ['a', 'b']);
    assert.deepEqual(names(lister.namespace('x').list(sel({ app: 'web' }))), ['a']);
    assert.equal(lister.namespace('y').get('c')?.metadata?.name, 'c');
    assert.equal(lister.namespace('y').get('a'), undefined);
    assert.deepEqual(lister.namespace('none').list(), []);
  });

  it('works without a namespace index by scanning', () => {
    const plain = newIndexer();
    plain.add(obj('x', 'a'));
    plain.add(obj('y', 'b'));
    assert.deepEqual(names(newLister(plain).namespace('y').list()), ['b']);
  });
});
