import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RingBuffer } from './ring-buffer.js';

describe('RingBuffer', () => {
  it('hands items back in insertion order while growing past its capacity', () => {
    const b = new RingBuffer<number>(2);
    for (let i = 0; i < 3; i++) b.push(i);
    assert.equal(b.shift(), 0);
    for (let i = 3; i < 40; i++) b.push(i);
    assert.equal(b.length, 39);
    assert.deepEqual(Array.from(b).slice(0, 3), [1, 2, 3]);
    const out: number[] = [];
    while (b.length > 0) out.push(b.shift()!);
    assert.deepEqual(out, Array.from({ length: 39 }, (_, i) => i + 1));
    assert.equal(b.shift(), undefined);
    assert.equal(b.peek(), undefined);
  });
});
