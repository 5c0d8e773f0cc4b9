import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { newLogger, setLogOutput } from '../util/log/logger.js';
import { newControllerLifecycle } from './lifecycle.js';

async function settle(clock: FakeClock, ms = 0): Promise<void> {
  for (let i = 0; i < 5; i++) await flushMicrotasks();
  await clock.advance(ms);
}

function capture(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const prev = setLogOutput((l) => lines.push(l));
  return { lines, restore: () => setLogOutput(prev) };
}

describe('controller lifecycle', () => {
  it('runs the body only after the caches synced and logs the start and the stop', async () => {
    const out = capture();
    try {
      const clock = new FakeClock();
      const lc = newControllerLifecycle({ name: 'lc', clock, log: newLogger('lc'), starting: 'Starting lc', stopping: 'Shutting down lc' });
      let synced = false;
      let ran = false;
      const ac = new AbortController();
      const done = lc.run(ac.signal, () => synced, async () => {
        ran = true;
        await new Promise<void>((resolve) => ac.signal.addEventListener('abort', () => resolve()));
      });
      await settle(clock, 100);
      assert.equal(ran, false);
      synced = true;
      await settle(clock, 100);
      await settle(clock);
      assert.equal(ran, true);
      ac.abort();
      await done;
      assert.equal(lc.healthy(), true);
      const msgs = out.lines.join('\n');
      assert.ok(msgs.indexOf('Starting lc') < msgs.indexOf('Shutting down lc'), msgs);
    } finally {
      out.restore();
    }
  });

  it('is unhealthy once the body ends without the signal aborting, and passes its rejection on', async () => {
    const out = capture();
    try {
      const clock = new FakeClock();
      const lc = newControllerLifecycle({ name: 'lc', clock, log: newLogger('lc'), starting: 'start', stopping: 'stop' });
      await assert.rejects(
        lc.run(new AbortController().signal, [() => true, () => true], () => Promise.reject(new Error('boom'))),
        /boom/,
      );
      assert.equal(lc.healthy(), false);
      assert.ok(out.lines.some((l) => l.includes('stop')));
    } finally {
      out.restore();
    }
  });

  it('skips the body and stays healthy when the signal aborts before the caches synced', async () => {
    const out = capture();
    try {
      const clock = new FakeClock();
      const lc = newControllerLifecycle({ name: 'lc', clock, log: newLogger('lc'), starting: 'start', stopping: 'stop' });
      const ac = new AbortController();
      let ran = false;
      const done = lc.run(ac.signal, () => false, async () => void (ran = true));
      await settle(clock, 300);
      ac.abort();
      await done;
      assert.equal(ran, false);
      assert.equal(lc.healthy(), true);
      assert.ok(out.lines.some((l) => l.includes('stop')));
    } finally {
      out.restore();
    }
  });
});
