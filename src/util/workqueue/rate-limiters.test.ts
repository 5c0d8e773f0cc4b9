import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/clock.js';
import {
  defaultControllerRateLimiter,
  newBucketRateLimiter,
  newItemExponentialFailureRateLimiter,
  newItemFastSlowRateLimiter,
  newMaxOfRateLimiter,
  newWithMaxWaitRateLimiter,
} from './rate-limiters.js';

describe('newItemExponentialFailureRateLimiter', () => {
  it('doubles from the base per failure and caps at the maximum', () => {
    const rl = newItemExponentialFailureRateLimiter<string>(5, 1000_000);
    const waits = Array.from({ length: 5 }, () => rl.when('a'));
    assert.deepEqual(waits, [5, 10, 20, 40, 80]);
    assert.equal(rl.numRequeues('a'), 5);
    for (let i = 0; i < 30; i++) rl.when('a');
    assert.equal(rl.when('a'), 1000_000);
    for (let i = 0; i < 2000; i++) rl.when('a');
    assert.equal(rl.when('a'), 1000_000, 'no overflow after many failures');
  });

  it('counts items separately and resets an item on forget', () => {
    const rl = newItemExponentialFailureRateLimiter<string>(1, 1000);
    rl.when('a');
    rl.when('a');
    assert.equal(rl.when('b'), 1);
    assert.equal(rl.numRequeues('a'), 2);
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
    assert.equal(rl.when('a'), 1);
    assert.equal(rl.numRequeues('b'), 1);
  });
});

describe('newItemFastSlowRateLimiter', () => {
  it('gives the fast delay for the first attempts and the slow one after', () => {
    const rl = newItemFastSlowRateLimiter<string>(5, 10_000, 3);
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a'), rl.when('a'), rl.when('a')], [5, 5, 5, 10_000, 10_000]);
    assert.equal(rl.numRequeues('a'), 5);
    assert.equal(rl.when('b'), 5);
    rl.forget('a');
    assert.equal(rl.when('a'), 5);
  });
});

describe('newBucketRateLimiter', () => {
  it('allows the burst at once and then spaces tries by 1/qps', () => {
    const clock = new FakeClock(0);
    const rl = newBucketRateLimiter<string>(10, 3, clock);
    assert.deepEqual([rl.when('a'), rl.when('b'), rl.when('c')], [0, 0, 0]);
    assert.equal(rl.when('d'), 100);
    assert.equal(rl.when('e'), 200);
    assert.equal(rl.numRequeues('a'), 0);
  });

  it('refills over time up to the burst only', () => {
    const clock = new FakeClock(0);
    const rl = newBucketRateLimiter<string>(10, 2, clock);
    rl.when('a');
    rl.when('a');
    assert.equal(rl.when('a'), 100);
    clock.setTime(10_000);
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [0, 0, 100]);
  });
});

describe('newMaxOfRateLimiter', () => {
  it('returns the longest wait of its limiters and forgets in all of them', () => {
    const rl = newMaxOfRateLimiter<string>(
      newItemFastSlowRateLimiter<string>(5, 3000, 1),
      newItemExponentialFailureRateLimiter<string>(1, 1000),
    );
    assert.equal(rl.when('a'), 5);
    assert.equal(rl.when('a'), 3000);
    assert.equal(rl.numRequeues('a'), 2);
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
    assert.equal(rl.when('a'), 5);
  });
});

describe('newWithMaxWaitRateLimiter', () => {
  it('caps the wrapped limiter at the maximum wait', () => {
    const rl = newWithMaxWaitRateLimiter<string>(newItemExponentialFailureRateLimiter<string>(100, 100_000), 250);
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [100, 200, 250]);
    assert.equal(rl.numRequeues('a'), 3);
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('backs an item off from 5 ms and caps at 1000 s', () => {
    const clock = new FakeClock(0);
    const rl = defaultControllerRateLimiter<string>(clock);
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [5, 10, 20]);
    for (let i = 0; i < 40; i++) rl.when('a');
    assert.equal(rl.when('a'), 1000_000);
  });

  it('applies the overall 10 qps bucket after a burst of 100', () => {
    const clock = new FakeClock(0);
    const rl = defaultControllerRateLimiter<string>(clock);
    for (let i = 0; i < 100; i++) assert.equal(rl.when(`k${i}`), 5);
    assert.equal(rl.when('k100'), 100);
  });
});
