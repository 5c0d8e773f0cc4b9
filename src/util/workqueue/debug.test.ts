import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../clock/clock.js';
import { setLogOutput } from '../log/logger.js';
import { newQueueWorker } from '../../controller/base-controller.js';
import { claimDebugQueues, debugQueueMark, debugQueueStates, debugRecentSyncs, MAX_DEBUG_QUEUES, quantile, recordSync } from './debug.js';
import { newQueue } from './queue.js';
import { newDefaultRateLimitingQueue } from './rate-limiting-queue.js';
import type { QueueState } from './debug-types.js';

async function settle(clock: FakeClock, ms = 0): Promise<void> {
  for (let i = 0; i < 5; i++) await flushMicrotasks();
  await clock.advance(ms);
}

function stateOf(name: string): QueueState | undefined {
  return debugQueueStates().find((q) => q.name === name);
}

describe('work queue debug registry', () => {
  it('follows a queue driven by a QueueWorker whose sync fails once, then leaves with the queue', async () => {
    const restore = setLogOutput(() => {});
    try {
      const t0 = Date.UTC(2024, 0, 1);
      const clock = new FakeClock(t0);
      let failed = false;
      const w = newQueueWorker({
        name: 'debug-worker',
        clock,
        sync: async (key, signal) => {
          await clock.sleep(key === 'ns/a' ? 100 : 40, signal);
          if (key === 'ns/a' && !failed) {
            failed = true;
            throw new Error('boom');
          }
        },
      });
      w.enqueue('ns/a');
      w.enqueue('ns/b');
      w.enqueue('ns/c');
      w.enqueue('ns/a'); // collapses: not an add
      let s = stateOf('debug-worker')!;
      assert.ok(s, 'registered at creation');
      assert.equal(s.depth, 3);
      assert.equal(s.adds, 3);
      assert.equal(s.addsPerSecond, 0.3);
      assert.deepEqual(s.waiting, ['ns/a', 'ns/b', 'ns/c']);
      assert.deepEqual(s.processing, []);
      assert.deepEqual(s.duration, { count: 0, p50: null, p90: null, p99: null });

      const ac = new AbortController();
      const running = w.run(1, ac.signal);
      await settle(clock, 50);
      s = stateOf('debug-worker')!;
      assert.deepEqual(s.processing, [{ key: 'ns/a', seconds: 0.05 }]);
      assert.equal(s.longestRunningSeconds, 0.05);
      assert.equal(s.depth, 2);
      assert.deepEqual(s.waiting, ['ns/b', 'ns/c']);

      // ns/a fails at +100 and is retried 5 ms later, after ns/b (+100..140) and ns/c (+140..180): +180..280.
      await settle(clock, 1000);
      s = stateOf('debug-worker')!;
      assert.equal(s.retries, 1);
      assert.equal(s.adds, 4);
      assert.equal(s.depth, 0);
      assert.deepEqual(s.waiting, []);
      assert.deepEqual(s.processing, []);
      assert.equal(s.longestRunningSeconds, 0);
      assert.deepEqual(s.duration, { count: 4, p50: 0.04, p90: 0.1, p99: 0.1 });
      assert.deepEqual(s.lastErrors, [{ time: t0 + 100, key: 'ns/a', message: 'boom' }]);
      assert.deepEqual(
        debugRecentSyncs().filter((r) => r.queue === 'debug-worker'),
        [
          { queue: 'debug-worker', key: 'ns/a', start: t0, durationMs: 100, error: 'boom' },
          { queue: 'debug-worker', key: 'ns/b', start: t0 + 100, durationMs: 40 },
          { queue: 'debug-worker', key: 'ns/c', start: t0 + 140, durationMs: 40 },
          { queue: 'debug-worker', key: 'ns/a', start: t0 + 180, durationMs: 100 },
        ],
      );
      // ?since=<ms> asks only for the syncs that started later.
      assert.deepEqual(debugRecentSyncs(t0 + 100).filter((r) => r.queue === 'debug-worker').map((r) => r.start), [t0 + 140, t0 + 180]);
      assert.equal(s.addsPerSecond, 0.4);
      await settle(clock, 10_000);
      assert.equal(stateOf('debug-worker')!.addsPerSecond, 0, 'the rate covers the last 10 s only');

      ac.abort();
      await running;
      assert.equal(stateOf('debug-worker'), undefined, 'a shut-down queue leaves the registry');
      assert.equal(debugRecentSyncs().filter((r) => r.queue === 'debug-worker').length, 0);
    } finally {
      setLogOutput(restore);
    }
  });

  it('registers only named queues, and forgets the oldest past MAX_DEBUG_QUEUES', () => {
    const clock = new FakeClock();
    const before = debugQueueStates().length;
    const unnamed = newQueue<string>({ clock });
    unnamed.add('x');
    assert.equal(debugQueueStates().length, before);
    recordSync(unnamed, 'x', clock.now(), 1); // a no-op, not a throw

    const queues = Array.from({ length: MAX_DEBUG_QUEUES + 5 }, (_, i) => newQueue<string>({ name: `many-${i}`, clock }));
    const states = debugQueueStates();
    assert.equal(states.length, MAX_DEBUG_QUEUES);
    assert.equal(states.some((q) => q.name === 'many-0'), false);
    assert.equal(states.at(-1)!.name, `many-${MAX_DEBUG_QUEUES + 4}`);
    for (const q of queues) q.shutDown();
    assert.equal(debugQueueStates().length, 0);
  });

  it('keeps the last 20 errors and the last 1,000 durations', () => {
    const clock = new FakeClock();
    const q = newDefaultRateLimitingQueue<string>({ name: 'debug-rings', clock });
    try {
      for (let i = 0; i < 25; i++) recordSync(q, `k${i}`, clock.now(), 5, new Error(`e${i}`));
      // 1,000 more syncs of 1..1000 ms push the 25 failed ones (5 ms) out of the durations ring.
      for (let i = 1; i <= 1000; i++) recordSync(q, 'ok', clock.now(), i);
      const s = stateOf('debug-rings')!;
      assert.equal(s.lastErrors!.length, 20);
      assert.deepEqual(s.lastErrors!.map((e) => e.message).slice(0, 2), ['e5', 'e6']);
      assert.equal(s.lastErrors!.at(-1)!.key, 'k24');
      assert.deepEqual(s.duration, { count: 1025, p50: 0.5, p90: 0.9, p99: 0.99 });
      const recent = debugRecentSyncs().filter((r) => r.queue === 'debug-rings');
      assert.equal(recent.length, 200);
      assert.equal(recent.every((r) => r.error === undefined), true);
    } finally {
      q.shutDown();
    }
  });

  it('counts retries of addRateLimited and attributes queues created after a mark to one controller', () => {
    const clock = new FakeClock();
    const other = newQueue<string>({ name: 'debug-other', clock });
    const mark = debugQueueMark();
    const q = newDefaultRateLimitingQueue<string>({ name: 'debug-owned', clock });
    try {
      q.addRateLimited('a');
      q.addRateLimited('b');
      assert.deepEqual(claimDebugQueues(mark, 'owner-controller'), ['debug-owned']);
      assert.deepEqual(claimDebugQueues(mark, 'late-controller'), [], 'claimed once');
      const s = stateOf('debug-owned')!;
      assert.equal(s.retries, 2);
      assert.equal(s.controller, 'owner-controller');
      assert.equal(stateOf('debug-other')!.controller, undefined);
    } finally {
      q.shutDown();
      other.shutDown();
    }
  });

  it('takes nearest-rank quantiles', () => {
    assert.equal(quantile([], 0.5), null);
    assert.equal(quantile([7], 0.99), 7);
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2);
    assert.equal(quantile([1, 2, 3, 4], 0.9), 4);
  });
});
