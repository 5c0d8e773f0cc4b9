/**
 * Read your own writes. A reconcile runs inside a write log (an
 * AsyncLocalStorage scope): every write the runtime client makes during it
 * is recorded with the resourceVersion the server returned. Before the next
 * reconcile of the same key, the controller waits (bounded) until the cache
 * holds those versions, so a reconciler never acts on the state from before
 * its own writes (the classic duplicate-child bug of cache-reading
 * controllers).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../util/clock/clock.js';
import type { ObservedWrite, RuntimeCache } from './cache.js';

export const DEFAULT_READ_YOUR_WRITES_TIMEOUT_MS = 5_000;

/** The writes made inside one recordingWrites scope (filled in as they happen, kept when `fn` throws). */
export interface WriteLog {
  readonly writes: ObservedWrite[];
}

const scope = new AsyncLocalStorage<WriteLog>();

/** Runs `fn` with `log` collecting the writes the runtime client makes inside it. */
export function recordingWrites<R>(log: WriteLog, fn: () => Promise<R>): Promise<R> {
  return scope.run(log, fn);
}

/** Called by the runtime client after each successful write. */
export function recordWrite(w: ObservedWrite): void {
  scope.getStore()?.writes.push(w);
}

export type WaitOutcome = 'observed' | 'timeout' | 'aborted';

/**
 * Resolves once the cache has observed every write, after `timeoutMs` on the
 * clock, or when the signal aborts, whichever comes first.
 */
export function waitForObserved(cache: RuntimeCache, writes: readonly ObservedWrite[], timeoutMs: number, clock: Clock, signal: AbortSignal): Promise<WaitOutcome> {
  const done = () => writes.every((w) => cache.hasObserved(w));
  if (done()) return Promise.resolve('observed');
  if (signal.aborted) return Promise.resolve('aborted');
  return new Promise<WaitOutcome>((resolve) => {
    const finish = (outcome: WaitOutcome) => {
      unsubscribe();
      timer.stop();
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () => finish('aborted');
    const unsubscribe = cache.onChange(() => {
      if (done()) finish('observed');
    });
    const timer = clock.setTimer(() => finish(done() ? 'observed' : 'timeout'), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
