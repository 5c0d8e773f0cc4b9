import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../clock/clock.js';
import { newQueue } from './queue.js';

describe('newQueue', () => {
  it('hands items out in FIFO order and collapses duplicate adds while waiting', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('c');
    assert.equal(q.len(), 3);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(await q.get(), 'c');
    assert.equal(q.len(), 0);
  });

  it('keeps FIFO order across a long run of interleaved adds and gets', async () => {
    const q = newQueue<number>({ clock: new FakeClock(0) });
    let next = 0;
    const seen: number[] = [];
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 200; i++) q.add(next++);
      for (let i = 0; i < 150; i++) {
        const v = (await q.get())!;
        seen.push(v);
        q.done(v);
      }
    }
    while (q.len() > 0) seen.push((await q.get())!);
    assert.equal(seen.length, 10_000);
    assert.ok(seen.every((v, i) => v === i));
  });

  it('makes get wait on an empty queue until an item is added', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    let got: string | undefined = 'none';
    const p = q.get().then((v) => (got = v));
    await flushMicrotasks();
    assert.equal(got, 'none');
    q.add('x');
    await p;
    assert.equal(got, 'x');
  });

  it('queues an item added during processing again only after done', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'not queued while processing');
    let second: string | undefined;
    const p = q.get().then((v) => (second = v));
    await flushMicrotasks();
    assert.equal(second, undefined, 'a second worker does not receive the processing item');
    q.done('a');
    await p;
    assert.equal(second, 'a');
    q.done('a');
    assert.equal(q.len(), 0, 'processed once more, not twice');
  });

  it('does not requeue an item that was not re-added during processing', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    await q.get();
    q.done('a');
    assert.equal(q.len(), 0);
  });

  it('ignores done for an item that is not processing', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    q.done('a');
    assert.equal(q.len(), 1);
    assert.equal(await q.get(), 'a');
    assert.equal(q.len(), 0);
  });

  it('never hands one key to two workers at once', async () => {
    const clock = new FakeClock(0);
    const q = newQueue<string>({ clock });
    const active = new Set<string>();
    const processed = new Map<string, number>();
    let overlaps = 0;
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const worker = async () => {
      for (;;) {
        const key = await q.get();
        if (key === undefined) return;
        if (active.has(key)) overlaps++;
        active.add(key);
        // Re-adds while processing must not reach another worker.
        if (rand() < 0.5) q.add(key);
        await clock.sleep(1 + Math.floor(rand() * 20));
        active.delete(key);
        processed.set(key, (processed.get(key) ?? 0) + 1);
        q.done(key);
      }
    };
    const workers = Array.from({ length: 5 }, () => worker());
    for (let round = 0; round < 50; round++) {
      for (let k = 0; k < 4; k++) q.add(`key-${Math.floor(rand() * 6)}`);
      await clock.advance(7);
    }
    await clock.advance(10_000);
    q.shutDown();
    await Promise.all(workers);
    assert.equal(overlaps, 0);
    assert.ok(processed.size >= 5, 'several keys were processed');
    assert.equal(q.len(), 0);
  });

  it('wakes waiting getters with undefined on shutDown and ignores later adds', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    const a = q.get();
    const b = q.get();
    q.shutDown();
    assert.equal(q.shuttingDown(), true);
    assert.equal(await a, undefined);
    assert.equal(await b, undefined);
    q.add('late');
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
  });

  it('still hands out items queued before shutDown, as client-go does, then undefined', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    q.add('b');
    q.shutDown();
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(await q.get(), undefined);
  });

  it('resolves shutDownWithDrain only after every processing item is done', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    q.add('b');
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    let drained = false;
    const d = q.shutDownWithDrain().then(() => (drained = true));
    assert.equal(q.shuttingDown(), true);
    q.add('c');
    assert.equal(q.len(), 0, 'adds are ignored while draining');
    q.done('a');
    await flushMicrotasks();
    assert.equal(drained, false);
    q.done('b');
    await d;
    assert.equal(drained, true);
  });

  it('hands out an item re-added before the drain and waits for it too', async () => {
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a'); // dirty while processing
    let drained = false;
    const d = q.shutDownWithDrain().then(() => (drained = true));
    q.done('a');
    assert.equal(q.len(), 1, 'the dirty item is queued again on done');
    assert.equal(await q.get(), 'a');
    await flushMicrotasks();
    assert.equal(drained, false);
    q.done('a');
    await d;
    assert.equal(await q.get(), undefined);
  });

  it('resolves shutDownWithDrain at once when nothing is processing, and when shutDown cuts it short', async () => {
    const idle = newQueue<string>({ clock: new FakeClock(0) });
    await idle.shutDownWithDrain();
    const q = newQueue<string>({ clock: new FakeClock(0) });
    q.add('a');
    await q.get();
    const d = q.shutDownWithDrain();
    q.shutDown();
    await d;
  });
});
