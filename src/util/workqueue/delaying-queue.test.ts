import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/clock.js';
import { newDelayingQueue } from './delaying-queue.js';
import type { DelayingQueue } from './interfaces.js';

async function drain(q: DelayingQueue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const item = (await q.get())!;
    out.push(item);
    q.done(item);
  }
  return out;
}

describe('newDelayingQueue', () => {
  it('adds an item once its delay has passed on the clock', async () => {
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 50);
    await clock.advance(49);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1);
    assert.deepEqual(await drain(q), ['a']);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('adds items in deadline order, not call order, with one timer', async () => {
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('c', 30);
    q.addAfter('a', 10);
    q.addAfter('d', 40);
    q.addAfter('b', 20);
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.nextTimerAt(), 10);
    await clock.advance(25);
    assert.deepEqual(await drain(q), ['a', 'b']);
    await clock.advance(100);
    assert.deepEqual(await drain(q), ['c', 'd']);
  });

  it('keeps the earlier deadline when a waiting item is added again', async () => {
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 20);
    q.addAfter('a', 500);
    await clock.advance(20);
    assert.equal(q.len(), 1);
    assert.deepEqual(await drain(q), ['a']);
    await clock.advance(1000);
    assert.equal(q.len(), 0, 'the later deadlines were merged away');
  });

  it('adds at once when the delay is zero or negative', () => {
    const q = newDelayingQueue<string>({ clock: new FakeClock(0) });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    assert.equal(q.len(), 2);
  });

  it('stops its timer and drops waiting items on shutdown', async () => {
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 10);
    q.shutDown();
    assert.equal(clock.pendingTimers(), 0);
    q.addAfter('b', 10);
    await clock.advance(100);
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
  });

  it('stops its timer on shutDownWithDrain too', async () => {
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 10);
    await q.shutDownWithDrain();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('orders many random deadlines correctly', async () => {
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ clock });
    const delays = Array.from({ length: 200 }, (_, i) => ((i * 7919) % 1000) + 1);
    delays.forEach((d, i) => q.addAfter(`k${i}`, d));
    const seen: string[] = [];
    for (let t = 0; t < 1000; t++) {
      await clock.advance(1);
      seen.push(...(await drain(q)));
    }
    const expected = delays.map((d, i) => ({ d, k: `k${i}` })).sort((x, y) => x.d - y.d || 0);
    assert.deepEqual(
      seen.map((k) => delays[Number(k.slice(1))]),
      expected.map((e) => e.d),
    );
    assert.equal(seen.length, 200);
  });
});
