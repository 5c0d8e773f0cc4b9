import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { kinds, type RuntimeObject } from './kinds.js';
import {
  AlreadyOwnedError,
  addFinalizer,
  getControllerOf,
  hasFinalizer,
  isBeingDeleted,
  isControlledBy,
  removeFinalizer,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './ownership.js';

function deployment(name = 'web', meta: ObjectMeta = {}): RuntimeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default', uid: `uid-${name}`, ...meta } };
}

function configMap(name = 'child', meta: ObjectMeta = {}): RuntimeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...meta } };
}

describe('setControllerReference', () => {
  it('adds a controller reference with apiVersion, kind, name, uid, controller and blockOwnerDeletion', () => {
    const child = configMap();
    setControllerReference(deployment(), child);
    assert.deepEqual(child.metadata?.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true },
    ]);
  });

  it('creates metadata when the object has none (a cluster-scoped owner)', () => {
    const child: RuntimeObject = { apiVersion: 'v1', kind: 'ConfigMap' };
    setControllerReference({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', uid: 'u-ns' } }, child);
    assert.equal(child.metadata?.ownerReferences?.[0]?.kind, 'Namespace');
  });

  it('lets blockOwnerDeletion be turned off', () => {
    const child = configMap();
    setControllerReference(deployment(), child, { blockOwnerDeletion: false });
    assert.equal(child.metadata?.ownerReferences?.[0]?.blockOwnerDeletion, false);
    assert.equal(child.metadata?.ownerReferences?.[0]?.controller, true);
  });

  it('replaces an existing reference to the same owner instead of adding a second', () => {
    const child = configMap('child', {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Secret', name: 'other', uid: 'u-s' },
        { apiVersion: 'apps/v1beta1', kind: 'Deployment', name: 'web', uid: 'old-uid' },
      ],
    });
    setControllerReference(deployment(), child);
    assert.deepEqual(child.metadata?.ownerReferences, [
      { apiVersion: 'v1', kind: 'Secret', name: 'other', uid: 'u-s' },
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true },
    ]);
  });

  it('is idempotent for the owner that already controls the object', () => {
    const child = configMap();
    setControllerReference(deployment(), child);
    setControllerReference(deployment(), child);
    assert.equal(child.metadata?.ownerReferences?.length, 1);
  });

  it("throws AlreadyOwnedError with controller-runtime's message when another controller owns the object", () => {
    const child = configMap('name', { namespace: 'ns', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Kind', name: 'other', uid: 'u-o', controller: true }] });
    const before = structuredClone(child);
    const owner: RuntimeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', uid: 'u-w' } };
    let caught: unknown;
    try {
      setControllerReference(owner, child);
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof AlreadyOwnedError);
    assert.equal(caught.message, 'Object ns/name is already owned by another Kind controller other');
    assert.equal(caught.owner.name, 'other');
    assert.equal(caught.object, child);
    assert.deepEqual(child, before, 'the object is left as it was');
  });

  it('takes a non-controller reference of another owner as no obstacle', () => {
    const child = configMap('child', { ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u-s' }] });
    setControllerReference(deployment(), child);
    assert.equal(child.metadata?.ownerReferences?.length, 2);
    assert.equal(getControllerOf(child)?.name, 'web');
  });

  it('refuses a cross-namespace owner', () => {
    const owner: RuntimeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a', uid: 'u' } };
    const child = configMap('child', { namespace: 'b' });
    assert.throws(() => setControllerReference(owner, child), { message: "cross-namespace owner references are disallowed, owner's namespace a, obj's namespace b" });
    assert.equal(child.metadata?.ownerReferences, undefined);
  });

  it('refuses a namespaced owner of a cluster-scoped object', () => {
    const owner: RuntimeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a', uid: 'u' } };
    const clusterScoped: RuntimeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' } };
    assert.throws(() => setControllerReference(owner, clusterScoped), { message: "cluster-scoped resource must not have a namespace-scoped owner, owner's namespace a" });
  });

  it('allows a cluster-scoped owner of a namespaced object', () => {
    const child = configMap();
    setControllerReference({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r', uid: 'u-r' } }, child);
    assert.equal(getControllerOf(child)?.uid, 'u-r');
  });

  it('throws a TypeError for an owner without uid (not read from the API)', () => {
    const owner = deployment('web', { uid: undefined });
    assert.throws(() => setControllerReference(owner, configMap()), TypeError);
    assert.throws(() => setOwnerReference(owner, configMap()), TypeError);
  });

  it('throws a TypeError for an owner without name', () => {
    const owner = deployment('web', { name: undefined });
    assert.throws(() => setControllerReference(owner, configMap()), TypeError);
  });

  it('takes apiVersion and kind from { kind } when the owner lacks them, and refuses without it', () => {
    const owner: RuntimeObject = { metadata: { name: 'web', namespace: 'default', uid: 'u-w' } };
    assert.throws(() => setControllerReference(owner, configMap()), TypeError);
    const child = configMap();
    setControllerReference(owner, child, { kind: kinds.Deployment });
    assert.deepEqual(child.metadata?.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-w', controller: true, blockOwnerDeletion: true },
    ]);
  });
});

describe('setOwnerReference', () => {
  it('adds a plain owner reference without controller or blockOwnerDeletion', () => {
    const child = configMap();
    setOwnerReference(deployment(), child);
    assert.deepEqual(child.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web' }]);
    assert.equal(getControllerOf(child), undefined);
  });

  it('sets blockOwnerDeletion when asked', () => {
    const child = configMap();
    setOwnerReference(deployment(), child, { blockOwnerDeletion: true });
    assert.equal(child.metadata?.ownerReferences?.[0]?.blockOwnerDeletion, true);
  });

  it('adds several owners and refreshes an existing one', () => {
    const child = configMap();
    setOwnerReference(deployment('a'), child);
    setOwnerReference(deployment('b'), child);
    setOwnerReference({ ...deployment('a'), metadata: { ...deployment('a').metadata, uid: 'new-uid' } }, child);
    assert.deepEqual(
      child.metadata?.ownerReferences?.map((r) => [r.name, r.uid]),
      [
        ['a', 'new-uid'],
        ['b', 'uid-b'],
      ],
    );
  });

  it('is refused across namespaces too', () => {
    const child = configMap('c', { namespace: 'other' });
    assert.throws(() => setOwnerReference(deployment(), child), /cross-namespace owner references are disallowed/);
  });

  it('does not touch an existing controller reference of another owner', () => {
    const child = configMap('c', { ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u-s', controller: true }] });
    setOwnerReference(deployment(), child);
    assert.equal(child.metadata?.ownerReferences?.length, 2);
    assert.equal(getControllerOf(child)?.name, 's');
  });
});

describe('removeOwnerReference', () => {
  it('removes the reference to the owner and says whether there was one', () => {
    const child = configMap();
    setOwnerReference(deployment('a'), child);
    setControllerReference(deployment('b'), child);
    assert.equal(removeOwnerReference(deployment('b'), child), true);
    assert.deepEqual(
      child.metadata?.ownerReferences?.map((r) => r.name),
      ['a'],
    );
    assert.equal(removeOwnerReference(deployment('b'), child), false);
    assert.equal(removeOwnerReference(deployment('a'), configMap()), false);
  });

  it('matches by group, kind and name, not version', () => {
    const child = configMap('c', { ownerReferences: [{ apiVersion: 'apps/v1beta2', kind: 'Deployment', name: 'web', uid: 'x' }] });
    assert.equal(removeOwnerReference({ apiVersion: 'v1', kind: 'Deployment', metadata: { name: 'web' } }, child), false, 'other group');
    assert.equal(removeOwnerReference({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' } }, child), false, 'other kind');
    assert.equal(removeOwnerReference(deployment('web'), child), true);
    assert.deepEqual(child.metadata?.ownerReferences, []);
  });
});

describe('getControllerOf and isControlledBy', () => {
  it('finds the reference with controller: true', () => {
    const child = configMap('c', {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u-s', controller: false },
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true },
      ],
    });
    assert.equal(getControllerOf(child)?.name, 'web');
    assert.equal(getControllerOf(configMap()), undefined);
  });

  it('tells controlled-by by uid: a recreated owner of the same name is not the controller', () => {
    const child = configMap();
    setControllerReference(deployment(), child);
    assert.equal(isControlledBy(child, deployment()), true);
    assert.equal(isControlledBy(child, deployment('web', { uid: 'another-uid' })), false);
    assert.equal(isControlledBy(child, { metadata: { name: 'web' } }), false);
    assert.equal(isControlledBy(configMap(), deployment()), false);
  });

  it('does not take a plain owner reference as control', () => {
    const child = configMap();
    setOwnerReference(deployment(), child);
    assert.equal(isControlledBy(child, deployment()), false);
  });
});

describe('finalizers', () => {
  it('hasFinalizer looks for the exact name', () => {
    const o = configMap('c', { finalizers: ['example.com/a'] });
    assert.equal(hasFinalizer(o, 'example.com/a'), true);
    assert.equal(hasFinalizer(o, 'example.com/b'), false);
    assert.equal(hasFinalizer(configMap(), 'example.com/a'), false);
    assert.equal(hasFinalizer({}, 'example.com/a'), false);
  });

  it('addFinalizer adds once, in place, and says whether it changed the object', () => {
    const o: RuntimeObject = { apiVersion: 'v1', kind: 'ConfigMap' };
    assert.equal(addFinalizer(o, 'example.com/a'), true);
    assert.deepEqual(o.metadata?.finalizers, ['example.com/a']);
    assert.equal(addFinalizer(o, 'example.com/a'), false);
    assert.equal(addFinalizer(o, 'example.com/b'), true);
    assert.deepEqual(o.metadata?.finalizers, ['example.com/a', 'example.com/b']);
  });

  it('removeFinalizer removes every copy of the name, keeps the others, and says whether it changed the object', () => {
    const o = configMap('c', { finalizers: ['example.com/a', 'other', 'example.com/a'] });
    assert.equal(removeFinalizer(o, 'example.com/a'), true);
    assert.deepEqual(o.metadata?.finalizers, ['other']);
    assert.equal(removeFinalizer(o, 'example.com/a'), false);
    assert.deepEqual(o.metadata?.finalizers, ['other']);
    assert.equal(removeFinalizer(configMap(), 'x'), false);
  });

  it('isBeingDeleted is true once deletionTimestamp is set', () => {
    assert.equal(isBeingDeleted(configMap()), false);
    assert.equal(isBeingDeleted({}), false);
    assert.equal(isBeingDeleted(configMap('c', { deletionTimestamp: '2024-01-01T00:00:00Z' })), true);
  });
});
