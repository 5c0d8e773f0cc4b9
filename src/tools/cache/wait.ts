/**
 * Waiting for caches (client-go tools/cache WaitForCacheSync).
 */
import type { Clock } from '../../util/clock/clock.js';
import { realClock } from '../../util/clock/clock.js';

export interface WaitForCacheSyncOptions {
  clock?: Clock;
  /** Poll interval (default 100 ms, as client-go's syncedPollPeriod). */
  pollMs?: number;
}

export type InformerSynced = () => boolean;

/**
 * Resolves true once every `hasSynced` returns true, false if the signal aborts
 * first. Pass options as the last argument.
 */
export function waitForCacheSync(signal: AbortSignal, ...fns: InformerSynced[]): Promise<boolean>;
export function waitForCacheSync(
  signal: AbortSignal,
  ...args: [...fns: InformerSynced[], opts: WaitForCacheSyncOptions]
): Promise<boolean>;
export async function waitForCacheSync(
  signal: AbortSignal,
  ...args: (InformerSynced | WaitForCacheSyncOptions)[]
): Promise<boolean> {
  let opts: WaitForCacheSyncOptions = {};
  const last = args[args.length - 1];
  if (last !== undefined && typeof last !== 'function') {
    opts = last;
    args = args.slice(0, -1);
  }
  const fns = args as InformerSynced[];
  const clock = opts.clock ?? realClock;
  const pollMs = opts.pollMs ?? 100;
  for (;;) {
    if (signal.aborted) return false;
    if (fns.every((f) => f())) return true;
    try {
      await clock.sleep(pollMs, signal);
    } catch {
      return false;
    }
  }
}
