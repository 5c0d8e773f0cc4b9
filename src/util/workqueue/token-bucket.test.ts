import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../clock/clock.js';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('accepts a burst and then refuses until tokens refill', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(5, 2, clock);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), false);
    await clock.advance(199);
    assert.equal(b.tryAccept(), false);
    await clock.advance(1);
    assert.equal(b.tryAccept(), true);
  });

  it('reserves into debt and returns growing waits', () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(2, 1, clock);
    assert.equal(b.reserve(), 0);
    assert.equal(b.reserve(), 500);
    assert.equal(b.reserve(), 1000);
    assert.equal(b.tryAccept(), false);
  });

  it('makes wait resolve after the reserved delay on the clock', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(10, 1, clock);
    await b.wait();
    let done = false;
    const p = b.wait().then(() => (done = true));
    await clock.advance(99);
    assert.equal(done, false);
    await clock.advance(1);
    await p;
    assert.equal(done, true);
  });

  it('gives the token back when a wait is aborted', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(10, 1, clock);
    await b.wait();
    const ac = new AbortController();
    const p = b.wait(ac.signal);
    await flushMicrotasks();
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
    await clock.advance(100);
    assert.equal(b.tryAccept(), true, 'the refilled token is available');
    assert.equal(b.tryAccept(), false);
  });

  it('never limits with infinite qps and rejects nonsense settings', () => {
    const b = new TokenBucket(Infinity, 1, new FakeClock(0));
    for (let i = 0; i < 1000; i++) assert.equal(b.reserve(), 0);
    assert.throws(() => new TokenBucket(0, 1), RangeError);
    assert.throws(() => new TokenBucket(1, 0), RangeError);
  });
});
