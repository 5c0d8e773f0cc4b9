/**
 * A process-wide registry of the live named work queues, for the controller
 * manager's `/debug/controllers` (see DebugControllers in
 * debug-types.ts): what each queue holds, what it is syncing now, how
 * long its syncs take and how its last ones ended.
 *
 * - A named queue registers itself when created (queue.ts) and leaves the
 *   registry when shut down. Queues never shut down (tests make thousands)
 *   cannot pile up: past MAX_DEBUG_QUEUES the oldest entry is dropped.
 * - The queue layers (rate-limiting -> delaying -> basic queue) share the
 *   basic queue's entry, so any of them finds it (debugQueueOf).
 * - The queue feeds adds, retries and processing start/end; the worker loop
 *   feeds each sync's duration and error (recordSync), since only it knows them.
 * - Bookkeeping on the hot path is a few counters and one Map entry per item
 *   processing; waiting keys, percentiles and rates are computed on read.
 *
 * Times are ms since the epoch on the queue's Clock, so fake clocks work.
 */
import type { DebugControllers, QueueState } from './debug-types.js';
import type { Clock } from '../clock/clock.js';
import { Ring } from '../ring/ring.js';

/** Entries kept at most; a real controller manager has about 50 queues. */
export const MAX_DEBUG_QUEUES = 1000;
/** Sync durations kept per queue for the percentiles. */
export const DEBUG_DURATIONS = 1000;
/** Errors kept per queue. */
export const DEBUG_ERRORS = 20;
/** Syncs kept per queue. */
export const DEBUG_RECENT_SYNCS = 200;
/** Keys listed as waiting. */
export const DEBUG_WAITING_KEYS = 50;
/** Seconds the adds rate is averaged over. */
const RATE_WINDOW_SECONDS = 10;

/** What the registry reads from a queue on demand. */
export interface DebugQueueSource {
  /** Items waiting. */
  len(): number;
  /** The first `limit` items waiting, in order. */
  waiting(limit: number): readonly unknown[];
}

export interface SyncRecord {
  key: string;
  start: number;
  durationMs: number;
  error?: string;
}

/** The value at quantile q of ascending `sorted` (nearest rank), or null when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** One queue's debug state. The queue calls added/retried/started/finished; workers call recordSync. */
export class QueueDebug {
  /** Registration order; see debugQueueMark. */
  readonly seq: number;
  /** The controller that created the queue (claimDebugQueues). */
  controller: string | undefined;
  private addsTotal = 0;
  private retriesTotal = 0;
  // Adds per second over the last RATE_WINDOW_SECONDS: bucket i counts the adds of second addSeconds[i].
  private readonly addCounts = new Float64Array(RATE_WINDOW_SECONDS);
  private readonly addSeconds = new Float64Array(RATE_WINDOW_SECONDS).fill(-1);
  private readonly processing = new Map<unknown, number>();
  // Durations in ms, a ring of DEBUG_DURATIONS; made at the first sync (8 KB), as many queues never report one.
  private durations: Float64Array | undefined;
  private durationCount = 0;
  private readonly errors = new Ring<{ time: number; key: string; message: string }>(DEBUG_ERRORS);
  private readonly syncs = new Ring<SyncRecord>(DEBUG_RECENT_SYNCS);

  constructor(
    readonly name: string,
    private readonly clock: Clock,
    private readonly source: DebugQueueSource,
    seq: number,
  ) {
    this.seq = seq;
  }

  added(): void {
    this.addsTotal++;
    const second = Math.floor(this.clock.now() / 1000);
    const i = second % RATE_WINDOW_SECONDS;
    if (this.addSeconds[i] !== second) {
      this.addSeconds[i] = second;
      this.addCounts[i] = 0;
    }
    this.addCounts[i]!++;
  }

  retried(): void {
    this.retriesTotal++;
  }

  started(item: unknown): void {
    this.processing.set(item, this.clock.now());
  }

  finished(item: unknown): void {
    this.processing.delete(item);
  }

  /** One sync of `key`: `start` on the queue's clock, its duration, and its error when it failed. */
  recordSync(key: string, start: number, durationMs: number, error?: unknown): void {
    this.durations ??= new Float64Array(DEBUG_DURATIONS);
    this.durations[this.durationCount % DEBUG_DURATIONS] = durationMs;
    this.durationCount++;
    if (error === undefined) {
      this.syncs.push({ key, start, durationMs });
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    this.syncs.push({ key, start, durationMs, error: message });
    this.errors.push({ time: this.clock.now(), key, message });
  }

  /** The queue's state now (QueueState of the dashboard protocol). */
  state(): QueueState {
    const now = this.clock.now();
    const processing = [...this.processing]
      .map(([key, start]) => ({ key: String(key), seconds: Math.max(0, now - start) / 1000 }))
      .sort((a, b) => b.seconds - a.seconds);
    const kept = Math.min(this.durationCount, DEBUG_DURATIONS);
    const sorted = this.durations ? this.durations.slice(0, kept).sort() : [];
    const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);
    return {
      name: this.name,
      ...(this.controller !== undefined ? { controller: this.controller } : {}),
      depth: this.source.len(),
      adds: this.addsTotal,
      addsPerSecond: this.addRate(now),
      retries: this.retriesTotal,
      processing,
      longestRunningSeconds: processing[0]?.seconds ?? 0,
      waiting: this.source.waiting(DEBUG_WAITING_KEYS).map(String),
      duration: { count: this.durationCount, p50: seconds(quantile(sorted, 0.5)), p90: seconds(quantile(sorted, 0.9)), p99: seconds(quantile(sorted, 0.99)) },
      lastErrors: this.errors.toArray(),
    };
  }

  /** The last syncs, oldest first. */
  recentSyncs(): SyncRecord[] {
    return this.syncs.toArray();
  }

  private addRate(now: number): number {
    const second = Math.floor(now / 1000);
    let sum = 0;
    for (let i = 0; i < RATE_WINDOW_SECONDS; i++) {
      const s = this.addSeconds[i]!;
      if (s > second - RATE_WINDOW_SECONDS && s <= second) sum += this.addCounts[i]!;
    }
    return sum / RATE_WINDOW_SECONDS;
  }
}

/** Registered entries in registration order (Map order), so the oldest is evicted first. */
const registry = new Map<number, QueueDebug>();
/** Every queue layer -> its basic queue's entry; weak, so it never keeps a queue alive. */
const byQueue = new WeakMap<object, QueueDebug>();
let lastSeq = 0;

/**
 * Registers `queue` (the basic queue, its own DebugQueueSource) under `name`.
 * Unnamed queues are not registered (undefined), as they report no metrics.
 */
export function registerDebugQueue(queue: object & DebugQueueSource, name: string | undefined, clock: Clock): QueueDebug | undefined {
  if (!name) return undefined;
  const entry = new QueueDebug(name, clock, queue, ++lastSeq);
  registry.set(entry.seq, entry);
  byQueue.set(queue, entry);
  if (registry.size > MAX_DEBUG_QUEUES) registry.delete(registry.keys().next().value!);
  return entry;
}

/** Removes the entry from the registry (the queue was shut down). */
export function unregisterDebugQueue(entry: QueueDebug | undefined): void {
  if (entry) registry.delete(entry.seq);
}

/** Makes `wrapper` (a delaying or rate-limiting queue) share the entry of the queue it wraps; returns that entry. */
export function linkDebugQueue(wrapper: object, inner: object): QueueDebug | undefined {
  const entry = byQueue.get(inner);
  if (entry) byQueue.set(wrapper, entry);
  return entry;
}

/** The entry of a queue (any layer), or undefined when it is unnamed. */
export function debugQueueOf(queue: object): QueueDebug | undefined {
  return byQueue.get(queue);
}

/**
 * Records one sync of `key` taken from `queue`, for loops that do not use
 * base-controller's QueueWorker: `start` is `clock.now()` before the sync,
 * `error` what it threw (omit on success). A no-op for unnamed queues.
 */
export function recordSync(queue: object, key: string, start: number, durationMs: number, error?: unknown): void {
  byQueue.get(queue)?.recordSync(key, start, durationMs, error);
}

/** The state of every registered queue, in registration order. */
export function debugQueueStates(): QueueState[] {
  return [...registry.values()].map((e) => e.state());
}

/** The last syncs of every registered queue (at most DEBUG_RECENT_SYNCS each) that started after `since`, oldest first. */
export function debugRecentSyncs(since = -Infinity): DebugControllers['recent'] {
  const out: DebugControllers['recent'] = [];
  for (const e of registry.values()) for (const s of e.recentSyncs()) if (s.start > since) out.push({ queue: e.name, ...s });
  return out.sort((a, b) => a.start - b.start);
}

/** A mark for claimDebugQueues: queues registered after it are newer. */
export function debugQueueMark(): number {
  return lastSeq;
}

/**
 * Attributes the registered queues created since `mark` (and not yet
 * claimed) to `controller`; returns their names. The controller manager
 * builds controllers one at a time, so the queues registered while one was
 * built are that controller's.
 */
export function claimDebugQueues(mark: number, controller: string): string[] {
  const names: string[] = [];
  for (const e of registry.values()) {
    if (e.seq <= mark || e.controller !== undefined) continue;
    e.controller = controller;
    names.push(e.name);
  }
  return names;
}
