import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OwnerReference } from '../../api/types.js';
import { newGraph, referencesDiff, type GraphNode, type ObservedObject } from './graph.js';

function harness() {
  const deletes: string[] = [];
  const orphans: string[] = [];
  const g = newGraph({
    attemptToDelete: (n: GraphNode) => deletes.push(n.identity.uid),
    attemptToOrphan: (n: GraphNode) => orphans.push(n.identity.uid),
  });
  return { g, deletes, orphans };
}

const ref = (uid: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${uid}`, uid, ...extra });

function obj(uid: string, owners: OwnerReference[] = [], extra: Partial<ObservedObject> = {}): ObservedObject {
  return { identity: { apiVersion: 'v1', kind: 'Pod', name: `p-${uid}`, uid, namespace: 'ns' }, owners, finalizers: [], ...extra };
}
function rs(uid: string, extra: Partial<ObservedObject> = {}): ObservedObject {
  return { identity: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${uid}`, uid, namespace: 'ns' }, owners: [], finalizers: [], ...extra };
}

describe('garbage collector graph', () => {
  it('creates a virtual owner for an unknown owner reference and queues it for verification', () => {
    const { g, deletes } = harness();
    g.processEvent({ type: 'add', object: obj('p1', [ref('o1')]) });
    const owner = g.node('o1');
    assert.ok(owner);
    assert.equal(owner.observed, false);
    assert.equal(owner.identity.namespace, 'ns');
    assert.deepEqual([...owner.dependents].map((d) => d.identity.uid), ['p1']);
    assert.deepEqual(deletes, ['o1']);
  });

  it('turns a virtual owner into an observed node when its object arrives, keeping dependents', () => {
    const { g, deletes } = harness();
    g.processEvent({ type: 'add', object: obj('p1', [ref('o1')]) });
    g.processEvent({ type: 'add', object: rs('o1') });
    const owner = g.node('o1')!;
    assert.equal(owner.observed, true);
    assert.equal(owner.dependents.size, 1);
    assert.equal(g.size(), 2);
    assert.deepEqual(deletes, ['o1']);
  });

  it('removes a deleted owner and queues its dependents', () => {
    const { g, deletes } = harness();
    g.processEvent({ type: 'add', object: rs('o1') });
    g.processEvent({ type: 'add', object: obj('p1', [ref('o1')]) });
    g.processEvent({ type: 'add', object: obj('p2', [ref('o1')]) });
    g.processEvent({ type: 'delete', object: rs('o1') });
    assert.equal(g.node('o1'), undefined);
    assert.deepEqual(deletes.sort(), ['p1', 'p2']);
  });

  it('unlinks a dependent when an update drops its owner reference', () => {
    const { g } = harness();
    g.processEvent({ type: 'add', object: rs('o1') });
    g.processEvent({ type: 'add', object: rs('o2') });
    g.processEvent({ type: 'add', object: obj('p1', [ref('o1')]) });
    g.processEvent({ type: 'update', object: obj('p1', [ref('o2')]), old: obj('p1', [ref('o1')]) });
    assert.equal(g.node('o1')!.dependents.size, 0);
    assert.equal(g.node('o2')!.dependents.size, 1);
    assert.deepEqual(g.node('p1')!.owners.map((r) => r.uid), ['o2']);
  });

  it('marks an owner deleting in foreground and queues it with its dependents', () => {
    const { g, deletes } = harness();
    g.processEvent({ type: 'add', object: rs('o1') });
    g.processEvent({ type: 'add', object: obj('p1', [ref('o1', { blockOwnerDeletion: true })]) });
    const deleting = rs('o1', { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] });
    g.processEvent({ type: 'update', object: deleting, old: rs('o1') });
    const owner = g.node('o1')!;
    assert.equal(owner.deletingDependents, true);
    assert.equal(owner.beingDeleted, true);
    assert.deepEqual(deletes, ['p1', 'o1']);
    assert.deepEqual(owner.blockingDependents().map((d) => d.identity.uid), ['p1']);
  });

  it('queues a foreground owner again when a blocking dependent stops blocking or goes away', () => {
    const { g, deletes } = harness();
    const deleting = rs('o1', { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] });
    g.processEvent({ type: 'add', object: deleting });
    g.processEvent({ type: 'add', object: obj('p1', [ref('o1', { blockOwnerDeletion: true })]) });
    g.processEvent({ type: 'add', object: obj('p2', [ref('o1', { blockOwnerDeletion: true })]) });
    deletes.length = 0;
    g.processEvent({ type: 'update', object: obj('p1', [ref('o1', { blockOwnerDeletion: false })]), old: obj('p1', [ref('o1', { blockOwnerDeletion: true })]) });
    assert.deepEqual(deletes, ['o1']);
    g.processEvent({ type: 'delete', object: obj('p2', [ref('o1', { blockOwnerDeletion: true })]) });
    assert.deepEqual(deletes, ['o1', 'o1']);
    assert.deepEqual(g.node('o1')!.blockingDependents(), []);
  });

  it('queues an owner with the orphan finalizer for orphaning, also when first seen that way', () => {
    const { g, orphans } = harness();
    g.processEvent({ type: 'add', object: rs('o1', { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['orphan'] }) });
    assert.deepEqual(orphans, ['o1']);
  });

  it('links an ownership cycle both ways and queues the survivor when one side is deleted', () => {
    const { g, deletes } = harness();
    g.processEvent({ type: 'add', object: rs('a', { owners: [ref('b')] }) });
    g.processEvent({ type: 'add', object: rs('b', { owners: [ref('a')] }) });
    assert.equal(g.node('a')!.dependents.size, 1);
    assert.equal(g.node('b')!.dependents.size, 1);
    deletes.length = 0;
    g.processEvent({ type: 'delete', object: rs('a', { owners: [ref('b')] }) });
    assert.deepEqual(deletes, ['b']);
    assert.equal(g.node('b')!.dependents.size, 0);
  });

  it('drops a virtual owner verified absent and queues its dependents; ignores it for an observed node with matching refs', () => {
    const { g, deletes } = harness();
    g.processEvent({ type: 'add', object: obj('p1', [ref('ghost')]) });
    deletes.length = 0;
    g.processEvent({ type: 'virtualDelete', identity: g.node('ghost')!.identity });
    assert.equal(g.node('ghost'), undefined);
    assert.deepEqual(deletes, ['p1']);

    g.processEvent({ type: 'add', object: rs('o1') });
    g.processEvent({ type: 'add', object: obj('p2', [ref('o1')]) });
    g.processEvent({ type: 'add', object: obj('p3', [ref('o1', { kind: 'Deployment' })]) });
    deletes.length = 0;
    g.processEvent({ type: 'virtualDelete', identity: g.node('o1')!.identity });
    assert.ok(g.node('o1'));
    assert.deepEqual(deletes, ['p3']);
  });

  it('diffs owner references by uid', () => {
    const d = referencesDiff([ref('a'), ref('b', { blockOwnerDeletion: true })], [ref('b'), ref('c')]);
    assert.deepEqual(d.added.map((r) => r.uid), ['c']);
    assert.deepEqual(d.removed.map((r) => r.uid), ['a']);
    assert.deepEqual(d.changed.map((c) => c.now.uid), ['b']);
  });
});
