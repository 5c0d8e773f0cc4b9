/**
 * The delay before a Job replaces failed pods (pkg/controller/job/backoff_utils.go):
 * 10 s after the first failure since the last success, doubling per further
 * failure, capped at 6 minutes, counted from the last failure's finish time.
 * Records live in memory per job key, as upstream's podBackoffStore.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { DEFAULT_POD_FAILURE_BACKOFF_MS, MAX_POD_FAILURE_BACKOFF_MS, podFinishTime } from './job-util.js';

export interface BackoffRecord {
  /** Pod failures finished after the last success. */
  failuresAfterLastSuccess: number;
  /** Finish time of the last failure (epoch ms). */
  lastFailureTime?: number;
}

/** The backoff after `failures` failures: base * 2^(failures-1), capped (0 for no failures). */
export function backoffDuration(failures: number, baseMs = DEFAULT_POD_FAILURE_BACKOFF_MS, maxMs = MAX_POD_FAILURE_BACKOFF_MS): number {
  if (failures <= 0) return 0;
  let d = baseMs;
  for (let i = 1; i < failures && d < maxMs; i++) d *= 2;
  return Math.min(d, maxMs);
}

/** Time left (ms) before a new pod may be created after `failures` failures, the last at `lastFailureTime`. */
export function remainingTimeForFailures(now: number, failures: number, lastFailureTime: number | undefined): number {
  if (failures <= 0 || lastFailureTime === undefined) return 0;
  const d = backoffDuration(failures);
  const elapsed = now - lastFailureTime;
  return elapsed >= d ? 0 : d - elapsed;
}

export function remainingTime(record: BackoffRecord, now: number): number {
  return remainingTimeForFailures(now, record.failuresAfterLastSuccess, record.lastFailureTime);
}

export interface BackoffStore {
  get(key: string): BackoffRecord;
  /**
   * The record after newly finished pods (newBackoffRecord): a success
   * resets the count to the failures that finished after it.
   */
  next(key: string, newSucceeded: readonly Pod[], newFailed: readonly Pod[], now: number): BackoffRecord;
  set(key: string, record: BackoffRecord): void;
  remove(key: string): void;
}

export function newBackoffStore(): BackoffStore {
  const records = new Map<string, BackoffRecord>();
  const get = (key: string): BackoffRecord => records.get(key) ?? { failuresAfterLastSuccess: 0 };
  return {
    get,
    next(key, newSucceeded, newFailed, now) {
      const old = get(key);
      if (newSucceeded.length === 0 && newFailed.length === 0) return old;
      const failTimes = newFailed.map((p) => podFinishTime(p, now));
      const lastFailure = failTimes.length ? Math.max(...failTimes) : undefined;
      if (newSucceeded.length === 0) {
        return {
          failuresAfterLastSuccess: old.failuresAfterLastSuccess + newFailed.length,
          lastFailureTime: lastFailure === undefined ? old.lastFailureTime : Math.max(lastFailure, old.lastFailureTime ?? lastFailure),
        };
      }
      const lastSuccess = Math.max(...newSucceeded.map((p) => podFinishTime(p, now)));
      const after = failTimes.filter((t) => t > lastSuccess).length;
      if (newFailed.length === 0) return { failuresAfterLastSuccess: 0, ...(old.lastFailureTime !== undefined ? { lastFailureTime: old.lastFailureTime } : {}) };
      return { failuresAfterLastSuccess: after, ...(lastFailure !== undefined ? { lastFailureTime: lastFailure } : {}) };
    },
    set(key, record) {
      records.set(key, record);
    },
    remove(key) {
      records.delete(key);
    },
  };
}
