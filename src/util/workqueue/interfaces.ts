/**
 * Work queues (client-go util/workqueue). Items are compared by value
 * (strings, numbers) or identity (objects): use string keys.
 */

export interface Queue<T> {
  /** Queues `item` unless it is already waiting; if it is being processed, it is queued again after done(). */
  add(item: T): void;
  len(): number;
  /**
   * Waits for an item and marks it processing; undefined once the queue is
   * shut down and empty (items queued before the shutdown are still handed
   * out, as in client-go). Call done(item) when finished.
   */
  get(): Promise<T | undefined>;
  /** Marks processing finished; requeues the item if it was added meanwhile. */
  done(item: T): void;
  /** Ignores later adds; waiting getters receive undefined (see get for items already queued). */
  shutDown(): void;
  /** Like shutDown, but resolves only after every item being processed is done. */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

export interface DelayingQueue<T> extends Queue<T> {
  /** Adds `item` once `delayMs` has passed on the queue's clock. */
  addAfter(item: T, delayMs: number): void;
}

export interface RateLimiter<T> {
  /** How long (ms) to wait before the item's next try; counts a failure. */
  when(item: T): number;
  /** Stops tracking the item: call on success, or the limiter keeps counting. */
  forget(item: T): void;
  numRequeues(item: T): number;
}

export interface RateLimitingQueue<T> extends DelayingQueue<T> {
  /** Adds after the limiter's delay for this item. */
  addRateLimited(item: T): void;
  /** Call forget(item) on success, or the limiter keeps counting. */
  forget(item: T): void;
  numRequeues(item: T): number;
}
