import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock/clock.js';
import { newTokenBucketRateLimiter } from './rate-limit.js';

describe('token bucket rate limiter', () => {
  it('lets a burst through and then spaces waiters 1/qps apart', async () => {
    const clock = new FakeClock();
    const rl = newTokenBucketRateLimiter({ qps: 10, burst: 3, clock });
    const start = clock.now();
    const done: number[] = [];
    for (let i = 0; i < 6; i++) void rl.wait().then(() => done.push(clock.now() - start));
    await clock.tick();
    assert.deepEqual(done, [0, 0, 0]);
    await clock.advance(1000);
    assert.deepEqual(done, [0, 0, 0, 100, 200, 300]);
  });

  it('refills up to the burst while idle', async () => {
    const clock = new FakeClock();
    const rl = newTokenBucketRateLimiter({ qps: 1, burst: 2, clock });
    await rl.wait();
    await rl.wait();
    await clock.advance(10_000);
    let n = 0;
    for (let i = 0; i < 3; i++) void rl.wait().then(() => n++);
    await clock.tick();
    assert.equal(n, 2);
    await clock.advance(1000);
    assert.equal(n, 3);
  });

  it('does not limit when qps is not positive', async () => {
    const rl = newTokenBucketRateLimiter({ qps: 0, burst: 1, clock: new FakeClock() });
    for (let i = 0; i < 100; i++) await rl.wait();
  });

  it('rejects a waiter whose signal aborts', async () => {
    const clock = new FakeClock();
    const rl = newTokenBucketRateLimiter({ qps: 1, burst: 1, clock });
    await rl.wait();
    const ac = new AbortController();
    const p = rl.wait(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
  });
});
