/**
 * Watch cache: a `Storage` in front of another, as kube-apiserver's cacher
 * sits in front of etcd.
 *
 * - The latest state of every key is held in memory (loaded with one list at
 *   start, then kept current by one backend watch); `get` and `list` at the
 *   latest revision are served from it. A list at any other revision (the
 *   next page of a paginated list after writes happened) goes to the backend.
 * - A window of recent events serves every watcher from that one backend
 *   watch. The window keeps events younger than `eventFreshMs` (75 s, like
 *   kube-apiserver), at least `minEvents` and at most `historyWindow`. A watch
 *   from a revision older than the window fails with StorageError 'Compacted'
 *   (the HTTP layer answers 410 Gone and the client re-lists), even when the
 *   backend still has that history.
 * - Writes and compaction pass through to the backend.
 * - Watch callbacks run synchronously inside the backend's event delivery and
 *   must not block (see watcher-hub.ts); a slow consumer buffers.
 * - If the backend watch fails, every cache watcher is ended with the error,
 *   reads fall through to the backend, and the cache re-initialises after
 *   `retryMs`.
 *
 * Objects are shared with the backend's events: deep-frozen, never copied.
 *
 * Keys under `uncachedPrefixes` (kube-apiserver's DefaultWatchCacheSizes: no
 * watch cache for events) keep only their key and revision here, when the
 * backend can read values lazily (sqlite): a get, a list or a watch within
 * such a prefix, or a watch whose prefix covers one, goes to the backend,
 * and their writes stay out of the window. Lists over a wider prefix still
 * include them (their values are read on first use).
 *
 * Start-up cost is kept flat in the size of the store: when the backend
 * offers `listLazy` (sqlite does), the initial load takes only keys and
 * revisions, and each value is read from the backend and decoded on its first
 * read (LazyStoredObject; the objects of a list are read in batches when the
 * first of them is read, those walked by a filter before it runs). A
 * value replaced by a write before anyone read it takes the replaced value
 * from that write's event, so objects already handed out never need a row
 * that compaction may remove. Reading a never-read object after the cache
 * closed throws StorageError 'Closed'.
 */
import type { KubeObject } from '../../api/types.js';
import { realClock, type Clock, type Timer } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
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
import { SortedMap } from '../../util/sorted/sorted-map.js';
import { newWatcherHub } from './watcher-hub.js';
import { hasLazyList, LazyStoredObject, prefetch, readTogether, withRevision, type LazyListSource } from './stored-object.js';

const log = newLogger('watch-cache');

export interface CachedStorageOptions {
  /** Most events kept for watch replay. Default 102400 (kube-apiserver's upper bound). */
  historyWindow?: number;
  /** Fewest events kept, however old. Default 100 (kube-apiserver's lower bound). */
  minEvents?: number;
  /** Events younger than this are kept (up to historyWindow). Default 75 s. */
  eventFreshMs?: number;
  /** Delay before re-initialising after the backend watch failed. Default 1 s. */
  retryMs?: number;
  /** Key prefixes whose values the cache does not hold (see above). Default none. */
  uncachedPrefixes?: readonly string[];
  /** Close the backend when the cache closes. Default true. */
  closeBackend?: boolean;
  clock?: Clock;
}

/** Values read per batch while a filtered list walks not-yet-read objects. */
const PREFETCH_BATCH = 512;

/**
 * An event in the replay window. Over a backend that reads values lazily
 * (sqlite), the window holds no superseded value: an event keeps its object
 * only while that is the key's latest value (the one the cache holds anyway)
 * and never its previous object, which are read back from the backend by
 * revision when a watch replays the event. Over any other backend it keeps
 * the whole event (`full`).
 */
interface WindowEvent {
  readonly type: StorageEvent['type'];
  readonly key: string;
  readonly revision: number;
  /** Revision of the value this event replaced; 0 for ADDED. */
  readonly prevRevision: number;
  /** The written value while it is the key's latest (never for DELETED). */
  object: KubeObject | undefined;
  /** The whole event, when the backend cannot read values back. */
  readonly full: StorageEvent | undefined;
  readonly at: number;
}

class CachedStorage implements Storage {
  // invariant: the latest value of every key, in key order (loading is appending in chunks,
  // lookups are binary searches, a new key moves one chunk)
  private objects = new SortedMap<StoredObject>();
  private rev = 0;
  private window: WindowEvent[] = [];
  private head = 0; // first live index of window
  // invariant: every event with revision > windowStart is in the window
  private windowStart = 0;
  private ready = false;
  private closed = false;
  private backendWatch: WatchHandle | undefined;
  private retryTimer: Timer | undefined;
  private readonly hub = newWatcherHub();
  private readonly historyWindow: number;
  private readonly minEvents: number;
  private readonly eventFreshMs: number;
  private readonly retryMs: number;
  private readonly clock: Clock;
  private readonly uncachedPrefixes: readonly string[];
  /** The backend as a source of unread objects; undefined when it cannot read lazily (then nothing is uncached). */
  private readonly lazySource: LazyListSource | undefined;

  constructor(
    private readonly backend: Storage,
    private readonly opts: CachedStorageOptions,
  ) {
    this.historyWindow = opts.historyWindow ?? 100 * 1024;
    this.minEvents = Math.min(opts.minEvents ?? 100, this.historyWindow);
    this.eventFreshMs = opts.eventFreshMs ?? 75_000;
    this.retryMs = opts.retryMs ?? 1000;
    this.clock = opts.clock ?? realClock;
    // Without lazily read values the cache must hold them: everything is cached.
    this.lazySource = hasLazyList(backend) ? backend : undefined;
    this.uncachedPrefixes = this.lazySource ? (opts.uncachedPrefixes ?? []) : [];
  }

  /** Whether the cache holds no value for `key`. */
  private uncached(key: string): boolean {
    for (const p of this.uncachedPrefixes) if (key.startsWith(p)) return true;
    return false;
  }

  /** Whether a list or watch of `prefix` reaches keys the cache holds no values for. */
  private reachesUncached(prefix: string): boolean {
    for (const p of this.uncachedPrefixes) if (prefix.startsWith(p) || p.startsWith(prefix)) return true;
    return false;
  }

  /** Loads the state with one list and starts the backend watch from its revision. */
  async init(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const backend = this.backend;
      const l = hasLazyList(backend) ? backend.listLazy('') : await backend.list('');
      if (this.closed) return;
      const objects = l.items.slice();
      if (this.objects.size > 0) {
        // a re-initialisation: keep the objects already decoded
        const previous = new Map(this.objects.entries());
        for (let i = 0; i < objects.length; i++) {
          const old = previous.get(objects[i]!.key);
          if (old !== undefined && old.revision === objects[i]!.revision) {
            objects[i] = old;
            previous.delete(old.key);
          }
        }
        this.detach(previous.values());
      }
      this.objects = SortedMap.fromSorted(
        objects.map((o) => o.key),
        objects,
      );
      this.rev = l.revision;
      this.window = [];
      this.head = 0;
      this.windowStart = l.revision;
      try {
        this.backendWatch = this.backend.watch('', l.revision, (e) => this.apply(e), (err) => this.onBackendError(err));
        this.ready = true;
        return;
      } catch (err) {
        // compacted between list and watch: list again
        if (!(err instanceof StorageError && err.code === 'Compacted') || attempt >= 5) throw err;
        log.warn({ revision: l.revision }, 'backend compacted during cache initialisation; listing again');
      }
    }
  }

  currentRevision(): number {
    return this.backend.currentRevision();
  }

  compactedRevision(): number {
    return this.backend.compactedRevision();
  }

  /** True when the cache has applied everything the backend committed. */
  private fresh(): boolean {
    return this.ready && this.rev >= this.backend.currentRevision();
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.checkOpen(key);
    if (!this.fresh() || this.uncached(key)) return this.backend.get(key);
    return this.objects.get(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen(prefix);
    const at = opts.revision;
    if (!this.fresh() || (at !== undefined && at !== 0 && at !== this.rev) || this.uncached(prefix)) return this.backend.list(prefix, opts);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const filter = opts.filter;
    const after = opts.startAfter !== undefined && opts.startAfter >= prefix;
    const it = this.objects.entries(after ? opts.startAfter : prefix, after);
    const items: StoredObject[] = [];
    let more = false;
    let remaining = 0;
    // Taken in batches: with a filter, a batch's values are read together before the filter walks them.
    for (let done = false; !done; ) {
      const batch: StoredObject[] = [];
      for (let r = it.next(); ; r = it.next()) {
        if (r.done || !r.value[0].startsWith(prefix)) {
          done = true;
          break;
        }
        batch.push(r.value[1]);
        if (batch.length >= PREFETCH_BATCH) break;
      }
      if (filter) prefetch(batch);
      for (const so of batch) {
        if (filter && !filter(so.object)) continue;
        if (items.length >= limit) {
          more = true;
          if (filter) {
            done = true;
            break;
          }
          remaining++;
          continue;
        }
        items.push(so);
      }
    }
    if (!filter) readTogether(items);
    const result: ListResult = { items, revision: this.rev, more };
    if (limit !== Infinity && !filter) result.remaining = remaining;
    return result;
  }

  /**
   * Objects leaving the cache unread take their value now (`prev`: the
   * replaced value from the event that replaced them), as their row may be
   * compacted away while someone still holds them.
   */
  private detach(objects: Iterable<StoredObject>, prev?: KubeObject): void {
    for (const so of objects) {
      if (!(so instanceof LazyStoredObject) || so.pendingReader() === undefined) continue;
      try {
        so.superseded(prev);
      } catch (err) {
        log.error(err, { key: so.key, revision: so.revision }, 'cannot read a value leaving the watch cache');
      }
    }
  }

  create(key: string, object: KubeObject): Promise<StoredObject> {
    return this.closed ? Promise.reject(new StorageError('Closed', key, 'storage closed')) : this.backend.create(key, object);
  }

  update(key: string, object: KubeObject, pre?: Preconditions): Promise<StoredObject> {
    return this.closed ? Promise.reject(new StorageError('Closed', key, 'storage closed')) : this.backend.update(key, object, pre);
  }

  delete(key: string, pre?: Preconditions): Promise<StoredObject> {
    return this.closed ? Promise.reject(new StorageError('Closed', key, 'storage closed')) : this.backend.delete(key, pre);
  }

  watch(prefix: string, fromRevision: number, onEvent: (e: StorageEvent) => void, onError?: (err: Error) => void): WatchHandle {
    this.checkOpen(prefix);
    if (!this.ready || this.reachesUncached(prefix)) return this.backend.watch(prefix, fromRevision, onEvent, onError);
    const oldest = Math.max(this.windowStart, this.backend.compactedRevision());
    if (fromRevision < oldest) {
      throw new StorageError('Compacted', prefix, `revision ${fromRevision} is older than the watch cache window (oldest: ${oldest})`);
    }
    const events: WindowEvent[] = [];
    for (let i = this.firstAfter(fromRevision); i < this.window.length; i++) {
      const e = this.window[i]!;
      if (e.key.startsWith(prefix)) events.push(e);
    }
    return this.hub.add(prefix, fromRevision, this.replayOf(prefix, events), onEvent, onError);
  }

  /**
   * The events of `window` as watchers get them, the values the window does
   * not hold read from the backend in batches. A value compaction removed
   * fails the watch as too old ('Compacted': the client lists again).
   */
  private replayOf(prefix: string, window: readonly WindowEvent[]): StorageEvent[] {
    const source = this.lazySource;
    if (!source) return window.map((w) => w.full!);
    // one read per revision: an event's value is the next one's previous value, one shared object as in live events
    const reads = new Map<number, StoredObject>();
    const read = (key: string, revision: number): StoredObject => {
      let so = reads.get(revision);
      if (so === undefined) reads.set(revision, (so = source.lazyObject(key, revision)));
      return so;
    };
    const thin = window.map((w) => ({
      w,
      // the written value, unless the window still holds it (a DELETED event's is its previous one)
      written: w.full || w.object !== undefined || w.type === 'DELETED' ? undefined : read(w.key, w.revision),
      prev: !w.full && w.prevRevision ? read(w.key, w.prevRevision) : undefined,
    }));
    try {
      prefetch([...reads.values()]);
      return thin.map(({ w, written, prev }): StorageEvent => {
        if (w.full) return w.full;
        const object = w.object ?? written?.object;
        if (w.type === 'ADDED') return { type: 'ADDED', key: w.key, object: object!, revision: w.revision };
        const prevObject = prev!.object;
        if (w.type === 'MODIFIED') return { type: 'MODIFIED', key: w.key, object: object!, prevObject, revision: w.revision };
        return { type: 'DELETED', key: w.key, object: withRevision(prevObject, w.revision), prevObject, revision: w.revision };
      });
    } catch (err) {
      if (!(err instanceof StorageError) || err.code === 'Closed') throw err;
      const e = new StorageError('Compacted', prefix, `a value in the watch cache window is no longer readable: ${err.message}`);
      e.cause = err;
      throw e;
    }
  }

  compact(revision: number): Promise<void> {
    return this.closed ? Promise.reject(new StorageError('Closed', '', 'storage closed')) : this.backend.compact(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ready = false;
    this.retryTimer?.stop();
    this.backendWatch?.stop();
    this.hub.closeAll(new StorageError('Closed', '', 'storage closed'));
    if (this.opts.closeBackend ?? true) await this.backend.close();
  }

  /** Number of events in the replay window (for tests and metrics). */
  windowSize(): number {
    return this.window.length - this.head;
  }

  /** Number of values the replay window holds itself (for tests): over a lazy backend, only keys' latest ones. */
  windowValues(): number {
    let n = 0;
    for (let i = this.head; i < this.window.length; i++) {
      const w = this.window[i]!;
      if (w.full) n += w.full.type === 'ADDED' ? 1 : 2;
      else if (w.object !== undefined) n++;
    }
    return n;
  }

  private apply(e: StorageEvent): void {
    if (e.revision <= this.rev) return;
    // An uncached key keeps its key and revision only, its value unread in the backend.
    const lazy = this.uncached(e.key) ? this.lazySource : undefined;
    const old = this.objects.get(e.key);
    if (old !== undefined && e.type !== 'ADDED') this.detach([old], e.prevObject);
    if (e.type === 'DELETED') this.objects.delete(e.key);
    else this.objects.set(e.key, lazy ? lazy.lazyObject(e.key, e.revision) : { key: e.key, object: e.object, revision: e.revision });
    this.rev = e.revision;
    if (lazy) return; // no window event: watches of these keys are the backend's
    this.window.push(this.windowEventOf(e));
    this.trimWindow();
    this.hub.dispatch(e);
  }

  private windowEventOf(e: StorageEvent): WindowEvent {
    const at = this.clock.now();
    if (!this.lazySource) return { type: e.type, key: e.key, revision: e.revision, prevRevision: 0, object: undefined, full: e, at };
    let prevRevision = 0;
    if (e.type !== 'ADDED') {
      prevRevision = Number(e.prevObject.metadata?.resourceVersion);
      if (!(prevRevision > 0)) return { type: e.type, key: e.key, revision: e.revision, prevRevision: 0, object: undefined, full: e, at };
      // the replaced value is no longer the key's latest: its event lets go of it
      const i = this.firstAfter(prevRevision - 1);
      const prev = this.window[i];
      if (prev !== undefined && prev.revision === prevRevision) prev.object = undefined;
    }
    return { type: e.type, key: e.key, revision: e.revision, prevRevision, object: e.type === 'DELETED' ? undefined : e.object, full: undefined, at };
  }

  private trimWindow(): void {
    const now = this.clock.now();
    while (this.window.length - this.head > this.minEvents) {
      const oldest = this.window[this.head]!;
      if (this.window.length - this.head <= this.historyWindow && now - oldest.at < this.eventFreshMs) break;
      this.windowStart = oldest.revision;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.window.length) {
      this.window = this.window.slice(this.head);
      this.head = 0;
    }
  }

  /** Index in `window` of the first event with revision > `rev`. */
  private firstAfter(rev: number): number {
    let lo = this.head;
    let hi = this.window.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.window[mid]!.revision <= rev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private onBackendError(err: Error): void {
    this.ready = false;
    this.backendWatch = undefined;
    this.hub.closeAll(err);
    if (this.closed || (err instanceof StorageError && err.code === 'Closed')) return;
    log.error(err, { retryMs: this.retryMs }, 'backend watch failed; re-initialising the watch cache');
    this.scheduleInit();
  }

  private scheduleInit(): void {
    this.retryTimer = this.clock.setTimer(() => {
      this.retryTimer = undefined;
      this.init().catch((err: unknown) => {
        if (this.closed) return;
        log.error(err, { retryMs: this.retryMs }, 'watch cache initialisation failed; retrying');
        this.scheduleInit();
      });
    }, this.retryMs);
  }

  private checkOpen(key: string): void {
    if (this.closed) throw new StorageError('Closed', key, 'storage closed');
  }
}

/**
 * A watch cache over `backend`, ready to serve (its initial list done).
 * Closing it closes the backend unless `closeBackend` is false.
 */
export async function newCachedStorage(backend: Storage, opts: CachedStorageOptions = {}): Promise<Storage & { windowSize(): number; windowValues(): number }> {
  const c = new CachedStorage(backend, opts);
  await c.init();
  return c;
}
