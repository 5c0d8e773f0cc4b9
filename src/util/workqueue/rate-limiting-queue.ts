/**
 * A delaying queue that asks a rate limiter how long to wait before re-adding
 * a failed item (client-go rate_limiting_queue.go).
 *
 *   const q = newRateLimitingQueue<string>(defaultControllerRateLimiter(clock), { name: 'replicaset', clock });
 *   // worker: on error q.addRateLimited(key); on success q.forget(key); always q.done(key).
 */

import type { DelayingQueue, RateLimiter, RateLimitingQueue } from './interfaces.js';
import { newDelayingQueue, type DelayingQueueOptions } from './delaying-queue.js';
import { defaultControllerRateLimiter } from './rate-limiters.js';
import { linkDebugQueue, type QueueDebug } from './debug.js';

export interface RateLimitingQueueOptions<T> extends DelayingQueueOptions<T> {
  /** The delaying queue to wrap; default: newDelayingQueue with the same name, clock and metrics. */
  delayingQueue?: DelayingQueue<T>;
}

class RateLimitingWorkQueue<T> implements RateLimitingQueue<T> {
  /** The debug entry of the wrapped queue (counts retries), when it is named. */
  private readonly debug: QueueDebug | undefined;

  constructor(
    private readonly queue: DelayingQueue<T>,
    private readonly limiter: RateLimiter<T>,
  ) {
    this.debug = linkDebugQueue(this, queue);
  }

  addRateLimited(item: T): void {
    if (!this.queue.shuttingDown()) this.debug?.retried();
    this.queue.addAfter(item, this.limiter.when(item));
  }
  forget(item: T): void {
    this.limiter.forget(item);
  }
  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  addAfter(item: T, delayMs: number): void {
    this.queue.addAfter(item, delayMs);
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
    this.queue.shutDown();
  }
  shutDownWithDrain(): Promise<void> {
    return this.queue.shutDownWithDrain();
  }
  shuttingDown(): boolean {
    return this.queue.shuttingDown();
  }
}

/** Remember to call forget(item) on success, or the limiter keeps counting its failures. */
export function newRateLimitingQueue<T>(limiter: RateLimiter<T>, opts: RateLimitingQueueOptions<T> = {}): RateLimitingQueue<T> {
  return new RateLimitingWorkQueue<T>(opts.delayingQueue ?? newDelayingQueue<T>(opts), limiter);
}

/** A rate-limiting queue with client-go's default controller limiter on the same clock. */
export function newDefaultRateLimitingQueue<T>(opts: RateLimitingQueueOptions<T> = {}): RateLimitingQueue<T> {
  return newRateLimitingQueue<T>(defaultControllerRateLimiter<T>(opts.clock), opts);
}
