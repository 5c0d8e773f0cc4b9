/**
 * Client-side token bucket (client-go flowcontrol.NewTokenBucketRateLimiter,
 * golang.org/x/time/rate semantics): `burst` tokens, refilled at `qps` per
 * second; a caller that finds the bucket empty reserves the next token and
 * waits for it, so waiters are spaced 1/qps apart in arrival order.
 */
import type { Clock } from '../util/clock/clock.js';

export interface RequestRateLimiter {
  /** Resolves when the request may go; rejects if the signal aborts first (the reservation is kept). */
  wait(signal?: AbortSignal): Promise<void>;
}

/** qps <= 0 means no limit. */
export function newTokenBucketRateLimiter(opts: { qps: number; burst: number; clock: Clock }): RequestRateLimiter {
  const { qps, clock } = opts;
  if (!(qps > 0)) return { wait: () => Promise.resolve() };
  const burst = Math.max(1, opts.burst);
  let tokens = burst;
  let last = clock.now();
  return {
    wait(signal) {
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * qps);
      last = now;
      tokens -= 1;
      if (tokens >= 0) return Promise.resolve();
      const delay = Math.ceil((-tokens / qps) * 1000);
      return clock.sleep(delay, signal);
    },
  };
}
