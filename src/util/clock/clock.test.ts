import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, realClock, rfc3339, rfc3339Micro, parseTime } from './clock.js';

describe('FakeClock', () => {
  it('fires timers in deadline order as time advances', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push('b'), 20);
    clock.setTimer(() => fired.push('a'), 10);
    clock.setTimer(() => fired.push('c'), 30);
    await clock.advance(25);
    assert.deepEqual(fired, ['a', 'b']);
    assert.equal(clock.now(), 25);
    await clock.advance(5);
    assert.deepEqual(fired, ['a', 'b', 'c']);
  });

  it('does not fire a stopped timer', async () => {
    const clock = new FakeClock(0);
    let fired = false;
    const t = clock.setTimer(() => (fired = true), 10);
    assert.equal(t.stop(), true);
    assert.equal(t.stop(), false);
    await clock.advance(100);
    assert.equal(fired, false);
  });

  it('runs chains of sleeps scheduled by awaited continuations within one advance', async () => {
    const clock = new FakeClock(0);
    const seen: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        seen.push(clock.now());
      }
    })();
    await clock.advance(30);
    await loop;
    assert.deepEqual(seen, [10, 20, 30]);
  });

  it('rejects a sleep when its signal aborts', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort();
    await assert.rejects(p);
    assert.equal(clock.pendingTimers(), 0);
  });
});

describe('time formats', () => {
  it('formats metav1.Time and MicroTime like Kubernetes', () => {
    const t = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
    assert.equal(rfc3339(t), '2024-01-02T03:04:05Z');
    assert.equal(rfc3339Micro(t), '2024-01-02T03:04:05.678000Z');
    assert.equal(parseTime('2024-01-02T03:04:05Z'), Date.UTC(2024, 0, 2, 3, 4, 5));
    assert.equal(parseTime('garbage'), undefined);
  });
});

describe('realClock timers', () => {
  it('waits delays longer than a Node timer can hold (24.8 days) in steps, neither early nor never', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    let fired = 0;
    const month = 31 * 24 * 3600 * 1000;
    realClock.setTimer(() => fired++, month);
    t.mock.timers.tick(2 ** 31 - 1);
    assert.equal(fired, 0);
    t.mock.timers.tick(month - (2 ** 31 - 1) - 1);
    assert.equal(fired, 0);
    t.mock.timers.tick(1);
    assert.equal(fired, 1);
    const stopped = realClock.setTimer(() => fired++, month);
    t.mock.timers.tick(2 ** 31);
    assert.equal(stopped.stop(), true);
    t.mock.timers.tick(month);
    assert.equal(fired, 1);
  });
});
