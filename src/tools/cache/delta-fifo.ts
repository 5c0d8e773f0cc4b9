/**
 * DeltaFIFO (client-go tools/cache/delta_fifo.go): a queue of object keys,
 * each carrying the ordered list of changes (deltas) seen for that object
 * since it was last popped. The reflector writes into it; the informer pops
 * and applies the deltas to its indexer (the FIFO's `knownObjects`).
 *
 * Behaviour kept from client-go (with EmitDeltaTypeReplaced = true):
 * - replace() queues `Replaced` for every listed object and a `Deleted`
 *   carrying a DeletedFinalStateUnknown for every object queued or known but
 *   missing from the list;
 * - two consecutive Deleted deltas collapse into one (a tombstone loses to a
 *   real final state);
 * - delete() of an object neither queued nor known is ignored;
 * - resync() queues `Sync` for known objects that have nothing queued;
 * - hasSynced() is true once the first replace()'s items (or any earlier
 *   add/update/delete) have all been popped.
 */
import type { KeyFunc, TransformFunc } from './interfaces.js';
import { DeletedFinalStateUnknown } from './interfaces.js';
import { RingBuffer } from './ring-buffer.js';

export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

export interface Delta<T> {
  type: DeltaType;
  /** A DeletedFinalStateUnknown only for inferred deletions (type Deleted). */
  object: T | DeletedFinalStateUnknown<T>;
}

/** Oldest first. Never empty when handed to a pop() callback. */
export type Deltas<T> = Delta<T>[];

/** What the FIFO needs from the store it feeds: the informer's indexer. */
export interface KnownObjects<T> {
  listKeys(): string[];
  getByKey(key: string): T | undefined;
}

/** Thrown by pop() once the FIFO is closed and (for an in-flight waiter) empty. */
export class FIFOClosedError extends Error {
  constructor() {
    super('DeltaFIFO: manipulating with closed queue');
    this.name = 'FIFOClosedError';
  }
}

export interface DeltaFIFO<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T | DeletedFinalStateUnknown<T>): void;
  replace(items: T[], resourceVersion: string): void;
  resync(): void;
  /**
   * Waits for the oldest key, removes it and hands its deltas to `process`
   * (synchronously, before any other pop can run). `isInInitialList` is true
   * for items of the first replace(). Errors thrown by `process` propagate.
   * Rejects with FIFOClosedError once closed.
   */
  pop(process: (deltas: Deltas<T>, isInInitialList: boolean) => void): Promise<void>;
  close(): void;
  isClosed(): boolean;
  hasSynced(): boolean;
  /** Keys queued, oldest first. */
  listKeys(): string[];
  /** The deltas queued for `key` (a copy), or undefined. */
  getDeltas(key: string): Deltas<T> | undefined;
  /** The newest object queued per key. */
  list(): T[];
  len(): number;
}

export interface DeltaFIFOOptions<T> {
  keyFunc: KeyFunc<T>;
  /** The store the popped deltas are applied to; enables tombstones for known objects and resync. */
  knownObjects?: KnownObjects<T>;
  /** Applied to each object as it is queued (never to tombstones). */
  transform?: TransformFunc;
}

class DeltaFIFOImpl<T> implements DeltaFIFO<T> {
  // invariant: a key is in `queue` iff it is in `items`, exactly once.
  private readonly items = new Map<string, Deltas<T>>();
  private readonly queue = new RingBuffer<string>();
  private populated = false;
  private initialPopulationCount = 0;
  private closed = false;
  private waiters: (() => void)[] = [];
  private readonly keyFunc: KeyFunc<T>;
  private readonly knownObjects: KnownObjects<T> | undefined;
  private readonly transform: TransformFunc | undefined;

  constructor(opts: DeltaFIFOOptions<T>) {
    this.keyFunc = opts.keyFunc;
    this.knownObjects = opts.knownObjects;
    this.transform = opts.transform;
  }

  add(obj: T): void {
    this.populated = true;
    this.queueAction('Added', obj);
  }

  update(obj: T): void {
    this.populated = true;
    this.queueAction('Updated', obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyFunc(obj);
    this.populated = true;
    if (!this.items.has(key)) {
      if (this.knownObjects === undefined || this.knownObjects.getByKey(key) === undefined) return;
    }
    this.queueAction('Deleted', obj);
  }

  replace(list: T[], _resourceVersion: string): void {
    const keys = new Set<string>();
    for (const item of list) {
      const obj = this.transformed(item);
      const key = this.keyFunc(obj);
      keys.add(key);
      this.queueKeyed(key, 'Replaced', obj);
    }
    let queuedDeletions = 0;
    // Objects queued but not listed: deleted while we were not watching.
    for (const [key, deltas] of this.items) {
      if (keys.has(key)) continue;
      let last = deltas[deltas.length - 1]!.object;
      if (last instanceof DeletedFinalStateUnknown) last = last.obj;
      queuedDeletions++;
      this.queueKeyed(key, 'Deleted', new DeletedFinalStateUnknown<T>(key, last as T));
    }
    if (this.knownObjects) {
      for (const key of this.knownObjects.listKeys()) {
        if (keys.has(key) || this.items.has(key)) continue;
        const last = this.knownObjects.getByKey(key);
        queuedDeletions++;
        this.queueKeyed(key, 'Deleted', new DeletedFinalStateUnknown<T>(key, last as T));
      }
    }
    if (!this.populated) {
      this.populated = true;
      this.initialPopulationCount = keys.size + queuedDeletions;
    }
  }

  resync(): void {
    if (!this.knownObjects) return;
    for (const key of this.knownObjects.listKeys()) {
      // An object with queued deltas is skipped: the store still holds its
      // older state, and a Sync with it would move the object backwards.
      if (this.items.has(key)) continue;
      const obj = this.knownObjects.getByKey(key);
      if (obj === undefined) continue;
      this.queueKeyed(key, 'Sync', obj);
    }
  }

  async pop(process: (deltas: Deltas<T>, isInInitialList: boolean) => void): Promise<void> {
    while (this.queue.length === 0) {
      if (this.closed) throw new FIFOClosedError();
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
      });
    }
    const key = this.queue.shift()!;
    const deltas = this.items.get(key)!;
    this.items.delete(key);
    const isInInitialList = !this.hasSynced();
    if (this.initialPopulationCount > 0) this.initialPopulationCount--;
    process(deltas, isInInitialList);
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  isClosed(): boolean {
    return this.closed;
  }

  hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  listKeys(): string[] {
    return Array.from(this.queue);
  }

  getDeltas(key: string): Deltas<T> | undefined {
    const d = this.items.get(key);
    return d ? d.slice() : undefined;
  }

  list(): T[] {
    const out: T[] = [];
    for (const key of this.queue) {
      const deltas = this.items.get(key)!;
      const last = deltas[deltas.length - 1]!.object;
      out.push((last instanceof DeletedFinalStateUnknown ? last.obj : last) as T);
    }
    return out;
  }

  len(): number {
    return this.queue.length;
  }

  private transformed(obj: T): T {
    return this.transform ? (this.transform(obj) as T) : obj;
  }

  private queueAction(type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    if (!(obj instanceof DeletedFinalStateUnknown)) obj = this.transformed(obj);
    this.queueKeyed(this.keyFunc(obj), type, obj);
  }

  private queueKeyed(key: string, type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    const deltas = this.items.get(key);
    if (deltas === undefined) {
      this.items.set(key, [{ type, object: obj }]);
      this.queue.push(key);
      this.wake();
      return;
    }
    const prev = deltas[deltas.length - 1]!;
    if (type === 'Deleted' && prev.type === 'Deleted') {
      // Collapse consecutive deletions: the earlier one wins unless it is a tombstone.
      if (prev.object instanceof DeletedFinalStateUnknown) deltas[deltas.length - 1] = { type, object: obj };
      return;
    }
    deltas.push({ type, object: obj });
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}

export function newDeltaFIFO<T>(opts: DeltaFIFOOptions<T>): DeltaFIFO<T> {
  return new DeltaFIFOImpl<T>(opts);
}
