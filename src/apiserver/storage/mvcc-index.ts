/**
 * The in-memory key index of an MVCC store, like etcd's treeIndex: for every
 * key, the revisions that wrote it (puts and tombstones), in key order.
 *
 * The index answers "which revision of key K was current at revision R" and
 * "which keys lie under a prefix"; a backend attaches the value to each entry
 * (`memory` keeps the object itself, `sqlite` leaves it undefined and reads
 * the row by revision).
 */

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
  /** Latest entry of `key`, tombstone included. */
  last(key: string): KeyRevision<V> | undefined;
  /** Live value of `key` at revision `rev` (latest entry <= rev, unless a tombstone). */
  liveAt(key: string, rev: number): KeyRevision<V> | undefined;
  /** Entry of `key` just before revision `rev` (the state a write at `rev` replaced). */
  before(key: string, rev: number): KeyRevision<V> | undefined;
  /** Appends a write; its revision must exceed every revision of the key. */
  put(key: string, entry: KeyRevision<V>): void;
  /** Keys under `prefix`, strictly after `startAfter` when given, in key order. */
  keysUnder(prefix: string, startAfter?: string): Iterable<string>;
  /**
   * Drops every entry no longer needed to read at revisions >= `rev`: older
   * entries shadowed by a newer one <= rev, and tombstones <= rev that are the
   * last entry of their key at rev. Calls `onDrop` for each entry removed.
   */
  compact(rev: number, onDrop?: (key: string, e: KeyRevision<V>) => void): void;
}

/** Index of the first element of sorted `arr` that is >= `s` (or > `s` when `strict`). */
export function lowerBound(arr: readonly string[], s: string, strict = false): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = arr[mid]!;
    if (v < s || (strict && v === s)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

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

class Index<V> implements MvccIndex<V> {
  private readonly byKey = new Map<string, KeyRevision<V>[]>();
  // invariant: sorted holds exactly the keys of byKey, in ascending order
  private sorted: string[] = [];

  get size(): number {
    return this.byKey.size;
  }

  last(key: string): KeyRevision<V> | undefined {
    const list = this.byKey.get(key);
    return list ? list[list.length - 1] : undefined;
  }

  liveAt(key: string, rev: number): KeyRevision<V> | undefined {
    const list = this.byKey.get(key);
    if (!list) return undefined;
    const last = list[list.length - 1]!;
    const e = last.revision <= rev ? last : list[lastAtOrBefore(list, rev)];
    return e && !e.deleted ? e : undefined;
  }

  before(key: string, rev: number): KeyRevision<V> | undefined {
    const list = this.byKey.get(key);
    if (!list) return undefined;
    return list[lastAtOrBefore(list, rev - 1)];
  }

  put(key: string, entry: KeyRevision<V>): void {
    const list = this.byKey.get(key);
    if (list) {
      const last = list[list.length - 1]!;
      if (entry.revision <= last.revision) {
        throw new Error(`mvcc index: revision ${entry.revision} of ${key} not after ${last.revision}`);
      }
      list.push(entry);
      return;
    }
    this.byKey.set(key, [entry]);
    const n = this.sorted.length;
    if (n === 0 || this.sorted[n - 1]! < key) this.sorted.push(key);
    else this.sorted.splice(lowerBound(this.sorted, key), 0, key);
  }

  *keysUnder(prefix: string, startAfter?: string): Iterable<string> {
    const from = startAfter !== undefined && startAfter >= prefix ? lowerBound(this.sorted, startAfter, true) : lowerBound(this.sorted, prefix);
    // The array may change while a caller iterates (a write between pages is
    // fine: callers read at a fixed revision); re-find our place if it shifts.
    let i = from;
    let lastKey: string | undefined;
    for (;;) {
      let k = this.sorted[i];
      if (lastKey !== undefined && k !== undefined && k <= lastKey) {
        i = lowerBound(this.sorted, lastKey, true);
        k = this.sorted[i];
      }
      if (k === undefined || !k.startsWith(prefix)) return;
      lastKey = k;
      i++;
      yield k;
    }
  }

  compact(rev: number, onDrop?: (key: string, e: KeyRevision<V>) => void): void {
    let removedKeys = false;
    for (const [key, list] of this.byKey) {
      if (list[0]!.revision > rev) continue;
      const keepFrom = lastAtOrBefore(list, rev);
      let cut = keepFrom; // drop entries before keepFrom
      if (list[keepFrom]!.deleted) cut = keepFrom + 1; // a tombstone at or before rev is not needed
      if (cut <= 0) continue;
      if (onDrop) for (let i = 0; i < cut; i++) onDrop(key, list[i]!);
      if (cut >= list.length) {
        this.byKey.delete(key);
        removedKeys = true;
      } else {
        list.splice(0, cut);
      }
    }
    if (removedKeys) this.sorted = this.sorted.filter((k) => this.byKey.has(k));
  }
}

/** An empty index. Not thread-safe; callers serialise writes. */
export function newMvccIndex<V>(): MvccIndex<V> {
  return new Index<V>();
}
