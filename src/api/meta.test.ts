import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addFinalizer, copy, getControllerOf, hasFinalizer, isBeingDeleted, isControlledBy, newControllerRef, objectReference, removeFinalizer } from './meta.js';
import type { KubeObject } from './types.js';

const rs: KubeObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-abc', namespace: 'default', uid: 'rs-uid', resourceVersion: '7' } };

describe('owner references', () => {
  it('builds a controller reference with controller and blockOwnerDeletion set', () => {
    assert.deepEqual(newControllerRef(rs, { group: 'apps', version: 'v1', kind: 'ReplicaSet' }), {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web-abc',
      uid: 'rs-uid',
      blockOwnerDeletion: true,
      controller: true,
    });
    assert.equal(newControllerRef({ metadata: { name: 'x', uid: 'u' } }, { group: '', version: 'v1', kind: 'Pod' }).apiVersion, 'v1');
    assert.throws(() => newControllerRef({ metadata: { name: 'x' } }, { group: 'apps', version: 'v1', kind: 'ReplicaSet' }));
  });

  it('finds the controlling owner and compares it by uid', () => {
    const pod: KubeObject = {
      metadata: {
        name: 'p',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'node-uid' },
          newControllerRef(rs, { group: 'apps', version: 'v1', kind: 'ReplicaSet' }),
        ],
      },
    };
    assert.equal(getControllerOf(pod)?.uid, 'rs-uid');
    assert.equal(isControlledBy(pod, rs), true);
    assert.equal(isControlledBy(pod, { metadata: { name: 'web-abc', uid: 'other' } }), false);
    assert.equal(getControllerOf({ metadata: {} }), undefined);
    assert.equal(isControlledBy({ metadata: {} }, rs), false);
  });
});

describe('finalizers and deletion', () => {
  it('adds and removes finalizers without mutating the object', () => {
    const obj: KubeObject = { metadata: { name: 'x', finalizers: ['a'] } };
    const added = addFinalizer(obj, 'b');
    assert.deepEqual(added, ['a', 'b']);
    assert.deepEqual(addFinalizer(obj, 'a'), ['a']);
    assert.notEqual(addFinalizer(obj, 'a'), obj.metadata!.finalizers);
    assert.deepEqual(removeFinalizer({ metadata: { finalizers: ['a', 'b', 'a'] } }, 'a'), ['b']);
    assert.deepEqual(obj.metadata!.finalizers, ['a']);
    assert.equal(hasFinalizer(obj, 'a'), true);
    assert.equal(hasFinalizer(obj, 'b'), false);
    assert.deepEqual(addFinalizer({}, 'x'), ['x']);
  });

  it('reports deletion once a deletionTimestamp is set', () => {
    assert.equal(isBeingDeleted(rs), false);
    assert.equal(isBeingDeleted({ metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' } }), true);
  });
});

describe('references and copies', () => {
  it('builds an object reference from the object fields', () => {
    assert.deepEqual(objectReference(rs), { kind: 'ReplicaSet', namespace: 'default', name: 'web-abc', uid: 'rs-uid', apiVersion: 'apps/v1', resourceVersion: '7' });
    assert.deepEqual(objectReference({ metadata: { name: 'n1' } }, { group: '', version: 'v1', kind: 'Node' }), { kind: 'Node', name: 'n1', apiVersion: 'v1' });
  });

  it('deep-copies so changes do not reach the original', () => {
    const c = copy(rs);
    c.metadata!.name = 'changed';
    assert.equal(rs.metadata!.name, 'web-abc');
  });
});
