import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from '../controller/testing/patch.js';
import type { RuntimeObject } from './kinds.js';
import { createMergePatch, mergeFrom } from './patch.js';

describe('createMergePatch', () => {
  it('is empty when nothing changed', () => {
    const o = { metadata: { name: 'a', labels: { x: '1' } }, spec: { list: [1, 2], n: 3, s: 'x', b: false, z: null } };
    assert.deepEqual(createMergePatch(o, structuredClone(o)), {});
    assert.deepEqual(createMergePatch({}, {}), {});
  });

  it('carries a changed scalar with its new value', () => {
    assert.deepEqual(createMergePatch({ a: 1, b: 'x', c: true }, { a: 2, b: 'x', c: false }), { a: 2, c: false });
    assert.deepEqual(createMergePatch({ a: 'x' }, { a: 'x', added: 'y' }), { added: 'y' });
  });

  it('marks a removed key with null', () => {
    assert.deepEqual(createMergePatch({ a: 1, b: 2 }, { a: 1 }), { b: null });
    assert.deepEqual(createMergePatch({ a: 1, b: 2 }, { a: 1, b: undefined }), { b: null }, 'an undefined value counts as removed');
  });

  it('does not mention a key that was undefined before and is still absent', () => {
    assert.deepEqual(createMergePatch({ a: undefined }, {}), {});
    assert.deepEqual(createMergePatch({}, { a: undefined }), {});
  });

  it('diffs nested objects down to the changed leaves', () => {
    const from = { metadata: { name: 'a', labels: { app: 'web', tier: 'db' }, annotations: { keep: '1' } }, data: { k: 'v' } };
    const to = { metadata: { name: 'a', labels: { app: 'api' }, annotations: { keep: '1' } }, data: { k: 'v' } };
    assert.deepEqual(createMergePatch(from, to), { metadata: { labels: { app: 'api', tier: null } } });
  });

  it('replaces arrays whole, even when one element changed', () => {
    const from = { spec: { containers: [{ name: 'a', image: 'x:1' }, { name: 'b', image: 'y:1' }] } };
    const to = { spec: { containers: [{ name: 'a', image: 'x:2' }, { name: 'b', image: 'y:1' }] } };
    assert.deepEqual(createMergePatch(from, to), { spec: { containers: [{ name: 'a', image: 'x:2' }, { name: 'b', image: 'y:1' }] } });
    assert.deepEqual(createMergePatch({ l: [1, 2, 3] }, { l: [1, 2, 3] }), {});
    assert.deepEqual(createMergePatch({ l: [1, 2, 3] }, { l: [1, 2] }), { l: [1, 2] });
  });

  it('replaces a value whose type changed', () => {
    assert.deepEqual(createMergePatch({ a: { x: 1 } }, { a: 'flat' }), { a: 'flat' });
    assert.deepEqual(createMergePatch({ a: 'flat' }, { a: { x: 1 } }), { a: { x: 1 } });
    assert.deepEqual(createMergePatch({ a: [1] }, { a: { x: 1 } }), { a: { x: 1 } });
  });

  it('produces a patch that turns the original into the target when applied (RFC 7386)', () => {
    const from = { metadata: { name: 'a', labels: { a: '1', b: '2' } }, spec: { replicas: 1, paused: true, ports: [80] }, status: { ready: 1 } };
    const to = { metadata: { name: 'a', labels: { a: '1', c: '3' } }, spec: { replicas: 2, ports: [80, 443] }, status: { ready: 1 } };
    const patch = createMergePatch(from, to);
    assert.deepEqual(applyMergePatch(structuredClone(from), patch), to);
  });
});

describe('mergeFrom', () => {
  it('keeps a copy of the original: later changes to the object do not change the patch base', () => {
    const obj: RuntimeObject & { data?: Record<string, string> } = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '3' }, data: { k: 'v' } };
    const p = mergeFrom(obj);
    obj.data!.k = 'changed';
    obj.metadata!.labels = { new: 'label' };
    assert.equal(p.type, 'mergeFrom');
    assert.deepEqual(p.original, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '3' }, data: { k: 'v' } });
    assert.notEqual(p.original, obj);
    assert.deepEqual(createMergePatch(p.original, obj), { data: { k: 'changed' }, metadata: { labels: { new: 'label' } } });
  });

  it('takes optimisticLock off by default, and on when asked', () => {
    const obj: RuntimeObject = { metadata: { name: 'a' } };
    assert.equal(mergeFrom(obj).optimisticLock, false);
    assert.equal(mergeFrom(obj, { optimisticLock: true }).optimisticLock, true);
  });
});
