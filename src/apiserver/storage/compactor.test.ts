import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock/clock.js';
import { newMemoryStorage } from './memory.js';
import { startCompactor } from './compactor.js';

const cm = (name: string) => ({ metadata: { name } });

describe('compactor', () => {
  it('compacts every interval to the revision seen at the previous run', async () => {
    const clock = new FakeClock();
    const s = newMemoryStorage();
    for (let i = 0; i < 3; i++) await s.create(`/k/a${i}`, cm(`a${i}`));
    const c = startCompactor(s, {}, clock);
    for (let i = 0; i < 2; i++) await s.create(`/k/b${i}`, cm(`b${i}`));
    await clock.advance(5 * 60_000);
    assert.equal(s.compactedRevision(), 3, 'the revision when the compactor started');
    await s.create('/k/c', cm('c'));
    await clock.advance(60_000);
    assert.equal(s.compactedRevision(), 3, 'not before the interval');
    await clock.advance(4 * 60_000);
    assert.equal(s.compactedRevision(), 5);
    c.stop();
    await s.create('/k/d', cm('d'));
    await clock.advance(10 * 60_000);
    assert.equal(s.compactedRevision(), 5);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('keeps the last `keep` revisions when asked', async () => {
    const clock = new FakeClock();
    const s = newMemoryStorage();
    const c = startCompactor(s, { intervalMs: 1000, keep: 2 }, clock);
    for (let i = 0; i < 10; i++) await s.create(`/k/a${i}`, cm(`a${i}`));
    await clock.advance(1000);
    assert.equal(s.compactedRevision(), 8);
    c.stop();
  });
});
