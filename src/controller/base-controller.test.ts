import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { setLogOutput } from '../util/log/logger.js';
import { newQueueWorker, waitForCacheSync } from './base-controller.js';

async function settle(clock: FakeClock, ms = 0): Promise<void> {
  for (let i = 0; i < 5; i++) await flushMicrotasks();
  await clock.advance(ms);
}

describe('queue worker', () => {
  it('syncs each enqueued key and forgets it on success', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const w = newQueueWorker({ name: 'test', clock, sync: async (key) => void seen.push(key) });
    const ac = new AbortController();
    w.enqueue('ns/a');
    w.enqueue('ns/b');
    w.enqueue('ns/a'); // collapses with the waiting ns/a
    const running = w.run(2, ac.signal);
    await settle(clock);
    assert.deepEqual(seen.sort(), ['ns/a', 'ns/b']);
    assert.equal(w.queue.numRequeues('ns/a'), 0);
    ac.abort();
    await running;
    assert.equal(w.healthy(), true);
    assert.equal(w.queue.shuttingDown(), true);
  });

  it('retries a failing key rate-limited and drops it after maxRetries', async () => {
    const restore = setLogOutput(() => {});
    try {
      const clock = new FakeClock();
      let calls = 0;
      const w = newQueueWorker({
        name: 'test',
        clock,
        maxRetries: 3,
        sync: async () => {
          calls++;
          throw new Error('nope');
        },
      });
      const ac = new AbortController();
      const running = w.run(1, ac.signal);
      w.enqueue('ns/a');
      await settle(clock);
      assert.equal(calls, 1);
      assert.equal(w.queue.numRequeues('ns/a'), 1);
      await settle(clock, 5); // first retry after 5 ms
      assert.equal(calls, 2);
      await settle(clock, 10);
      assert.equal(calls, 3);
      await settle(clock, 20);
      assert.equal(calls, 4);
      assert.equal(w.queue.numRequeues('ns/a'), 0, 'dropped and forgotten');
      await settle(clock, 60_000);
      assert.equal(calls, 4, 'no retry after being dropped');
      ac.abort();
      await running;
    } finally {
      setLogOutput(restore);
    }
  });

  it('delays keys added with enqueueAfter', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const w = newQueueWorker({ name: 'test', clock, sync: async (key) => void seen.push(key) });
    const ac = new AbortController();
    const running = w.run(1, ac.signal);
    w.enqueueAfter('ns/later', 1000);
    await settle(clock, 999);
    assert.deepEqual(seen, []);
    await settle(clock, 1);
    assert.deepEqual(seen, ['ns/later']);
    ac.abort();
    await running;
  });

  it('waits for syncs in progress when stopping and drops waiting keys', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    let release!: () => void;
    const w = newQueueWorker({
      name: 'test',
      clock,
      sync: async (key) => {
        seen.push(key);
        if (key === 'slow') await new Promise<void>((r) => (release = r));
      },
    });
    const ac = new AbortController();
    const running = w.run(1, ac.signal);
    w.enqueue('slow');
    w.enqueue('waiting');
    await settle(clock);
    let done = false;
    void running.then(() => (done = true));
    ac.abort();
    await settle(clock);
    assert.equal(done, false, 'run waits for the sync in progress');
    release();
    await running;
    assert.deepEqual(seen, ['slow']);
  });

  it('gives syncs in flight at most shutdownTimeoutMs after the signal aborts, and leaves no timer after those that finish', async () => {
    const restore = setLogOutput(() => {});
    try {
      const clock = new FakeClock();
      const w = newQueueWorker({
        name: 'test',
        clock,
        shutdownTimeoutMs: 1000,
        sync: async (key) => {
          if (key.startsWith('stuck')) await new Promise<void>(() => undefined);
        },
      });
      const ac = new AbortController();
      const running = w.run(3, ac.signal);
      for (const k of ['quick', 'stuck-1', 'stuck-2']) w.enqueue(k);
      await settle(clock);
      assert.equal(clock.pendingTimers(), 0, 'no timer before stopping');
      let done = false;
      void running.then(() => (done = true));
      ac.abort();
      await settle(clock);
      assert.equal(clock.pendingTimers(), 2, 'one timer per sync in flight');
      await settle(clock, 999);
      assert.equal(done, false);
      await settle(clock, 1);
      await running;
    } finally {
      setLogOutput(restore);
    }
  });

  it('reports unhealthy when its queue is shut down from outside', async () => {
    const restore = setLogOutput(() => {});
    try {
      const clock = new FakeClock();
      const w = newQueueWorker({ name: 'test', clock, sync: async () => {} });
      const running = w.run(1, new AbortController().signal);
      w.queue.shutDown();
      await running;
      assert.equal(w.healthy(), false);
    } finally {
      setLogOutput(restore);
    }
  });
});

describe('waitForCacheSync', () => {
  it('resolves true once every cache reports synced', async () => {
    const restore = setLogOutput(() => {});
    try {
      const clock = new FakeClock();
      let synced = false;
      const p = waitForCacheSync('test', new AbortController().signal, clock, () => true, () => synced);
      await settle(clock, 100);
      synced = true;
      await settle(clock, 100);
      assert.equal(await p, true);
      const ac = new AbortController();
      const q = waitForCacheSync('test', ac.signal, clock, () => false);
      ac.abort();
      assert.equal(await q, false);
    } finally {
      setLogOutput(restore);
    }
  });
});
