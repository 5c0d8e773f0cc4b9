/**
 * Storage: the API server's persistence contract, shaped like etcd v3 so an
 * etcd backend can be added without touching the handlers.
 *
 * Keys are strings such as `/registry/pods/default/web-1` (cluster-scoped:
 * `/registry/nodes/n1`). Every write gets the next global revision; the stored
 * object's `metadata.resourceVersion` is set to that revision (as a string) on
 * every object the storage returns. Old revisions are kept (MVCC) until
 * compacted, so lists can be served at a past revision and watches replayed.
 */
import type { KubeObject } from '../../api/types.js';

export interface StoredObject {
  key: string;
  /**
   * metadata.resourceVersion === String(revision). Never mutate: may be shared.
   * May be a getter that reads and decodes the value on first use (a store
   * opened with many objects decodes none of them up front): read `object`,
   * never copy a StoredObject with spread or structuredClone. A first read
   * after the storage closed throws StorageError 'Closed'.
   */
  readonly object: KubeObject;
  /** Revision of the write that produced this value (etcd mod_revision). */
  revision: number;
}

export type StorageEvent =
  | { type: 'ADDED'; key: string; object: KubeObject; revision: number }
  | { type: 'MODIFIED'; key: string; object: KubeObject; prevObject: KubeObject; revision: number }
  /** `object` is the last state before deletion, with resourceVersion set to the deletion revision. */
  | { type: 'DELETED'; key: string; object: KubeObject; prevObject: KubeObject; revision: number };

export interface ListResult {
  items: StoredObject[];
  /** The revision the list was read at. */
  revision: number;
  /** True when `limit` cut the list; continue with startAfter = last key, at the same revision. */
  more: boolean;
  /** With a limit: how many more items remain (etcd's remaining count), when known. */
  remaining?: number;
}

export interface ListOptions {
  /** Maximum items (0 or undefined: all). */
  limit?: number;
  /** Only keys strictly after this one (pagination). */
  startAfter?: string;
  /** Read at this past revision; StorageError 'Compacted' if older than the compaction. */
  revision?: number;
  /** Predicate applied before the limit counts (label/field selectors). */
  filter?: (obj: KubeObject) => boolean;
}

export type StorageErrorCode = 'NotFound' | 'KeyExists' | 'Conflict' | 'Compacted' | 'Closed' | 'Internal';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message?: string,
    /** For Conflict: the current stored object. */
    readonly current?: StoredObject,
  ) {
    super(message ?? `${code}: ${key}`);
    this.name = 'StorageError';
  }
}

export interface Preconditions {
  /** The write applies only if the key's current revision equals this. */
  revision?: number;
}

export interface WatchHandle {
  stop(): void;
}

export interface Storage {
  /** Latest committed revision (0 when empty). */
  currentRevision(): number;
  /** Oldest revision still readable (0 when never compacted). */
  compactedRevision(): number;
  get(key: string): Promise<StoredObject | undefined>;
  /** Items under `prefix` in key order. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** StorageError KeyExists if present. */
  create(key: string, object: KubeObject): Promise<StoredObject>;
  /** StorageError NotFound if absent, Conflict if the precondition fails. */
  update(key: string, object: KubeObject, pre?: Preconditions): Promise<StoredObject>;
  /** StorageError NotFound if absent, Conflict if the precondition fails. Returns the deleted value. */
  delete(key: string, pre?: Preconditions): Promise<StoredObject>;
  /**
   * Calls `onEvent` for every change under `prefix` with revision > `fromRevision`,
   * in revision order: first replayed history, then live changes. Throws
   * StorageError Compacted if `fromRevision` < compactedRevision().
   * `onError` is called once if the watch cannot continue.
   */
  watch(prefix: string, fromRevision: number, onEvent: (e: StorageEvent) => void, onError?: (err: Error) => void): WatchHandle;
  /** Drops history older than `revision`. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}
