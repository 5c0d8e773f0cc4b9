import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/types.js';
import { newIndexer } from '../tools/cache/store.js';
import { CONTROLLER_UID_INDEX, ensureControllerIndex, ownedBy, ownedOrOrphaned } from './controller-index.js';

const pod = (name: string, ns: string, controller?: string, other?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: ns,
    ownerReferences: [
      ...(controller ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: controller, controller: true }] : []),
      ...(other ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: other }] : []),
    ],
  },
});

describe('controller index', () => {
  it('files objects by their controller uid and orphans by namespace, and follows updates', () => {
    const indexer = newIndexer<KubeObject>();
    const informer = { getIndexer: () => indexer, addIndexers: (i: Record<string, (o: KubeObject) => string[]>) => indexer.addIndexers(i) };
    ensureControllerIndex(informer);
    ensureControllerIndex(informer); // a second controller on the same shared informer
    assert.ok(CONTROLLER_UID_INDEX in indexer.getIndexers());
    indexer.add(pod('a', 'ns', 'u1'));
    indexer.add(pod('b', 'ns', 'u2'));
    indexer.add(pod('c', 'ns', undefined, 'u1')); // owned, but not controlled, by u1: an orphan
    indexer.add(pod('d', 'other'));
    indexer.add(pod('e', 'other', 'u1')); // (invalid) cross-namespace reference
    const names = (xs: KubeObject[]) => xs.map((x) => x.metadata!.name).sort();
    assert.deepEqual(names(ownedBy(indexer, 'ns', 'u1')), ['a']);
    assert.deepEqual(names(ownedOrOrphaned(indexer, 'ns', 'u1')), ['a', 'c']);
    assert.deepEqual(names(ownedOrOrphaned(indexer, 'other', 'u2')), ['d']);
    // Adopted by u1: no longer an orphan.
    indexer.update(pod('c', 'ns', 'u1'));
    assert.deepEqual(names(ownedOrOrphaned(indexer, 'ns', 'u1')), ['a', 'c']);
    assert.deepEqual(names(ownedOrOrphaned(indexer, 'ns', 'u9')), []);
  });
});
