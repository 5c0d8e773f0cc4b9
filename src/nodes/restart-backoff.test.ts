import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock/clock.js';
import { formatGoDuration, newRestartBackoff } from './restart-backoff.js';

describe('newRestartBackoff', () => {
  it('lets the first restart go ahead and then doubles from 10 s up to 300 s', () => {
    const clock = new FakeClock();
    const b = newRestartBackoff({ clock });
    assert.equal(b.inBackoffSince('k', clock.now()), false);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.next('k', clock.now());
      delays.push(b.get('k'));
    }
    assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  });
  it('holds a key while less than its delay has passed since the event', async () => {
    const clock = new FakeClock();
    const b = newRestartBackoff({ clock });
    b.next('k', clock.now());
    const finished = clock.now();
    assert.equal(b.inBackoffSince('k', finished), true);
    await clock.advance(9_999);
    assert.equal(b.inBackoffSince('k', finished), true);
    await clock.advance(1);
    assert.equal(b.inBackoffSince('k', finished), false);
  });
  it('starts over when the event comes more than twice the maximum after the last update', async () => {
    const clock = new FakeClock();
    const b = newRestartBackoff({ clock });
    b.next('k', clock.now());
    b.next('k', clock.now());
    assert.equal(b.get('k'), 20_000);
    await clock.advance(600_001);
    b.next('k', clock.now());
    assert.equal(b.get('k'), 10_000);
  });
  it('formats delays as Go durations', () => {
    assert.equal(formatGoDuration(10_000), '10s');
    assert.equal(formatGoDuration(80_000), '1m20s');
    assert.equal(formatGoDuration(300_000), '5m0s');
  });
});
