/**
 * The rate-limited timed queue of node names to taint NoExecute
 * (pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go), one per
 * zone, with a token-bucket limiter (burst 1) whose rate follows the zone's
 * state.
 *
 * A value stays in the "set" after it was processed (removeFromQueue) so that
 * adding it again is a no-op until remove() is called: that is how a node
 * already tainted is not queued again on every monitor pass.
 */
import type { Clock } from '../../util/clock/clock.js';

/** Burst of every eviction limiter (EvictionRateLimiterBurst). */
export const EVICTION_RATE_LIMITER_BURST = 1;

export interface TimedValue {
  value: string;
  uid: string;
  addedAt: number;
  processAt: number;
}

/** A token bucket that never waits: tryAccept takes a token when one is there. */
export interface TokenBucket {
  readonly qps: number;
  tryAccept(): boolean;
}

/** qps <= 0 never accepts (flowcontrol.NewFakeNeverRateLimiter). The bucket starts full. */
export function newTokenBucket(clock: Clock, qps: number, burst: number): TokenBucket {
  if (qps <= 0) return { qps: 0, tryAccept: () => false };
  let tokens = burst;
  let last = clock.now();
  return {
    qps,
    tryAccept() {
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * qps);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return true;
      }
      return false;
    },
  };
}

/** Returns [done, retryAfterMs]: done removes the value from the queue (it stays in the set). */
export type TimedAction = (v: TimedValue) => Promise<[boolean, number]> | [boolean, number];

export interface RateLimitedTimedQueue {
  /** False when `value` is already in the set (queued or processed and not removed). */
  add(value: string, uid: string): boolean;
  /** Forgets `value` entirely; true when it was in the set. */
  remove(value: string): boolean;
  /** Processes due values in processAt order while the limiter gives tokens. */
  try(fn: TimedAction): Promise<void>;
  /** Replaces the limiter with one of rate `qps` (0 stops processing). */
  swapLimiter(qps: number): void;
  readonly qps: number;
  /** Values waiting in the queue (tests, metrics). */
  queued(): string[];
  has(value: string): boolean;
}

class Queue implements RateLimitedTimedQueue {
  private readonly set = new Set<string>();
  private items: TimedValue[] = [];
  private limiter: TokenBucket;

  constructor(
    private readonly clock: Clock,
    qps: number,
  ) {
    this.limiter = newTokenBucket(clock, qps, EVICTION_RATE_LIMITER_BURST);
  }

  get qps(): number {
    return this.limiter.qps;
  }

  add(value: string, uid: string): boolean {
    if (this.set.has(value)) return false;
    const now = this.clock.now();
    this.set.add(value);
    this.items.push({ value, uid, addedAt: now, processAt: now });
    this.sort();
    return true;
  }

  remove(value: string): boolean {
    this.items = this.items.filter((i) => i.value !== value);
    return this.set.delete(value);
  }

  has(value: string): boolean {
    return this.set.has(value);
  }

  queued(): string[] {
    return this.items.map((i) => i.value);
  }

  async try(fn: TimedAction): Promise<void> {
    let head = this.items[0];
    while (head) {
      if (!this.limiter.tryAccept()) break;
      const now = this.clock.now();
      if (now < head.processAt) break;
      const [done, waitMs] = await fn(head);
      const i = this.items.indexOf(head);
      if (i >= 0) {
        if (done) this.items.splice(i, 1);
        else {
          head.processAt = now + waitMs + 1;
          this.sort();
        }
      }
      head = this.items[0];
    }
  }

  swapLimiter(qps: number): void {
    if (this.limiter.qps === Math.max(0, qps)) return;
    const next = newTokenBucket(this.clock, qps, EVICTION_RATE_LIMITER_BURST);
    // Waiting on the old limiter: drain the new one too (burst is 1).
    if (qps > 0 && !this.limiter.tryAccept()) next.tryAccept();
    this.limiter = next;
  }

  private sort(): void {
    this.items.sort((a, b) => a.processAt - b.processAt || a.addedAt - b.addedAt);
  }
}

export function newRateLimitedTimedQueue(clock: Clock, qps: number): RateLimitedTimedQueue {
  return new Queue(clock, qps);
}
