/**
 * How long `kcm up` waits before restarting its crashed controller side:
 * 1 s doubling to 10 s, back to 1 s once the side has been ready again (its
 * controllers' caches synced) or has run for a minute. The cap stays low: a
 * local cluster should not be without controllers for long.
 */
export const RESTART_BACKOFF_INITIAL_MS = 1000;
export const RESTART_BACKOFF_MAX_MS = 10_000;
/** A run at least this long counts as healthy even without a readiness report. */
export const RESTART_BACKOFF_RESET_AFTER_MS = 60_000;

export interface RestartBackoff {
  /** The side started (at `now`, ms). */
  started(now: number): void;
  /** The side reported ready: the next crash is retried after the initial delay. */
  ready(): void;
  /** The side crashed at `now`: the delay before the next start. */
  crashed(now: number): number;
}

export function newRestartBackoff(): RestartBackoff {
  let next = RESTART_BACKOFF_INITIAL_MS;
  let startedAt = 0;
  return {
    started(now) {
      startedAt = now;
    },
    ready() {
      next = RESTART_BACKOFF_INITIAL_MS;
    },
    crashed(now) {
      if (now - startedAt >= RESTART_BACKOFF_RESET_AFTER_MS) next = RESTART_BACKOFF_INITIAL_MS;
      const delay = next;
      next = Math.min(next * 2, RESTART_BACKOFF_MAX_MS);
      return delay;
    },
  };
}
