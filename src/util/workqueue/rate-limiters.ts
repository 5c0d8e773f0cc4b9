/**
 * Rate limiters for work queues (client-go default_rate_limiters.go).
 * when(item) counts a failure and says how long (ms) to wait before the next
 * try; forget(item) on success resets the per-item count.
 */

import { realClock, type Clock } from '../clock/clock.js';
import type { RateLimiter } from './interfaces.js';
import { TokenBucket } from './token-bucket.js';

class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    const backoff = this.baseMs * 2 ** exp;
    return backoff > this.maxMs || !Number.isFinite(backoff) ? this.maxMs : backoff;
  }
  forget(item: T): void {
    this.failures.delete(item);
  }
  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** Per item: baseMs * 2^(failures so far), capped at maxMs. */
export function newItemExponentialFailureRateLimiter<T>(baseMs: number, maxMs: number): RateLimiter<T> {
  return new ItemExponentialFailureRateLimiter<T>(baseMs, maxMs);
}

/** client-go's DefaultItemBasedRateLimiter: exponential from 1 ms, capped at 1000 s. */
export function defaultItemBasedRateLimiter<T>(): RateLimiter<T> {
  return newItemExponentialFailureRateLimiter<T>(1, 1000_000);
}

class ItemFastSlowRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly fastMs: number,
    private readonly slowMs: number,
    private readonly maxFastAttempts: number,
  ) {}

  when(item: T): number {
    const n = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, n);
    return n <= this.maxFastAttempts ? this.fastMs : this.slowMs;
  }
  forget(item: T): void {
    this.failures.delete(item);
  }
  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** Per item: fastMs for the first maxFastAttempts failures, slowMs after. */
export function newItemFastSlowRateLimiter<T>(fastMs: number, slowMs: number, maxFastAttempts: number): RateLimiter<T> {
  return new ItemFastSlowRateLimiter<T>(fastMs, slowMs, maxFastAttempts);
}

class BucketRateLimiter<T> implements RateLimiter<T> {
  constructor(private readonly bucket: TokenBucket) {}

  when(_item: T): number {
    return this.bucket.reserve();
  }
  forget(_item: T): void {}
  numRequeues(_item: T): number {
    return 0;
  }
}

/**
 * Overall (not per item): a token bucket of `burst` tokens refilled at `qps`;
 * each when() reserves a token and returns the wait for it.
 */
export function newBucketRateLimiter<T>(qps: number, burst: number, clock: Clock = realClock): RateLimiter<T> {
  return new BucketRateLimiter<T>(new TokenBucket(qps, burst, clock));
}

class MaxOfRateLimiter<T> implements RateLimiter<T> {
  constructor(private readonly limiters: RateLimiter<T>[]) {}

  when(item: T): number {
    // Every limiter is asked (each counts the failure), the longest wait wins.
    let ret = 0;
    for (const l of this.limiters) ret = Math.max(ret, l.when(item));
    return ret;
  }
  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }
  numRequeues(item: T): number {
    let ret = 0;
    for (const l of this.limiters) ret = Math.max(ret, l.numRequeues(item));
    return ret;
  }
}

/** The worst (longest) answer of all `limiters`; forget forgets in all. */
export function newMaxOfRateLimiter<T>(...limiters: RateLimiter<T>[]): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(limiters);
}

class WithMaxWaitRateLimiter<T> implements RateLimiter<T> {
  constructor(
    private readonly limiter: RateLimiter<T>,
    private readonly maxMs: number,
  ) {}

  when(item: T): number {
    return Math.min(this.limiter.when(item), this.maxMs);
  }
  forget(item: T): void {
    this.limiter.forget(item);
  }
  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }
}

/** `limiter`, with every wait capped at maxMs. */
export function newWithMaxWaitRateLimiter<T>(limiter: RateLimiter<T>, maxMs: number): RateLimiter<T> {
  return new WithMaxWaitRateLimiter<T>(limiter, maxMs);
}

/**
 * client-go's DefaultControllerRateLimiter: the max of per-item exponential
 * backoff (5 ms doubling to 1000 s) and an overall bucket of 10 qps, burst 100.
 */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): RateLimiter<T> {
  return newMaxOfRateLimiter<T>(newItemExponentialFailureRateLimiter<T>(5, 1000_000), newBucketRateLimiter<T>(10, 100, clock));
}
