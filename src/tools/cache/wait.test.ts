import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { waitForCacheSync } from './wait.js';

describe('waitForCacheSync', () => {
  it('resolves true at once when everything has synced', async () => {
    assert.equal(await waitForCacheSync(new AbortController().signal, () => true, () => true, { clock: new FakeClock() }), true);
  });

  it('polls until every cache has synced', async () => {
    const clock = new FakeClock();
    let a = false;
    let result: boolean | undefined;
    void waitForCacheSync(new AbortController().signal, () => a, () => true, { clock, pollMs: 50 }).then((r) => (result = r));
    await clock.advance(200);
    assert.equal(result, undefined);
    a = true;
    await clock.advance(49);
    assert.equal(result, undefined);
    await clock.advance(1);
    assert.equal(result, true);
  });

  it('resolves false when aborted first', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = waitForCacheSync(ac.signal, () => false, { clock });
    await clock.advance(500);
    ac.abort();
    await flushMicrotasks();
    assert.equal(await p, false);
  });
});
