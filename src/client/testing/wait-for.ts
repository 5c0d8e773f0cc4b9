/**
 * Polls a condition on real time, for tests that wait on I/O (a request
 * reaching the fake server) before moving a fake clock. Bounded: rejects
 * after `timeoutMs`.
 */
export async function waitFor(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
