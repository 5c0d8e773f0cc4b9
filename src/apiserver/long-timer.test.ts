import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, type Timer } from '../util/clock/clock.js';
import { maxTimerDelayMs, setLongTimer } from './long-timer.js';

/** A fake clock whose timers behave as Node's setTimeout: a delay past 2^31 - 1 ms fires after 1 ms. */
class NodeTimersClock extends FakeClock {
  override setTimer(fn: () => void, ms: number): Timer {
    return super.setTimer(fn, ms > maxTimerDelayMs ? 1 : ms);
  }
}

const day = 24 * 3600 * 1000;

describe('setLongTimer', () => {
  it('fires a delay longer than setTimeout holds at its time, not before', async () => {
    const clock = new NodeTimersClock();
    let fired = 0;
    setLongTimer(clock, () => fired++, 100 * day);
    await clock.advance(1);
    assert.equal(fired, 0, 'a plain setTimeout would have fired after 1 ms');
    await clock.advance(100 * day - 2);
    assert.equal(fired, 0);
    await clock.advance(1);
    assert.equal(fired, 1);
    await clock.advance(100 * day);
    assert.equal(fired, 1);
  });

  it('fires short delays once, as setTimer does', async () => {
    const clock = new NodeTimersClock();
    let fired = 0;
    setLongTimer(clock, () => fired++, 10);
    await clock.advance(10);
    assert.equal(fired, 1);
  });

  it('stops before firing, at any step, and never fires an infinite delay', async () => {
    const clock = new NodeTimersClock();
    let fired = 0;
    const t = setLongTimer(clock, () => fired++, 60 * day);
    await clock.advance(30 * day);
    assert.equal(t.stop(), true);
    assert.equal(t.stop(), false);
    setLongTimer(clock, () => fired++, Infinity);
    await clock.advance(100 * day);
    assert.equal(fired, 0);
    assert.equal(clock.pendingTimers(), 0);
  });
});
