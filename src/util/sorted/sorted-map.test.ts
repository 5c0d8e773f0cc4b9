import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SortedMap } from './sorted-map.js';

/** A small deterministic generator (tests must not depend on Math.random). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function reference(m: Map<string, number>): [string, number][] {
  return [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

describe('SortedMap', () => {
  it('matches a sorted reference through thousands of random inserts, replacements and deletes (chunks split and empty)', () => {
    const r = rng(7);
    const m = new SortedMap<number>();
    const ref = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const key = `k${Math.floor(r() * 3000)
        .toString()
        .padStart(4, '0')}`;
      if (r() < 0.3) assert.equal(m.delete(key), ref.get(key));
      else {
        assert.equal(m.set(key, step), ref.get(key));
        ref.set(key, step);
        continue;
      }
      ref.delete(key);
    }
    assert.equal(m.size, ref.size);
    assert.deepEqual([...m.entries()], reference(ref));
    for (const [k, v] of ref) assert.equal(m.get(k), v);
    assert.equal(m.get('k9999'), undefined);
    assert.equal(m.has('nope'), false);
  });

  it('iterates from a lower bound, strict or not, and from past the end', () => {
    const m = SortedMap.fromSorted(['a', 'b/1', 'b/2', 'c'], [1, 2, 3, 4]);
    assert.deepEqual([...m.entries('b/')].map(([k]) => k), ['b/1', 'b/2', 'c']);
    assert.deepEqual([...m.entries('b/1', true)].map(([k]) => k), ['b/2', 'c']);
    assert.deepEqual([...m.entries('d')], []);
  });

  it('goes on after the last key it yielded when writes happen between steps', () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    const m = SortedMap.fromSorted(keys, keys.map((_, i) => i));
    const it = m.entries('k1000');
    assert.equal(it.next().value?.[0], 'k1000');
    m.delete('k1001');
    m.set('k1000a', -1); // sorts right after k1000
    m.delete('k0005');
    assert.equal(it.next().value?.[0], 'k1000a');
    assert.equal(it.next().value?.[0], 'k1002');
    let n = 0;
    for (const _ of it) n++;
    assert.equal(n, 3000 - 1003);
  });

  it('appends keys that sort last without a search, in chunks', () => {
    const m = new SortedMap<number>();
    for (let i = 0; i < 2000; i++) m.set(`k${String(i).padStart(5, '0')}`, i);
    assert.equal(m.size, 2000);
    assert.deepEqual([...m.entries('k01998')], [['k01998', 1998], ['k01999', 1999]]);
  });

  it('retain keeps what the predicate keeps, in order', () => {
    const keys = Array.from({ length: 1500 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    const m = SortedMap.fromSorted(keys, keys.map((_, i) => i));
    m.retain((_k, v) => v % 3 === 0);
    assert.equal(m.size, 500);
    assert.deepEqual([...m.entries()].slice(0, 3), [['k0000', 0], ['k0003', 3], ['k0006', 6]]);
    m.retain(() => false);
    assert.equal(m.size, 0);
    assert.deepEqual([...m.entries()], []);
    m.set('x', 1);
    assert.deepEqual([...m.entries()], [['x', 1]]);
  });

  it('sorts keys given out of order, and refuses a key given twice', () => {
    assert.deepEqual([...SortedMap.fromSorted(['b', 'c', 'a'], [2, 3, 1]).entries()], [['a', 1], ['b', 2], ['c', 3]]);
    assert.throws(() => SortedMap.fromSorted(['b', 'a', 'b'], [1, 2, 3]), /"b" given twice/);
    assert.throws(() => SortedMap.fromSorted(['a'], []), /1 keys but 0 values/);
  });
});
