/**
 * WatcherHub: the watchers of one storage and the fan-out of its events.
 *
 * Contract for watchers (shared by every backend):
 * - `onEvent` is called synchronously from the write that produced the event
 *   (after the write is committed). It must not block: a watcher that needs to
 *   do slow work (write to a socket) buffers and returns. A callback that
 *   throws stops its own watch (its `onError` gets the error); others go on.
 * - Replayed history is delivered from a microtask after `watch` returns, so
 *   the caller always holds the handle before the first event; live events
 *   that arrive meanwhile are delivered after the replay, in revision order,
 *   each revision at most once.
 * - After `stop()` no more events are delivered.
 */
import type { StorageEvent, WatchHandle } from './storage.js';
import { newLogger } from '../../util/log/logger.js';

const log = newLogger('storage-watch');

export type EventCallback = (e: StorageEvent) => void;
export type ErrorCallback = (err: Error) => void;

export interface WatcherHub {
  /** Watchers currently registered. */
  readonly size: number;
  /**
   * Registers a watcher of keys under `prefix` that has seen everything up to
   * `fromRevision`; `replay` holds the history after it (in revision order,
   * any prefix: the hub filters).
   */
  add(prefix: string, fromRevision: number, replay: readonly StorageEvent[], onEvent: EventCallback, onError?: ErrorCallback): WatchHandle;
  /** Delivers a committed event to every matching watcher. */
  dispatch(e: StorageEvent): void;
  /** Ends every watch with `err` (each onError is called once). */
  closeAll(err: Error): void;
}

class Watcher {
  stopped = false;
  /** Live events received while the replay is pending; undefined once live. */
  pending: StorageEvent[] | undefined = [];
  constructor(
    readonly prefix: string,
    public lastRevision: number,
    readonly onEvent: EventCallback,
    readonly onError: ErrorCallback | undefined,
  ) {}
}

class Hub implements WatcherHub {
  private readonly byPrefix = new Map<string, Set<Watcher>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(prefix: string, fromRevision: number, replay: readonly StorageEvent[], onEvent: EventCallback, onError?: ErrorCallback): WatchHandle {
    const w = new Watcher(prefix, fromRevision, onEvent, onError);
    let set = this.byPrefix.get(prefix);
    if (!set) this.byPrefix.set(prefix, (set = new Set()));
    set.add(w);
    this.count++;
    queueMicrotask(() => {
      for (const e of replay) {
        if (w.stopped) return;
        if (e.key.startsWith(prefix)) this.deliver(w, e);
      }
      const buffered = w.pending ?? [];
      w.pending = undefined;
      for (const e of buffered) {
        if (w.stopped) return;
        this.deliver(w, e);
      }
    });
    return { stop: () => this.remove(w) };
  }

  dispatch(e: StorageEvent): void {
    for (const [prefix, set] of this.byPrefix) {
      if (!e.key.startsWith(prefix)) continue;
      for (const w of set) {
        if (w.pending) w.pending.push(e);
        else this.deliver(w, e);
      }
    }
  }

  closeAll(err: Error): void {
    const all = [...this.byPrefix.values()].flatMap((s) => [...s]);
    for (const w of all) this.fail(w, err);
  }

  private deliver(w: Watcher, e: StorageEvent): void {
    if (w.stopped || e.revision <= w.lastRevision) return;
    w.lastRevision = e.revision;
    try {
      w.onEvent(e);
    } catch (err) {
      log.error(err, { prefix: w.prefix, revision: e.revision }, 'watch callback threw; stopping that watch');
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private fail(w: Watcher, err: Error): void {
    if (w.stopped) return;
    this.remove(w);
    if (!w.onError) return;
    try {
      w.onError(err);
    } catch (e) {
      log.error(e, { prefix: w.prefix }, 'watch onError callback threw');
    }
  }

  private remove(w: Watcher): void {
    if (w.stopped) return;
    w.stopped = true;
    w.pending = undefined;
    const set = this.byPrefix.get(w.prefix);
    if (set?.delete(w)) {
      this.count--;
      if (set.size === 0) this.byPrefix.delete(w.prefix);
    }
  }
}

export function newWatcherHub(): WatcherHub {
  return new Hub();
}
