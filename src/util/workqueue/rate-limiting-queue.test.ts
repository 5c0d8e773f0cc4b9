import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/clock.js';
import { newRateLimitingQueue, newDefaultRateLimitingQueue } from './rate-limiting-queue.js';
import { newItemExponentialFailureRateLimiter } from './rate-limiters.js';

describe('newRateLimitingQueue', () => {
  it('re-adds a failed item after the limiter delay and counts requeues', async () => {
    const clock = new FakeClock(0);
    const q = newRateLimitingQueue<string>(newItemExponentialFailureRateLimiter<string>(10, 1000), { clock });
    q.addRateLimited('a');
    assert.equal(q.numRequeues('a'), 1);
    await clock.advance(9);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(await q.get(), 'a');
    q.addRateLimited('a');
    q.done('a');
    await clock.advance(19);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(q.numRequeues('a'), 2);
  });

  it('resets the backoff on forget', async () => {
    const clock = new FakeClock(0);
    const q = newRateLimitingQueue<string>(newItemExponentialFailureRateLimiter<string>(10, 1000), { clock });
    q.addRateLimited('a');
    q.addRateLimited('a');
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    q.shutDown();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('uses the default controller limiter on the given clock', async () => {
    const clock = new FakeClock(0);
    const q = newDefaultRateLimitingQueue<string>({ clock });
    q.addRateLimited('a');
    await clock.advance(5);
    assert.equal(q.len(), 1);
  });
});
