/**
 * Per-key exponential backoff (client-go flowcontrol.Backoff) for replacing
 * failed daemon pods: 1 s doubling to 15 min, reset after 2 x max without
 * failures.
 */
import type { Clock } from '../../util/clock/clock.js';

export const FAILED_POD_BACKOFF_INITIAL_MS = 1_000;
export const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

export interface KeyedBackoff {
  /** Current delay of `key` (0 when none). */
  get(key: string): number;
  /** Records a failure now: starts at the initial delay or doubles it (up to max). */
  next(key: string): void;
  /** `key` failed less than its current delay ago. */
  isInBackOffSinceUpdate(key: string): boolean;
  /** Forgets entries idle for more than 2 x max. */
  gc(): void;
}

export function newKeyedBackoff(clock: Clock, initialMs = FAILED_POD_BACKOFF_INITIAL_MS, maxMs = FAILED_POD_BACKOFF_MAX_MS): KeyedBackoff {
  const entries = new Map<string, { delay: number; lastUpdate: number }>();
  const expired = (e: { lastUpdate: number }) => clock.now() - e.lastUpdate > 2 * maxMs;
  return {
    get: (key) => entries.get(key)?.delay ?? 0,
    next(key) {
      const e = entries.get(key);
      if (!e || expired(e)) entries.set(key, { delay: initialMs, lastUpdate: clock.now() });
      else entries.set(key, { delay: Math.min(e.delay * 2, maxMs), lastUpdate: clock.now() });
    },
    isInBackOffSinceUpdate(key) {
      const e = entries.get(key);
      return !!e && clock.now() - e.lastUpdate < e.delay;
    },
    gc() {
      for (const [k, e] of entries) if (expired(e)) entries.delete(k);
    },
  };
}
