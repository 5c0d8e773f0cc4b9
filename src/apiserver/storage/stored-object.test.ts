import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeObject, encodeObject } from './stored-object.js';
import type { KubeObject } from '../../api/types.js';

describe('encodeObject', () => {
  const obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'a', resourceVersion: '3', namespace: 'ns', labels: { x: 'y' } },
    data: { k: 'v' },
  } as KubeObject;

  it('gives the object with resourceVersion set to the revision as the last field of metadata, fields in order', () => {
    assert.equal(encodeObject(obj, 7), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","labels":{"x":"y"},"resourceVersion":"7"},"data":{"k":"v"}}');
    assert.equal(obj.metadata!.resourceVersion, '3', 'the object is not changed');
  });

  it('without a revision, drops resourceVersion (or encodes the object as it is when it has none)', () => {
    assert.equal(encodeObject(obj), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","labels":{"x":"y"}},"data":{"k":"v"}}');
    const plain = { kind: 'X', metadata: { name: 'b' } } as KubeObject;
    assert.equal(encodeObject(plain), JSON.stringify(plain));
  });

  it('adds metadata after the other fields when the object has none (or null)', () => {
    assert.equal(encodeObject({ kind: 'X' } as KubeObject, 2), '{"kind":"X","metadata":{"resourceVersion":"2"}}');
    assert.equal(encodeObject({ metadata: null, kind: 'X' } as unknown as KubeObject, 2), '{"metadata":{"resourceVersion":"2"},"kind":"X"}');
  });

  it('is exactly the text of what decodeObject returns for it', () => {
    const text = encodeObject(obj, 9);
    assert.equal(JSON.stringify(decodeObject(text, 9)), text);
    assert.equal(JSON.stringify(decodeObject(encodeObject(obj), 9)), text);
  });
});
