import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newRestartBackoff } from './restart-backoff.js';

describe('restart backoff of the controller side', () => {
  it('doubles from 1 s up to a 10 s cap for crashes in a row', () => {
    const b = newRestartBackoff();
    const delays: number[] = [];
    let t = 0;
    for (let i = 0; i < 7; i++) {
      b.started(t);
      t += 500;
      delays.push(b.crashed(t));
    }
    assert.deepEqual(delays, [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  });

  it('starts over once the side was ready again, however soon it crashes after', () => {
    const b = newRestartBackoff();
    let t = 0;
    for (let i = 0; i < 5; i++) {
      b.started(t);
      t += 100;
      b.crashed(t);
    }
    b.started(t);
    b.ready();
    t += 5_000;
    assert.equal(b.crashed(t), 1000);
    b.started(t);
    assert.equal(b.crashed(t + 10), 2000);
  });

  it('starts over after a minute of running without a readiness report', () => {
    const b = newRestartBackoff();
    b.started(0);
    b.crashed(10);
    b.started(1010);
    b.crashed(1020);
    b.started(5000);
    assert.equal(b.crashed(65_000), 1000);
  });
});
