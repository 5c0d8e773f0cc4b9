import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/clock.js';
import { Backoff, until, poll, jitter } from './backoff.js';

describe('Backoff', () => {
  it('doubles up to the maximum and resets after a quiet period', async () => {
    const clock = new FakeClock(0);
    const b = new Backoff({ initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000, clock });
    const seen = [b.next(), b.next(), b.next(), b.next(), b.next(), b.next(), b.next()];
    assert.deepEqual(seen, [800, 1600, 3200, 6400, 12800, 25600, 30000]);
    await clock.advance(120_000);
    assert.equal(b.next(), 800);
  });

  it('adds bounded jitter', () => {
    assert.equal(jitter(100, 0.5, () => 1), 150);
    assert.equal(jitter(100, 0, () => 0.5), 150);
  });
});

describe('until', () => {
  it('runs the function every period until aborted, surviving errors', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    const calls: number[] = [];
    const done = until(
      () => {
        calls.push(clock.now());
        if (calls.length === 2) throw new Error('boom');
      },
      1000,
      ac.signal,
      clock,
      { onError: () => {} },
    );
    await clock.advance(3000);
    ac.abort();
    await done;
    assert.deepEqual(calls, [0, 1000, 2000, 3000]);
  });
});

describe('poll', () => {
  it('returns true once the condition holds and false at the timeout', async () => {
    const clock = new FakeClock(0);
    let n = 0;
    const p = poll(() => ++n === 3, 100, 1000, clock);
    await clock.advance(500);
    assert.equal(await p, true);
    const q = poll(() => false, 100, 300, clock);
    await clock.advance(1000);
    assert.equal(await q, false);
  });
});
