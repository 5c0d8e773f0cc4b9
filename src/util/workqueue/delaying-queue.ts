/**
 * A work queue that can add items later (client-go delaying_queue.go).
 *
 * Waiting items sit in a min-heap by deadline with one clock timer armed for
 * the earliest. addAfter of an item already waiting keeps the earlier
 * deadline; a delay <= 0 adds at once. Shutting down stops the timer and
 * drops the waiting items.
 */

import { realClock, type Clock, type Timer } from '../clock/clock.js';
import type { DelayingQueue, Queue } from './interfaces.js';
import { linkDebugQueue } from './debug.js';
import { getDefaultWorkqueueMetricsProvider, newRetryMetric, type CounterMetric } from './metrics.js';
import { newQueue, type QueueOptions } from './queue.js';

export interface DelayingQueueOptions<T> extends QueueOptions {
  /** The queue that receives items when they are due; default: newQueue with the same name, clock and metrics. */
  queue?: Queue<T>;
}

interface WaitEntry<T> {
  item: T;
  readyAt: number;
  /** Position in the heap. */
  index: number;
}

/** Min-heap of entries by readyAt, with decrease-key. */
class DeadlineHeap<T> {
  readonly entries: WaitEntry<T>[] = [];

  get size(): number {
    return this.entries.length;
  }
  peek(): WaitEntry<T> | undefined {
    return this.entries[0];
  }
  push(e: WaitEntry<T>): void {
    e.index = this.entries.length;
    this.entries.push(e);
    this.up(e.index);
  }
  pop(): WaitEntry<T> | undefined {
    const top = this.entries[0];
    if (!top) return undefined;
    const last = this.entries.pop()!;
    if (last !== top) {
      this.entries[0] = last;
      last.index = 0;
      this.down(0);
    }
    top.index = -1;
    return top;
  }
  /** Call after lowering e.readyAt. */
  decreased(e: WaitEntry<T>): void {
    this.up(e.index);
  }
  clear(): void {
    this.entries.length = 0;
  }

  private swap(i: number, j: number): void {
    const a = this.entries[i]!;
    const b = this.entries[j]!;
    this.entries[i] = b;
    this.entries[j] = a;
    a.index = j;
    b.index = i;
  }
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.entries[parent]!.readyAt <= this.entries[i]!.readyAt) break;
      this.swap(i, parent);
      i = parent;
    }
  }
  private down(i: number): void {
    const n = this.entries.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < n && this.entries[l]!.readyAt < this.entries[min]!.readyAt) min = l;
      if (r < n && this.entries[r]!.readyAt < this.entries[min]!.readyAt) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }
}

class DelayingWorkQueue<T> implements DelayingQueue<T> {
  private readonly heap = new DeadlineHeap<T>();
  private readonly waiting = new Map<T, WaitEntry<T>>();
  private timer: Timer | undefined;
  /** Deadline the timer is armed for. */
  private timerAt = Infinity;
  private stopped = false;
  private readonly clock: Clock;
  private readonly queue: Queue<T>;
  private readonly retries: CounterMetric | undefined;

  constructor(opts: DelayingQueueOptions<T>) {
    this.clock = opts.clock ?? realClock;
    this.queue = opts.queue ?? newQueue<T>(opts);
    this.retries = newRetryMetric(opts.metrics ?? getDefaultWorkqueueMetricsProvider(), opts.name);
    linkDebugQueue(this, this.queue);
  }

  addAfter(item: T, delayMs: number): void {
    if (this.queue.shuttingDown()) return;
    this.retries?.inc();
    if (!(delayMs > 0)) {
      this.queue.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waiting.get(item);
    if (existing) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.heap.decreased(existing);
      }
    } else {
      const entry: WaitEntry<T> = { item, readyAt, index: -1 };
      this.heap.push(entry);
      this.waiting.set(item, entry);
    }
    this.arm();
  }

  add(item: T): void {
    this.queue.add(item);
  }
  len(): number {
    return this.queue.len();
  }
  get(): Promise<T | undefined> {
    return this.queue.get();
  }
  done(item: T): void {
    this.queue.done(item);
  }
  shutDown(): void {
    this.stop();
    this.queue.shutDown();
  }
  shutDownWithDrain(): Promise<void> {
    this.stop();
    return this.queue.shutDownWithDrain();
  }
  shuttingDown(): boolean {
    return this.queue.shuttingDown();
  }

  /** Ensures the timer is armed for the earliest deadline. */
  private arm(): void {
    const head = this.heap.peek();
    if (this.stopped || !head) return;
    if (this.timer && this.timerAt <= head.readyAt) return;
    this.timer?.stop();
    this.timerAt = head.readyAt;
    this.timer = this.clock.setTimer(() => this.fire(), head.readyAt - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.stopped) return;
    const now = this.clock.now();
    for (let head = this.heap.peek(); head && head.readyAt <= now; head = this.heap.peek()) {
      this.heap.pop();
      this.waiting.delete(head.item);
      this.queue.add(head.item);
    }
    this.arm();
  }

  private stop(): void {
    this.stopped = true;
    this.timer?.stop();
    this.timer = undefined;
    this.timerAt = Infinity;
    this.heap.clear();
    this.waiting.clear();
  }
}

/** A new delaying queue; see the module comment. */
export function newDelayingQueue<T>(opts: DelayingQueueOptions<T> = {}): DelayingQueue<T> {
  return new DelayingWorkQueue<T>(opts);
}
