/**
 * A map from string keys to values, kept in key order, for the storage
 * layer's indexes (the MVCC key index, the watch cache's latest state).
 *
 * Keys and values live in parallel chunks of at most CHUNK entries, with the
 * last key of every chunk in an array of its own: a lookup is two binary
 * searches, and inserting or removing a key moves at most one chunk's
 * entries. One pair of sorted arrays made every key that does not sort last
 * (an Event's generated name, a pod's) cost a move of every key after it:
 * O(keys) per new key, quadratic over a growing store.
 *
 * Iteration is in key order from a lower bound; an iterator survives writes
 * between its steps (it re-finds its place after the last key it yielded).
 */

/** Entries per chunk before it splits in two. */
const CHUNK = 512;

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

export class SortedMap<V> {
  // invariant: every chunk is non-empty and strictly ascending; lasts[c] is the last key of keys[c];
  // the chunks in order form one strictly ascending sequence
  private keys: string[][] = [];
  private vals: V[][] = [];
  private lasts: string[] = [];
  private count = 0;
  /** Bumped on every insert and removal, so iterators know to re-find their place. */
  private shape = 0;

  /**
   * A map from keys and their values, normally already in ascending order (a store's list); keys
   * in another order (a backend comparing UTF-8 bytes, not UTF-16 units) are sorted first.
   * Takes neither array; a key given twice is an error.
   */
  static fromSorted<V>(keys: readonly string[], vals: readonly V[]): SortedMap<V> {
    if (keys.length !== vals.length) throw new Error(`sorted map: ${keys.length} keys but ${vals.length} values`);
    let ascending = true;
    for (let i = 1; i < keys.length && ascending; i++) ascending = keys[i - 1]! < keys[i]!;
    if (!ascending) {
      const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
      for (let i = 1; i < order.length; i++) if (keys[order[i - 1]!] === keys[order[i]!]) throw new Error(`sorted map: key ${JSON.stringify(keys[order[i]!])} given twice`);
      return SortedMap.fromSorted(
        order.map((i) => keys[i]!),
        order.map((i) => vals[i]!),
      );
    }
    const m = new SortedMap<V>();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const k = keys.slice(i, i + CHUNK);
      m.keys.push(k);
      m.vals.push(vals.slice(i, i + CHUNK));
      m.lasts.push(k[k.length - 1]!);
    }
    m.count = keys.length;
    return m;
  }

  get size(): number {
    return this.count;
  }

  /** Chunk and position of the first key >= key (> key when strict); the chunk is keys.length past the end. */
  private seek(key: string, strict: boolean): [number, number] {
    const c = lowerBound(this.lasts, key, strict);
    if (c === this.keys.length) return [c, 0];
    return [c, lowerBound(this.keys[c]!, key, strict)];
  }

  get(key: string): V | undefined {
    const [c, i] = this.seek(key, false);
    const ks = this.keys[c];
    return ks !== undefined && ks[i] === key ? this.vals[c]![i] : undefined;
  }

  has(key: string): boolean {
    const [c, i] = this.seek(key, false);
    return this.keys[c]?.[i] === key;
  }

  /** Sets the value of key, adding the key when new; returns the value it replaced. */
  set(key: string, value: V): V | undefined {
    const nc = this.keys.length;
    // Appending in key order (loading, names that grow) is the common case: no search.
    if (nc === 0 || this.lasts[nc - 1]! < key) {
      if (nc === 0 || this.keys[nc - 1]!.length >= CHUNK) {
        this.keys.push([key]);
        this.vals.push([value]);
        this.lasts.push(key);
      } else {
        this.keys[nc - 1]!.push(key);
        this.vals[nc - 1]!.push(value);
        this.lasts[nc - 1] = key;
      }
      this.count++;
      this.shape++;
      return undefined;
    }
    const [c, i] = this.seek(key, false);
    const ks = this.keys[c]!;
    const vs = this.vals[c]!;
    if (ks[i] === key) {
      const old = vs[i];
      vs[i] = value;
      return old;
    }
    ks.splice(i, 0, key);
    vs.splice(i, 0, value);
    this.count++;
    this.shape++;
    if (ks.length > 2 * CHUNK) {
      this.keys.splice(c + 1, 0, ks.splice(CHUNK));
      this.vals.splice(c + 1, 0, vs.splice(CHUNK));
      this.lasts.splice(c, 1, ks[ks.length - 1]!, this.keys[c + 1]![this.keys[c + 1]!.length - 1]!);
    }
    return undefined;
  }

  /** Removes key; returns its value, or undefined when it was not there. */
  delete(key: string): V | undefined {
    const [c, i] = this.seek(key, false);
    const ks = this.keys[c];
    if (ks === undefined || ks[i] !== key) return undefined;
    const vs = this.vals[c]!;
    const old = vs[i];
    ks.splice(i, 1);
    vs.splice(i, 1);
    this.count--;
    this.shape++;
    if (ks.length === 0) {
      this.keys.splice(c, 1);
      this.vals.splice(c, 1);
      this.lasts.splice(c, 1);
    } else if (i === ks.length) this.lasts[c] = ks[ks.length - 1]!;
    return old;
  }

  /**
   * Entries in key order from the first key >= `from` (> `from` when `strict`), or from the start.
   * Writes between steps are fine: the iterator goes on after the last key it yielded.
   */
  *entries(from?: string, strict = false): Generator<[string, V]> {
    let [c, i] = from === undefined ? [0, 0] : this.seek(from, strict);
    let shape = this.shape;
    let last: string | undefined;
    for (;;) {
      if (shape !== this.shape && last !== undefined) {
        [c, i] = this.seek(last, true);
        shape = this.shape;
      }
      let ks = this.keys[c];
      if (ks !== undefined && i >= ks.length) {
        c++;
        i = 0;
        ks = this.keys[c];
      }
      if (ks === undefined) return;
      last = ks[i]!;
      const v = this.vals[c]![i]!;
      i++;
      yield [last, v];
    }
  }

  /** Keeps the entries for which keep(key, value) is true, in one pass. */
  retain(keep: (key: string, value: V) => boolean): void {
    const keys: string[][] = [];
    const vals: V[][] = [];
    const lasts: string[] = [];
    let count = 0;
    for (let c = 0; c < this.keys.length; c++) {
      const ks = this.keys[c]!;
      const vs = this.vals[c]!;
      const nk: string[] = [];
      const nv: V[] = [];
      for (let i = 0; i < ks.length; i++) {
        if (!keep(ks[i]!, vs[i]!)) continue;
        nk.push(ks[i]!);
        nv.push(vs[i]!);
      }
      if (nk.length === 0) continue;
      keys.push(nk);
      vals.push(nv);
      lasts.push(nk[nk.length - 1]!);
      count += nk.length;
    }
    if (count !== this.count) this.shape++;
    this.keys = keys;
    this.vals = vals;
    this.lasts = lasts;
    this.count = count;
  }
}
