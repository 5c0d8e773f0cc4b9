/**
 * A token bucket (golang.org/x/time/rate as used by client-go's
 * BucketRateLimiter and flowcontrol's token-bucket limiter).
 *
 * The bucket starts full with `burst` tokens and refills at `qps` tokens per
 * second up to `burst`. A reservation always succeeds: it takes a token now,
 * going into debt when the bucket is empty, and returns how long the caller
 * must wait before acting. Time comes from the injected clock.
 */

import { realClock, type Clock } from '../clock/clock.js';

export class TokenBucket {
  private tokens: number;
  private last: number;

  /**
   * @param qps tokens per second, > 0; Infinity disables limiting.
   * @param burst bucket size, at least 1.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new RangeError(`TokenBucket: qps must be > 0, got ${qps}`);
    if (!(burst >= 1)) throw new RangeError(`TokenBucket: burst must be >= 1, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Takes a token if one is available now, without waiting. */
  tryAccept(): boolean {
    if (this.qps === Infinity) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Takes a token and returns the milliseconds to wait before using it (0 when one was available). */
  reserve(): number {
    if (this.qps === Infinity) return 0;
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  /**
   * Waits for a token on the clock. When `signal` aborts first, the token is
   * given back and the promise rejects with the signal's reason.
   */
  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const ms = this.reserve();
    if (ms <= 0) return;
    try {
      await this.clock.sleep(ms, signal);
    } catch (err) {
      this.tokens = Math.min(this.burst, this.tokens + 1);
      throw err;
    }
  }

  private refill(): void {
    const now = this.clock.now();
    // A clock that moved backwards adds nothing (and does not take back).
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
      this.last = now;
    }
  }
}
