/**
 * The in-memory key index of an MVCC store, like etcd's treeIndex: for every
 * key, the revisions that wrote it (puts and tombstones), in key order.
 *
 * The index answers "which revision of key K was current at revision R" and
 * "which keys lie under a prefix"; a backend attaches the value to each entry
 * (`memory` keeps the object itself, `sqlite` leaves it null and reads the
 * row by revision).
 *
 * Keys and their entry lists are kept in key order in a chunked SortedMap:
 * lookups are binary searches, loading keys in order is appending, and a new
 * key anywhere else moves one chunk, with no hashing. An index opened from a packed image (newPackedMvccIndex) keeps
 * each key's entries as numbers in the image until the key is first used, so
 * opening a store of 100,000 keys allocates one string per key and little
 * else.
 */

import { lowerBound, SortedMap } from '../../util/sorted/sorted-map.js';

/** One write of a key. */
export interface KeyRevision<V> {
  /** Revision of this write (etcd mod_revision). */
  revision: number;
  /** Revision that created the current generation of the key. */
  createRevision: number;
  /** Writes since creation, 1 for the create (etcd version); 0 for a tombstone. */
  version: number;
  /** True for a delete. */
  deleted: boolean;
  value: V;
}

export interface MvccIndex<V> {
  /** Number of keys with at least one entry (live or tombstoned). */
  readonly size: number;
  /** Number of entries (writes kept) over all keys. */
  readonly entries: number;
  /** Latest entry of `key`, tombstone included. */
  last(key: string): KeyRevision<V> | undefined;
  /** Live value of `key` at revision `rev` (latest entry <= rev, unless a tombstone). */
  liveAt(key: string, rev: number): KeyRevision<V> | undefined;
  /** Entry of `key` just before revision `rev` (the state a write at `rev` replaced). */
  before(key: string, rev: number): KeyRevision<V> | undefined;
  /**
   * Appends a write; its revision must exceed every revision of the key. A
   * new key costs O(1) when it sorts after every key (loading in key order),
   * O(log keys) and a move of one chunk otherwise.
   */
  put(key: string, entry: KeyRevision<V>): void;
  /**
   * Calls `fn` for every key (under `prefix`, when given) with its entries,
   * oldest first, in key order. Read only: the lists may be the index's own.
   */
  forEachKey(fn: (key: string, entries: readonly KeyRevision<V>[]) => void, prefix?: string): void;
  /** Calls `fn` for every key (under `prefix`, when given) with the revision of its last entry and whether it is a tombstone, in key order. */
  forEachLast(fn: (key: string, revision: number, deleted: boolean) => void, prefix?: string): void;
  /** Keys under `prefix`, strictly after `startAfter` when given, in key order. */
  keysUnder(prefix: string, startAfter?: string): Iterable<string>;
  /**
   * Drops every entry no longer needed to read at revisions >= `rev`: older
   * entries shadowed by a newer one <= rev, and tombstones <= rev that are the
   * last entry of their key at rev. Calls `onDrop` for each entry removed.
   */
  compact(rev: number, onDrop?: (key: string, e: KeyRevision<V>) => void): void;
}

export { lowerBound };

/** Position of the last entry with revision <= rev, or -1. */
function lastAtOrBefore<V>(list: KeyRevision<V>[], rev: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.revision <= rev) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Fields per entry in a packed image: revision, createRevision, version, deleted (0/1). */
const PACKED_FIELDS = 4;

type Entries<V> = KeyRevision<V>[] | number;

class Index<V> implements MvccIndex<V> {
  // invariant: every key maps to its entries (at least one, revisions ascending), or to the
  // offset in `packed` of their count, then their fields
  private map: SortedMap<Entries<V>>;
  private count: number;

  constructor(
    private readonly packed?: Float64Array,
    keys: string[] = [],
    offsets: number[] = [],
    entries = 0,
  ) {
    this.map = SortedMap.fromSorted<Entries<V>>(keys, offsets);
    this.count = entries;
  }

  get size(): number {
    return this.map.size;
  }

  get entries(): number {
    return this.count;
  }

  /** The entries of a key, unpacked (and kept) on first use. */
  private unpacked(key: string, l: Entries<V>): KeyRevision<V>[] {
    if (typeof l !== 'number') return l;
    const list = this.unpack(l);
    this.map.set(key, list);
    return list;
  }

  private unpack(at: number): KeyRevision<V>[] {
    const p = this.packed!;
    const n = p[at]!;
    const list: KeyRevision<V>[] = new Array(n);
    for (let j = 0, o = at + 1; j < n; j++, o += PACKED_FIELDS) {
      // only null-valued indexes are packed (newPackedMvccIndex)
      list[j] = { revision: p[o]!, createRevision: p[o + 1]!, version: p[o + 2]!, deleted: p[o + 3] === 1, value: null as V };
    }
    return list;
  }

  /** The entries of `key`, or undefined. */
  private listOf(key: string): KeyRevision<V>[] | undefined {
    const l = this.map.get(key);
    return l === undefined ? undefined : this.unpacked(key, l);
  }

  last(key: string): KeyRevision<V> | undefined {
    const list = this.listOf(key);
    return list ? list[list.length - 1] : undefined;
  }

  liveAt(key: string, rev: number): KeyRevision<V> | undefined {
    const list = this.listOf(key);
    if (!list) return undefined;
    const last = list[list.length - 1]!;
    const e = last.revision <= rev ? last : list[lastAtOrBefore(list, rev)];
    return e && !e.deleted ? e : undefined;
  }

  before(key: string, rev: number): KeyRevision<V> | undefined {
    const list = this.listOf(key);
    if (!list) return undefined;
    return list[lastAtOrBefore(list, rev - 1)];
  }

  put(key: string, entry: KeyRevision<V>): void {
    const list = this.listOf(key);
    if (list) {
      const last = list[list.length - 1]!;
      if (entry.revision <= last.revision) {
        throw new Error(`mvcc index: revision ${entry.revision} of ${key} not after ${last.revision}`);
      }
      list.push(entry);
    } else this.map.set(key, [entry]);
    this.count++;
  }

  forEachKey(fn: (key: string, entries: readonly KeyRevision<V>[]) => void, prefix?: string): void {
    for (const [key, l] of this.map.entries(prefix)) {
      if (prefix && !key.startsWith(prefix)) return;
      // packed entries are unpacked for the call only: walking every key keeps the index packed
      fn(key, typeof l === 'number' ? this.unpack(l) : l);
    }
  }

  forEachLast(fn: (key: string, revision: number, deleted: boolean) => void, prefix?: string): void {
    const p = this.packed;
    for (const [key, l] of this.map.entries(prefix)) {
      if (prefix && !key.startsWith(prefix)) return;
      if (typeof l === 'number') {
        const o = l + 1 + (p![l]! - 1) * PACKED_FIELDS;
        fn(key, p![o]!, p![o + 3] === 1);
      } else {
        const e = l[l.length - 1]!;
        fn(key, e.revision, e.deleted);
      }
    }
  }

  *keysUnder(prefix: string, startAfter?: string): Iterable<string> {
    // The map may change while a caller iterates (a write between pages is fine: callers read at a
    // fixed revision); its iterator goes on after the last key it yielded.
    const after = startAfter !== undefined && startAfter >= prefix;
    for (const [k] of this.map.entries(after ? startAfter : prefix, after)) {
      if (!k.startsWith(prefix)) return;
      yield k;
    }
  }

  compact(rev: number, onDrop?: (key: string, e: KeyRevision<V>) => void): void {
    let removedKeys = false;
    const p = this.packed;
    for (const [key, l] of this.map.entries()) {
      // a packed key with one entry that is not a tombstone has nothing to drop: leave it packed
      if (typeof l === 'number' && (p![l + 1]! > rev || (p![l] === 1 && p![l + 4] !== 1))) continue;
      const list = this.unpacked(key, l);
      if (list[0]!.revision > rev) continue;
      const keepFrom = lastAtOrBefore(list, rev);
      let cut = keepFrom; // drop entries before keepFrom
      if (list[keepFrom]!.deleted) cut = keepFrom + 1; // a tombstone at or before rev is not needed
      if (cut <= 0) continue;
      if (onDrop) for (let i = 0; i < cut; i++) onDrop(key, list[i]!);
      this.count -= cut;
      list.splice(0, cut);
      if (list.length === 0) removedKeys = true;
    }
    if (removedKeys) this.map.retain((_k, l) => typeof l === 'number' || l.length > 0);
  }
}

/** An empty index. Not thread-safe; callers serialise writes. */
export function newMvccIndex<V>(): MvccIndex<V> {
  return new Index<V>();
}

/**
 * An index over packed entries (index-image.ts): `keys` strictly ascending,
 * `offsets[i]` the position in `numbers` of keys[i]'s entry count, followed
 * by (revision, createRevision, version, deleted 0/1) per entry, oldest
 * first. Takes ownership of the arrays; the caller has checked them.
 */
export function newPackedMvccIndex(keys: string[], offsets: number[], numbers: Float64Array, entries: number): MvccIndex<null> {
  return new Index<null>(numbers, keys, offsets, entries);
}
