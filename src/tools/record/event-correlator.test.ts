import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Event } from 'kubernetes-types/core/v1.js';
import { FakeClock, rfc3339 } from '../../util/clock/clock.js';
import { AGGREGATE_MESSAGE_PREFIX, newEventCorrelator } from './event-correlator.js';

let seq = 0;
function event(clock: FakeClock, message: string, reason = 'FailedCreate', name = 'rs'): Event {
  const ts = rfc3339(clock.now());
  return {
    metadata: { name: `${name}.${seq++}`, namespace: 'ns' },
    involvedObject: { kind: 'ReplicaSet', apiVersion: 'apps/v1', namespace: 'ns', name, uid: `uid-${name}` },
    reason,
    message,
    type: 'Warning',
    source: { component: 'replicaset-controller' },
    firstTimestamp: ts,
    lastTimestamp: ts,
    count: 1,
    reportingComponent: 'replicaset-controller',
    reportingInstance: '',
  };
}

describe('event correlator', () => {
  it('turns a repeated event into a count patch on the first one', async () => {
    const clock = new FakeClock();
    const c = newEventCorrelator({ clock });
    const first = c.correlate(event(clock, 'same'));
    assert.equal(first.patch, undefined);
    c.updateState({ ...first.event, metadata: { ...first.event.metadata, resourceVersion: '7' } });
    await clock.advance(60_000);
    const second = c.correlate(event(clock, 'same'));
    assert.equal(second.skip, false);
    assert.equal(second.event.count, 2);
    assert.equal(second.event.metadata?.name, first.event.metadata?.name);
    assert.equal(second.event.metadata?.resourceVersion, '7');
    assert.equal(second.event.firstTimestamp, first.event.firstTimestamp);
    assert.deepEqual(second.patch, { count: 2, lastTimestamp: rfc3339(clock.now()), message: 'same' });
  });

  it('combines similar events with different messages from the tenth on', () => {
    const clock = new FakeClock();
    const c = newEventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) {
      const r = c.correlate(event(clock, `msg ${i}`));
      assert.equal(r.event.message, `msg ${i}`);
    }
    const tenth = c.correlate(event(clock, 'msg 10'));
    assert.equal(tenth.event.message, `${AGGREGATE_MESSAGE_PREFIX}msg 10`);
    assert.equal(tenth.event.count, 1);
    const eleventh = c.correlate(event(clock, 'msg 11'));
    assert.equal(eleventh.event.message, `${AGGREGATE_MESSAGE_PREFIX}msg 11`);
    assert.equal(eleventh.event.count, 2, 'later combined events update the combined one');
    assert.equal(eleventh.event.metadata?.name, tenth.event.metadata?.name);
    const otherReason = c.correlate(event(clock, 'msg 12', 'OtherReason'));
    assert.equal(otherReason.event.message, 'msg 12');
  });

  it('starts aggregation over after ten quiet minutes', async () => {
    const clock = new FakeClock();
    const c = newEventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) c.correlate(event(clock, `msg ${i}`));
    await clock.advance(600_001);
    assert.equal(c.correlate(event(clock, 'msg 10')).event.message, 'msg 10');
  });

  it('drops events beyond a burst of 25 per object and lets one through every five minutes', async () => {
    const clock = new FakeClock();
    const c = newEventCorrelator({ clock });
    for (let i = 0; i < 25; i++) assert.equal(c.correlate(event(clock, 'x')).skip, false, `event ${i}`);
    assert.equal(c.correlate(event(clock, 'x')).skip, true);
    assert.equal(c.correlate(event(clock, 'x', 'FailedCreate', 'other-rs')).skip, false, 'other objects have their own bucket');
    await clock.advance(300_000);
    assert.equal(c.correlate(event(clock, 'x')).skip, false);
    assert.equal(c.correlate(event(clock, 'x')).skip, true);
  });
});
