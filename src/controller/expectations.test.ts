import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock/clock.js';
import { EXPECTATIONS_TIMEOUT_MS, newControllerExpectations, newUIDTrackingControllerExpectations } from './expectations.js';

describe('controller expectations', () => {
  it('is satisfied for a key that never set expectations', () => {
    const e = newControllerExpectations({ clock: new FakeClock() });
    assert.equal(e.satisfiedExpectations('ns/a'), true);
  });

  it('waits until every expected creation and deletion was observed', () => {
    const e = newControllerExpectations({ clock: new FakeClock() });
    e.setExpectations('ns/a', 2, 1);
    assert.equal(e.satisfiedExpectations('ns/a'), false);
    e.creationObserved('ns/a');
    e.creationObserved('ns/a');
    assert.equal(e.satisfiedExpectations('ns/a'), false);
    e.deletionObserved('ns/a');
    assert.equal(e.satisfiedExpectations('ns/a'), true);
  });

  it('counts expectations as satisfied once they are older than five minutes on the clock', async () => {
    const clock = new FakeClock();
    const e = newControllerExpectations({ clock });
    e.expectCreations('ns/a', 3);
    await clock.advance(EXPECTATIONS_TIMEOUT_MS);
    assert.equal(e.satisfiedExpectations('ns/a'), false, 'exactly at the TTL it still waits');
    await clock.advance(1);
    assert.equal(e.satisfiedExpectations('ns/a'), true);
  });

  it('raises and lowers only existing expectations and keeps their timestamp', async () => {
    const clock = new FakeClock();
    const e = newControllerExpectations({ clock });
    e.raiseExpectations('ns/none', 1, 1);
    assert.equal(e.getExpectations('ns/none'), undefined);
    e.expectDeletions('ns/a', 1);
    const t0 = e.getExpectations('ns/a')!.timestamp;
    await clock.advance(1000);
    e.raiseExpectations('ns/a', 2, 0);
    assert.deepEqual(e.getExpectations('ns/a'), { add: 2, del: 1, timestamp: t0 });
    e.lowerExpectations('ns/a', 2, 1);
    assert.equal(e.satisfiedExpectations('ns/a'), true);
    e.deleteExpectations('ns/a');
    assert.equal(e.getExpectations('ns/a'), undefined);
  });

  it('counts the deletion of a tracked pod only once', () => {
    const e = newUIDTrackingControllerExpectations(newControllerExpectations({ clock: new FakeClock() }));
    e.expectDeletions('ns/rs', ['ns/p1', 'ns/p2']);
    assert.equal(e.satisfiedExpectations('ns/rs'), false);
    e.deletionObserved('ns/rs', 'ns/p1');
    e.deletionObserved('ns/rs', 'ns/p1');
    e.deletionObserved('ns/rs', 'ns/unrelated');
    assert.equal(e.satisfiedExpectations('ns/rs'), false);
    assert.deepEqual([...e.getUIDs('ns/rs')!], ['ns/p2']);
    e.deletionObserved('ns/rs', 'ns/p2');
    assert.equal(e.satisfiedExpectations('ns/rs'), true);
    e.deleteExpectations('ns/rs');
    assert.equal(e.getUIDs('ns/rs'), undefined);
  });
});
