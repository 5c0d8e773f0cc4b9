/**
 * The list algorithm over an MVCC index, shared by the backends: keys under a
 * prefix in key order, live at one revision, after `startAfter`, filtered,
 * cut at `limit`.
 */
import type { ListOptions, ListResult, StoredObject } from './storage.js';
import type { KeyRevision, MvccIndex } from './mvcc-index.js';

/**
 * Lists `prefix` at revision `at` (the caller has checked it is readable).
 * `load` turns an index entry into the stored object (it may read a database).
 *
 * `more` is true only when another item (matching the filter) follows the
 * last one returned. `remaining` (etcd's remaining count) is set when there is
 * a limit and no filter.
 */
export function listFromIndex<V>(
  index: MvccIndex<V>,
  prefix: string,
  at: number,
  opts: ListOptions,
  load: (key: string, e: KeyRevision<V>) => StoredObject,
): ListResult {
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const filter = opts.filter;
  const items: StoredObject[] = [];
  let more = false;
  let remaining = 0;
  for (const key of index.keysUnder(prefix, opts.startAfter)) {
    const e = index.liveAt(key, at);
    if (!e) continue;
    if (items.length >= limit) {
      if (!filter) {
        more = true;
        remaining++;
        continue;
      }
      if (filter(load(key, e).object)) {
        more = true;
        break;
      }
      continue;
    }
    const so = load(key, e);
    if (filter && !filter(so.object)) continue;
    items.push(so);
  }
  const result: ListResult = { items, revision: at, more };
  if (limit !== Infinity && !filter) result.remaining = remaining;
  return result;
}
