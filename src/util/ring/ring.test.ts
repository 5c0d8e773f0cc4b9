import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ring } from './ring.js';

describe('Ring', () => {
  it('keeps the newest items, oldest first, by iteration and toArray', () => {
    const r = new Ring<number>(3);
    r.push(1);
    r.push(2);
    assert.deepEqual([...r], [1, 2]);
    for (const n of [3, 4, 5]) r.push(n);
    assert.deepEqual([...r], [3, 4, 5]);
    assert.deepEqual(r.toArray(), [3, 4, 5]);
    r.push(6);
    assert.deepEqual(r.toArray(), [4, 5, 6]);
    assert.equal(r.length, 3);
  });
});
