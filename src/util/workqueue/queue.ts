/**
 * The basic work queue (client-go util/workqueue queue.go).
 *
 * - FIFO, and an item waiting in the queue is queued only once (adds collapse).
 * - An item is handed to one worker at a time: while it is processing, an add
 *   marks it dirty and it is queued again when done() is called.
 * - After shutDown() adds are ignored; get() still hands out the items already
 *   queued (as client-go does) and returns undefined once the queue is empty.
 * - shutDownWithDrain() resolves once no item is processing (or shutDown() is
 *   called meanwhile); workers must keep calling done() until then.
 */

import { realClock, type Clock, type Timer } from '../clock/clock.js';
import type { Queue } from './interfaces.js';
import { registerDebugQueue, unregisterDebugQueue, type QueueDebug } from './debug.js';
import { getDefaultWorkqueueMetricsProvider, newQueueMetrics, type QueueMetrics, type WorkqueueMetricsProvider } from './metrics.js';

export interface QueueOptions {
  /** Names the queue in metrics and /debug/controllers (debug.ts); unnamed queues record neither. */
  name?: string;
  clock?: Clock;
  /** Default: the process-wide provider (setDefaultWorkqueueMetricsProvider), itself no-op by default. */
  metrics?: WorkqueueMetricsProvider;
  /** Period of the unfinished-work gauge updates; client-go uses 500 ms. */
  unfinishedWorkUpdatePeriodMs?: number;
}

export const DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD_MS = 500;

/** A FIFO of items with O(1) push and shift. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
  /** The first `limit` items, without removing them. */
  peek(limit: number): T[] {
    return this.items.slice(this.head, this.head + limit) as T[];
  }
}

class WorkQueue<T> implements Queue<T> {
  // invariant: an item is in `queue` iff it is in `dirty` and not in `processing`.
  private readonly queue = new Fifo<T>();
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  // invariant: getters wait only while `queue` is empty.
  private readonly getters: ((item: T | undefined) => void)[] = [];
  private drainers: (() => void)[] = [];
  private shutting = false;
  private unfinishedTimer: Timer | undefined;
  private readonly clock: Clock;
  private readonly metrics: QueueMetrics<T> | undefined;
  private readonly period: number;
  // Kept whether or not metrics are on; undefined for unnamed queues.
  private readonly debug: QueueDebug | undefined;

  constructor(opts: QueueOptions) {
    this.clock = opts.clock ?? realClock;
    this.metrics = newQueueMetrics<T>(opts.metrics ?? getDefaultWorkqueueMetricsProvider(), opts.name, this.clock);
    this.period = opts.unfinishedWorkUpdatePeriodMs ?? DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD_MS;
    this.debug = registerDebugQueue(this, opts.name, this.clock);
  }

  add(item: T): void {
    if (this.shutting || this.dirty.has(item)) return;
    this.metrics?.add(item);
    this.debug?.added();
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.handOut();
  }

  len(): number {
    return this.queue.length;
  }

  /** The first `limit` items waiting (debug.ts). */
  waiting(limit: number): T[] {
    return this.queue.peek(limit);
  }

  get(): Promise<T | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shutting) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(item: T): void {
    // A done() for an item that is not processing is a caller bug; ignoring it keeps the invariant.
    if (!this.processing.delete(item)) return;
    this.metrics?.done(item);
    this.debug?.finished(item);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.handOut();
    } else if (this.processing.size === 0) {
      if (this.unfinishedTimer) {
        // Idle: report zero now instead of at the next tick, and hold no timer.
        this.stopUnfinishedUpdates();
        this.metrics?.updateUnfinishedWork();
      }
      if (this.drainers.length > 0) this.resolveDrainers();
    }
  }

  shutDown(): void {
    this.shutting = true;
    unregisterDebugQueue(this.debug);
    this.stopUnfinishedUpdates();
    this.wakeGetters();
    this.resolveDrainers();
  }

  shutDownWithDrain(): Promise<void> {
    this.shutting = true;
    unregisterDebugQueue(this.debug);
    this.stopUnfinishedUpdates();
    this.wakeGetters();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainers.push(resolve));
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  private take(): T {
    const item = this.queue.shift();
    this.metrics?.get(item);
    this.debug?.started(item);
    this.processing.add(item);
    this.dirty.delete(item);
    if (this.metrics && !this.unfinishedTimer && !this.shutting) this.armUnfinishedUpdates();
    return item;
  }

  private handOut(): void {
    while (this.getters.length > 0 && this.queue.length > 0) {
      const resolve = this.getters.shift()!;
      resolve(this.take());
    }
  }

  private wakeGetters(): void {
    // Getters wait only on an empty queue, so they all get undefined.
    const getters = this.getters.splice(0);
    for (const resolve of getters) resolve(undefined);
  }

  private resolveDrainers(): void {
    const drainers = this.drainers;
    this.drainers = [];
    for (const resolve of drainers) resolve();
  }

  // The unfinished-work gauges are updated every period while items are
  // processing, and set to zero when the last one finishes; no timer is armed
  // on an idle or shut-down queue, so the queue never holds the process open.
  private armUnfinishedUpdates(): void {
    this.unfinishedTimer = this.clock.setTimer(() => {
      this.unfinishedTimer = undefined;
      if (this.shutting) return;
      this.metrics?.updateUnfinishedWork();
      this.armUnfinishedUpdates();
    }, this.period);
  }

  private stopUnfinishedUpdates(): void {
    this.unfinishedTimer?.stop();
    this.unfinishedTimer = undefined;
  }
}

/** A new work queue; see the module comment for its guarantees. */
export function newQueue<T>(opts: QueueOptions = {}): Queue<T> {
  return new WorkQueue<T>(opts);
}
