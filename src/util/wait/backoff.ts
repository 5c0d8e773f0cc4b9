/**
 * Backoff and jitter (client-go apimachinery/pkg/util/wait), on an injected Clock.
 */
import type { Clock } from '../clock/clock.js';

/** `ms` plus a random extra of up to `maxFactor * ms` (maxFactor <= 0 means 1). */
export function jitter(ms: number, maxFactor: number, random: () => number = Math.random): number {
  const f = maxFactor <= 0 ? 1 : maxFactor;
  return ms + random() * f * ms;
}

export interface BackoffOptions {
  /** First delay. */
  initialMs: number;
  /** Upper bound of a delay. */
  maxMs: number;
  /** Multiplier per step (client-go default 2). */
  factor?: number;
  /** Random extra fraction added to each delay (0 = none). */
  jitter?: number;
  /** After this long without a backoff() call, start again at initialMs. */
  resetAfterMs?: number;
  clock: Clock;
  random?: () => number;
}

/**
 * Exponential backoff with jitter and reset, like client-go's
 * exponentialBackoffManagerImpl: each next() doubles (factor) up to max;
 * a quiet period of resetAfterMs starts over.
 */
export class Backoff {
  private current: number;
  private lastAt: number | undefined;
  constructor(private readonly opts: BackoffOptions) {
    this.current = opts.initialMs;
  }
  /** The delay to wait now; advances the backoff. */
  next(): number {
    const now = this.opts.clock.now();
    if (this.lastAt !== undefined && this.opts.resetAfterMs !== undefined && now - this.lastAt >= this.opts.resetAfterMs) {
      this.current = this.opts.initialMs;
    }
    this.lastAt = now;
    const d = Math.min(this.current, this.opts.maxMs);
    this.current = Math.min(this.current * (this.opts.factor ?? 2), this.opts.maxMs);
    return this.opts.jitter ? Math.min(jitter(d, this.opts.jitter, this.opts.random), this.opts.maxMs * (1 + this.opts.jitter)) : d;
  }
  reset(): void {
    this.current = this.opts.initialMs;
    this.lastAt = undefined;
  }
}

/**
 * Calls `fn` every `periodMs` (plus jitter) until the signal aborts; the period
 * counts from the end of each call (client-go's JitterUntil with sliding=true).
 * Errors thrown by fn are passed to onError and do not stop the loop.
 * Resolves after the last call has finished.
 */
export async function until(
  fn: () => void | Promise<void>,
  periodMs: number,
  signal: AbortSignal,
  clock: Clock,
  opts: { jitter?: number; onError?: (err: unknown) => void } = {},
): Promise<void> {
  while (!signal.aborted) {
    try {
      await fn();
    } catch (err) {
      opts.onError?.(err);
    }
    if (signal.aborted) break;
    try {
      await clock.sleep(opts.jitter ? jitter(periodMs, opts.jitter) : periodMs, signal);
    } catch {
      break;
    }
  }
}

/**
 * Polls `condition` every `intervalMs` until it returns true (resolves true),
 * or `timeoutMs` passes or the signal aborts (resolves false).
 */
export async function poll(
  condition: () => boolean | Promise<boolean>,
  intervalMs: number,
  timeoutMs: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (signal?.aborted || clock.now() >= deadline) return false;
    try {
      await clock.sleep(Math.min(intervalMs, Math.max(0, deadline - clock.now())), signal);
    } catch {
      return false;
    }
  }
}
