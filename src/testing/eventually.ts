/**
 * Polling assertions for tests against a live server: retry `check` until
 * it stops throwing (or returns a truthy value), for at most `timeoutMs` of
 * real time, then fail with the last error.
 *
 *   await eventually(async () => assert.equal((await get()).status?.availableReplicas, 3));
 */
export interface EventuallyOptions {
  /** Default 10 s. */
  timeoutMs?: number;
  /** Default 20 ms. */
  intervalMs?: number;
  /** Named in the timeout message. */
  what?: string;
}

export async function eventually<T>(check: () => T | Promise<T>, opts: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== false) return v;
      last = new Error('the check returned false');
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? last.message : String(last);
      throw new Error(`${opts.what ? `${opts.what}: ` : ''}not reached within ${timeoutMs} ms: ${why}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20));
  }
}
