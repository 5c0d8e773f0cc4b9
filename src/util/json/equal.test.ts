import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonEqual } from './equal.js';

test('jsonEqual compares as sorted-key JSON texts would', () => {
  assert.ok(jsonEqual({ a: 1, b: { c: [1, 'x', null] } }, { b: { c: [1, 'x', null] }, a: 1 }));
  assert.ok(jsonEqual({ a: 1, gone: undefined }, { a: 1 }), 'undefined members are absent');
  assert.ok(jsonEqual([undefined], [null]), 'undefined in an array is null');
  assert.ok(!jsonEqual({ a: null }, {}), 'a null member is present');
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!jsonEqual({ a: 1, b: 2 }, { a: 1 }));
  assert.ok(!jsonEqual({ a: [1, 2] }, { a: [2, 1] }), 'arrays are ordered');
  assert.ok(!jsonEqual({ a: [] }, { a: {} }));
  assert.ok(!jsonEqual({ a: '1' }, { a: 1 }));
  assert.ok(!jsonEqual({ a: { b: 1 } }, { a: { b: 1, c: false } }));
});
