/**
 * Slow start (pkg/controller/replicaset slowStartBatch): calls `fn` `count`
 * times in batches of 1, 2, 4, ... running each batch concurrently, and stops
 * after the first batch with a failure. A quota or webhook that rejects every
 * pod thus costs one call, not hundreds.
 */

/** Upstream SlowStartInitialBatchSize. */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;

export interface SlowStartResult {
  successes: number;
  /** The first failure of the failing batch, if any. */
  error?: unknown;
}

export async function slowStartBatch(count: number, initialBatchSize: number, fn: () => Promise<void>): Promise<SlowStartResult> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += batch - failures.length;
    if (failures.length > 0) return { successes, error: failures[0]!.reason };
    remaining -= batch;
  }
  return { successes };
}
