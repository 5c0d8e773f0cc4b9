import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch } from './apply-patch.js';
import type { KubeObject } from '../../api/types.js';
import { StatusError } from '../../client/errors.js';

const gvk = { group: '', version: 'v1', kind: 'ConfigMap' };
const cm = (): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { 'a/b': '1', 'x~y': '2' } }, data: { k: 'v' }, list: [1, 2, 3] });
const jp = (ops: unknown) => applyPatch(cm(), 'json', ops, { gvk, isCustomResource: false });
const mp = (p: unknown) => applyPatch(cm(), 'merge', p, { gvk, isCustomResource: false });
const is = (code: number) => (e: unknown) => e instanceof StatusError && e.code === code;

describe('JSON patch', () => {
  it('adds, replaces and removes members', () => {
    const out = jp([{ op: 'add', path: '/data/n', value: 'new' }, { op: 'replace', path: '/data/k', value: 'w' }, { op: 'remove', path: '/metadata/annotations' }]);
    assert.deepEqual(out.data, { k: 'w', n: 'new' });
    assert.equal(out.metadata!.annotations, undefined);
  });

  it('inserts at an index and appends with -', () => {
    const out = jp([{ op: 'add', path: '/list/0', value: 0 }, { op: 'add', path: '/list/-', value: 4 }]);
    assert.deepEqual(out.list, [0, 1, 2, 3, 4]);
  });

  it('unescapes ~1 and ~0 in pointers', () => {
    const out = jp([{ op: 'replace', path: '/metadata/annotations/a~1b', value: 'one' }, { op: 'remove', path: '/metadata/annotations/x~0y' }]);
    assert.deepEqual(out.metadata!.annotations, { 'a/b': 'one' });
  });

  it('moves and copies values', () => {
    const out = jp([{ op: 'copy', from: '/data/k', path: '/data/k2' }, { op: 'move', from: '/list/0', path: '/list/-' }]);
    assert.deepEqual(out.data, { k: 'v', k2: 'v' });
    assert.deepEqual(out.list, [2, 3, 1]);
  });

  it('copies into a value\'s own child, and runs copies and tests of any depth without recursion', () => {
    const ops: unknown[] = [{ op: 'add', path: '/data/x', value: { a: 'leaf' } }];
    // Each copy doubles the depth: 2^16 levels after these.
    for (let i = 0; i < 16; i++) ops.push({ op: 'copy', from: '/data/x', path: `/data/x${'/a'.repeat(2 ** i)}` });
    ops.push({ op: 'test', path: '/data/x', value: (jp(ops) as { data: { x: unknown } }).data.x });
    assert.ok(jp(ops));
  });

  it('stops copies adding up to more than 3 MiB, as --json-patch-max-copy-bytes, with 422', () => {
    const ops = [{ op: 'add', path: '/data/big', value: 'x'.repeat(1 << 20) }, ...Array.from({ length: 3 }, (_, i) => ({ op: 'copy', from: '/data/big', path: `/data/c${i}` }))];
    assert.throws(() => jp(ops), (e: unknown) => is(422)(e) && (e as StatusError).status.details!.causes![0]!.message === 'Unable to complete the copy, the accumulated size increase of copy is 3145734, exceeding the limit 3145728');
  });

  it('passes a matching test and fails the whole patch with 422 on a mismatch', () => {
    assert.deepEqual(jp([{ op: 'test', path: '/data/k', value: 'v' }, { op: 'add', path: '/data/z', value: '1' }]).data, { k: 'v', z: '1' });
    assert.throws(() => jp([{ op: 'add', path: '/data/z', value: '1' }, { op: 'test', path: '/data/k', value: 'nope' }]), (e: unknown) => is(422)(e) && (e as StatusError).message === 'the server rejected our request due to an error in our request' && /testing value \/data\/k failed/.test((e as StatusError).status.details!.causes![0]!.message!));
  });

  it('answers 422 for a missing path, a bad index and replacing a missing key', () => {
    assert.throws(() => jp([{ op: 'add', path: '/nope/x', value: 1 }]), is(422));
    assert.throws(() => jp([{ op: 'add', path: '/list/9', value: 1 }]), is(422));
    assert.throws(() => jp([{ op: 'replace', path: '/data/missing', value: 1 }]), is(422));
    assert.throws(() => jp([{ op: 'remove', path: '/data/missing' }]), is(422));
  });

  it('answers 400 for a body that is not a list of operations', () => {
    assert.throws(() => jp({ op: 'add' }), (e: unknown) => is(400)(e) && /cannot unmarshal object/.test((e as Error).message));
  });
});

describe('JSON merge patch', () => {
  it('merges objects, deletes with null and replaces arrays', () => {
    const out = mp({ data: { k: null, n: 'x' }, list: [9], metadata: { labels: { a: 'b', drop: null } } });
    assert.deepEqual(out.data, { n: 'x' });
    assert.deepEqual(out.list, [9]);
    assert.deepEqual(out.metadata!.labels, { a: 'b' });
  });

  it('answers 400 for a patch that is not an object', () => {
    assert.throws(() => mp([1]), is(400));
  });
});
