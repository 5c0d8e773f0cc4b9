import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newMvccIndex, type KeyRevision, type MvccIndex } from './mvcc-index.js';
import { decodeIndexImage, encodeIndexImage } from './index-image.js';

type Write = { key: string; kind: 'put' | 'delete' };

/** Applies writes as a store does: revision = position + 1; returns the index. */
function build(writes: Write[]): MvccIndex<null> {
  const index = newMvccIndex<null>();
  writes.forEach((w, i) => {
    const rev = i + 1;
    const last = index.last(w.key);
    const live = last && !last.deleted ? last : undefined;
    if (w.kind === 'delete') index.put(w.key, { revision: rev, createRevision: 0, version: 0, deleted: true, value: null });
    else index.put(w.key, { revision: rev, createRevision: live ? live.createRevision : rev, version: live ? live.version + 1 : 1, deleted: false, value: null });
  });
  return index;
}

/** A deterministic history over keys in no particular order, with updates, deletes and re-creates. */
function history(n: number): Write[] {
  const writes: Write[] = [];
  let x = 7;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const live = new Set<string>();
  for (let i = 0; i < n; i++) {
    const key = `/registry/${rnd() < 0.5 ? 'pods' : 'configmaps'}/ns-${Math.floor(rnd() * 5)}/o-${Math.floor(rnd() * 40)}`;
    if (live.has(key) && rnd() < 0.3) {
      writes.push({ key, kind: 'delete' });
      live.delete(key);
    } else {
      writes.push({ key, kind: 'put' });
      live.add(key);
    }
  }
  return writes;
}

/** Everything an index answers, at every revision up to `max`. */
function answers(index: MvccIndex<null>, keys: string[], max: number): string {
  const out: unknown[] = [index.size, index.entries, [...index.keysUnder('')], [...index.keysUnder('/registry/pods/', '/registry/pods/ns-2/')]];
  const last: unknown[] = [];
  index.forEachLast((k, r, d) => last.push([k, r, d]), '/registry/configmaps/');
  out.push(last);
  for (const key of keys) {
    const at = (e: KeyRevision<null> | undefined) => (e ? [e.revision, e.createRevision, e.version, e.deleted] : null);
    out.push(at(index.last(key)));
    for (let rev = 0; rev <= max; rev += 7) out.push(at(index.liveAt(key, rev)), at(index.before(key, rev)));
  }
  return JSON.stringify(out);
}

describe('mvcc index', () => {
  it('keeps keys in order whatever order they are written in', () => {
    const index = build([{ key: 'b', kind: 'put' }, { key: 'a', kind: 'put' }, { key: 'c', kind: 'put' }, { key: 'a', kind: 'put' }, { key: 'ab', kind: 'put' }]);
    assert.deepEqual([...index.keysUnder('')], ['a', 'ab', 'b', 'c']);
    assert.deepEqual([...index.keysUnder('a')], ['a', 'ab']);
    assert.deepEqual([...index.keysUnder('', 'ab')], ['b', 'c']);
    assert.equal(index.size, 4);
    assert.equal(index.entries, 5);
    assert.equal(index.last('a')?.revision, 4);
    assert.equal(index.liveAt('a', 3)?.revision, 2);
    assert.equal(index.before('a', 4)?.revision, 2);
    assert.equal(index.last('zz'), undefined);
    assert.throws(() => index.put('a', { revision: 4, createRevision: 2, version: 3, deleted: false, value: null }), /not after/);
  });

  it('compacts shadowed entries and tombstones and forgets keys left empty', () => {
    const index = build([
      { key: 'a', kind: 'put' },
      { key: 'b', kind: 'put' },
      { key: 'a', kind: 'put' },
      { key: 'b', kind: 'delete' },
      { key: 'c', kind: 'put' },
    ]);
    const dropped: string[] = [];
    index.compact(4, (k, e) => dropped.push(`${k}@${e.revision}`));
    assert.deepEqual(dropped, ['a@1', 'b@2', 'b@4']);
    assert.deepEqual([...index.keysUnder('')], ['a', 'c']);
    assert.equal(index.entries, 2);
    assert.equal(index.liveAt('a', 5)?.revision, 3);
  });

  it('answers the same from a packed image as the index it was made from, before and after compaction', () => {
    const writes = history(600);
    const keys = [...new Set(writes.map((w) => w.key))].sort();
    const built = build(writes);
    const image = encodeIndexImage(built)!;
    const decoded = decodeIndexImage(image);
    assert.equal(decoded.first, 1);
    assert.equal(decoded.last, 600);
    const packed = decoded.index;
    assert.equal(answers(packed, keys, 600), answers(built, keys, 600));

    const droppedBuilt: string[] = [];
    const droppedPacked: string[] = [];
    built.compact(450, (k, e) => droppedBuilt.push(`${k}@${e.revision}`));
    // compacting an index still packed (no key used yet) and one whose keys were all unpacked
    const fresh = decodeIndexImage(image).index;
    fresh.compact(450, (k, e) => droppedPacked.push(`${k}@${e.revision}`));
    packed.compact(450);
    assert.deepEqual(droppedPacked, droppedBuilt);
    assert.equal(answers(fresh, keys, 600), answers(built, keys, 600));
    assert.equal(answers(packed, keys, 600), answers(built, keys, 600));

    // writes after opening from the image land in order among packed keys
    for (const key of ['/registry/a', keys[3]!, '/registry/zz']) {
      const rev = 600 + key.length;
      built.put(key, { revision: rev, createRevision: rev, version: 1, deleted: false, value: null });
      packed.put(key, { revision: rev, createRevision: rev, version: 1, deleted: false, value: null });
    }
    assert.equal(answers(packed, [...keys, '/registry/a', '/registry/zz'], 700), answers(built, [...keys, '/registry/a', '/registry/zz'], 700));
  });
});

describe('index image', () => {
  it('round-trips an empty index', () => {
    const d = decodeIndexImage(encodeIndexImage(newMvccIndex<null>())!);
    assert.equal(d.index.size, 0);
    assert.equal(d.first, 0);
    assert.equal(d.last, 0);
  });

  it('refuses to image a key that contains a newline', () => {
    assert.equal(encodeIndexImage(build([{ key: 'a\nb', kind: 'put' }])), undefined);
  });

  it('rejects malformed images', () => {
    const good = encodeIndexImage(build([{ key: 'a', kind: 'put' }, { key: 'b', kind: 'put' }, { key: 'a', kind: 'put' }]))!;
    assert.equal(decodeIndexImage(good).index.entries, 3);
    assert.throws(() => decodeIndexImage({ ...good, keys: 'b\na' }), /out of order/);
    assert.throws(() => decodeIndexImage({ ...good, keys: 'a\nb\nc' }), /bad entry count|sizes/);
    assert.throws(() => decodeIndexImage({ ...good, entries: 4 }), /sizes/);
    assert.throws(() => decodeIndexImage({ ...good, numbers: good.numbers.subarray(0, good.numbers.length - 8) }), /bad entry count|sizes/);
    assert.throws(() => decodeIndexImage({ ...good, numbers: good.numbers.subarray(0, 7) }), /float64/);
    const swapped = new Float64Array(new Uint8Array(good.numbers).buffer);
    [swapped[1], swapped[5]] = [swapped[5]!, swapped[1]!]; // a's revisions 3, 1
    assert.throws(() => decodeIndexImage({ ...good, numbers: Buffer.from(swapped.buffer) }), /not ascending/);
  });
});
