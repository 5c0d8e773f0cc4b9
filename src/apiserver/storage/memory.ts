/**
 * In-memory MVCC storage: the `Storage` contract without persistence, for
 * tests and `--storage=memory`.
 *
 * Every write takes the next revision and is visible, and fanned out to the
 * watchers (synchronously, before its promise resolves), at once. History of
 * every key and the event log are kept until `compact` (or, with
 * `historyLimit`, the oldest revisions beyond the limit are compacted away).
 *
 * Objects are copied on the way in (JSON round trip, so only JSON survives)
 * and returned deep-frozen: results and events are shared, never copies.
 */
import type { KubeObject } from '../../api/types.js';
import {
  StorageError,
  type ListOptions,
  type ListResult,
  type Preconditions,
  type Storage,
  type StorageEvent,
  type StoredObject,
  type WatchHandle,
} from './storage.js';
import { newMvccIndex, type KeyRevision } from './mvcc-index.js';
import { newWatcherHub } from './watcher-hub.js';
import { decodeObject, encodeObject, withRevision } from './stored-object.js';
import { listFromIndex } from './list-index.js';

export interface MemoryStorageOptions {
  /** Keep at most this many revisions of history; older ones are compacted automatically. Default: unlimited. */
  historyLimit?: number;
}

class MemoryStorage implements Storage {
  private rev = 0;
  private compacted = 0;
  private closed = false;
  // value: the object as returned (frozen, resourceVersion = revision); for a
  // tombstone, the last state with resourceVersion = deletion revision
  private readonly index = newMvccIndex<KubeObject>();
  // invariant: events holds exactly one event per revision in (compacted, rev]
  private events: StorageEvent[] = [];
  private readonly hub = newWatcherHub();

  constructor(private readonly historyLimit?: number) {}

  currentRevision(): number {
    return this.rev;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.checkOpen(key);
    const e = this.index.liveAt(key, this.rev);
    return e ? { key, object: e.value, revision: e.revision } : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen(prefix);
    const at = this.readRevision(prefix, opts.revision);
    return listFromIndex(this.index, prefix, at, opts, (key, e) => ({ key, object: e.value, revision: e.revision }));
  }

  async create(key: string, object: KubeObject): Promise<StoredObject> {
    this.checkOpen(key);
    const cur = this.index.last(key);
    if (cur && !cur.deleted) throw new StorageError('KeyExists', key);
    const rev = this.rev + 1;
    const value = decodeObject(encodeObject(object), rev);
    this.commit(key, { revision: rev, createRevision: rev, version: 1, deleted: false, value }, { type: 'ADDED', key, object: value, revision: rev });
    return { key, object: value, revision: rev };
  }

  async update(key: string, object: KubeObject, pre?: Preconditions): Promise<StoredObject> {
    this.checkOpen(key);
    const cur = this.current(key, pre);
    const rev = this.rev + 1;
    const value = decodeObject(encodeObject(object), rev);
    this.commit(
      key,
      { revision: rev, createRevision: cur.createRevision, version: cur.version + 1, deleted: false, value },
      { type: 'MODIFIED', key, object: value, prevObject: cur.value, revision: rev },
    );
    return { key, object: value, revision: rev };
  }

  async delete(key: string, pre?: Preconditions): Promise<StoredObject> {
    this.checkOpen(key);
    const cur = this.current(key, pre);
    const rev = this.rev + 1;
    const last = withRevision(cur.value, rev);
    this.commit(
      key,
      { revision: rev, createRevision: 0, version: 0, deleted: true, value: last },
      { type: 'DELETED', key, object: last, prevObject: cur.value, revision: rev },
    );
    return { key, object: last, revision: rev };
  }

  watch(prefix: string, fromRevision: number, onEvent: (e: StorageEvent) => void, onError?: (err: Error) => void): WatchHandle {
    this.checkOpen(prefix);
    if (fromRevision < this.compacted) {
      throw new StorageError('Compacted', prefix, `revision ${fromRevision} has been compacted (oldest readable: ${this.compacted})`);
    }
    // events[i].revision === compacted + 1 + i
    const start = Math.max(0, fromRevision - this.compacted);
    const replay = start < this.events.length ? this.events.slice(start) : [];
    return this.hub.add(prefix, fromRevision, replay, onEvent, onError);
  }

  async compact(revision: number): Promise<void> {
    this.checkOpen('');
    this.compactTo(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hub.closeAll(new StorageError('Closed', '', 'storage closed'));
  }

  private compactTo(revision: number): void {
    if (revision > this.rev) throw new StorageError('Internal', '', `cannot compact to future revision ${revision} (current ${this.rev})`);
    if (revision <= this.compacted) return;
    this.index.compact(revision);
    this.events = this.events.slice(revision - this.compacted);
    this.compacted = revision;
  }

  /** The live entry of `key`, checking the preconditions. */
  private current(key: string, pre?: Preconditions): KeyRevision<KubeObject> {
    const cur = this.index.last(key);
    if (!cur || cur.deleted) throw new StorageError('NotFound', key);
    if (pre?.revision !== undefined && pre.revision !== cur.revision) {
      throw new StorageError('Conflict', key, `revision precondition failed: want ${pre.revision}, current ${cur.revision}`, {
        key,
        object: cur.value,
        revision: cur.revision,
      });
    }
    return cur;
  }

  private commit(key: string, entry: KeyRevision<KubeObject>, event: StorageEvent): void {
    this.index.put(key, entry);
    this.rev = entry.revision;
    this.events.push(event);
    this.hub.dispatch(event);
    const limit = this.historyLimit;
    if (limit !== undefined && this.events.length > limit + Math.max(100, limit >> 2)) this.compactTo(this.rev - limit);
  }

  private readRevision(key: string, revision: number | undefined): number {
    if (revision === undefined || revision === 0) return this.rev;
    if (revision < this.compacted) {
      throw new StorageError('Compacted', key, `revision ${revision} has been compacted (oldest readable: ${this.compacted})`);
    }
    if (revision > this.rev) throw new StorageError('Internal', key, `revision ${revision} is in the future (current ${this.rev})`);
    return revision;
  }

  private checkOpen(key: string): void {
    if (this.closed) throw new StorageError('Closed', key, 'storage closed');
  }
}

/** A new empty in-memory storage. */
export function newMemoryStorage(opts: MemoryStorageOptions = {}): Storage {
  return new MemoryStorage(opts.historyLimit);
}
