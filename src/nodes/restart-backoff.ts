/**
 * Per-key exponential backoff as the kubelet keeps it for crashing containers
 * and failing image pulls (client-go util/flowcontrol.Backoff with
 * kubelet's backOffPeriod 10 s and MaxContainerBackOff 300 s).
 *
 * Semantics, as in kuberuntime's doBackOff:
 * - `inBackoffSince(key, t)`: true while less than the key's current delay
 *   has passed since `t` (for a crashed container, t = its finishedAt);
 * - `next(key, t)`: called when the action goes ahead; the first call (or the
 *   first after `t` is more than 2 × max past the last update) sets the
 *   delay to the initial value, each later call doubles it up to max.
 *
 * So a crashing container restarts at once the first time, then waits 10 s,
 * 20 s, 40 s, ... 300 s.
 */
import type { Clock } from '../util/clock/clock.js';

export const BACKOFF_INITIAL_MS = 10_000;
export const BACKOFF_MAX_MS = 300_000;

export interface RestartBackoff {
  inBackoffSince(key: string, eventTime: number): boolean;
  /** True while less than the key's delay has passed since its last `next` (the image puller's check). */
  inBackoffSinceUpdate(key: string, now: number): boolean;
  next(key: string, eventTime: number): void;
  /** The key's current delay in ms (0 when unknown). */
  get(key: string): number;
  /** When the backoff that started at `eventTime` ends (eventTime + delay). */
  endsAt(key: string, eventTime: number): number;
  /** When the backoff since the key's last update ends. */
  endsAtSinceUpdate(key: string): number;
  /** Forgets a key (the pod is gone). */
  reset(key: string): void;
  /** Forgets every key starting with `prefix`. */
  resetPrefix(prefix: string): void;
}

interface Entry {
  delay: number;
  lastUpdate: number;
}

export function newRestartBackoff(opts: { clock: Clock; initialMs?: number; maxMs?: number }): RestartBackoff {
  const initial = opts.initialMs ?? BACKOFF_INITIAL_MS;
  const max = opts.maxMs ?? BACKOFF_MAX_MS;
  const entries = new Map<string, Entry>();
  const expired = (eventTime: number, e: Entry) => eventTime - e.lastUpdate > 2 * max;
  return {
    inBackoffSince(key, eventTime) {
      const e = entries.get(key);
      if (!e || expired(eventTime, e)) return false;
      return opts.clock.now() - eventTime < e.delay;
    },
    inBackoffSinceUpdate(key, now) {
      const e = entries.get(key);
      if (!e || expired(now, e)) return false;
      return now - e.lastUpdate < e.delay;
    },
    next(key, eventTime) {
      const e = entries.get(key);
      if (!e || expired(eventTime, e)) entries.set(key, { delay: initial, lastUpdate: opts.clock.now() });
      else entries.set(key, { delay: Math.min(e.delay * 2, max), lastUpdate: opts.clock.now() });
    },
    get(key) {
      return entries.get(key)?.delay ?? 0;
    },
    endsAt(key, eventTime) {
      return eventTime + (entries.get(key)?.delay ?? 0);
    },
    endsAtSinceUpdate(key) {
      const e = entries.get(key);
      return e ? e.lastUpdate + e.delay : opts.clock.now();
    },
    reset(key) {
      entries.delete(key);
    },
    resetPrefix(prefix) {
      for (const k of [...entries.keys()]) if (k.startsWith(prefix)) entries.delete(k);
    },
  };
}

/** `10s`, `1m20s`, `5m0s`: a delay as Go's time.Duration prints it (whole seconds). */
export function formatGoDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60}s`;
  return `${Math.floor(m / 60)}h${m % 60}m${s % 60}s`;
}
