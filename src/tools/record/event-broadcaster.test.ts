import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Event } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { NetworkError, StatusError, newStatus } from '../../client/errors.js';
import { newFakeClient } from '../../controller/testing/fake-client.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newEventBroadcaster } from './event-broadcaster.js';

const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'ns', uid: 'u1', resourceVersion: '5' } };

function quiet<T>(fn: () => Promise<T>): Promise<T> {
  const restore = setLogOutput(() => {});
  return fn().finally(() => setLogOutput(restore));
}

describe('event broadcaster', () => {
  it('writes core/v1 events about the object', async () => {
    const clock = new FakeClock('2024-03-01T00:00:00Z');
    const fake = newFakeClient({ clock });
    const b = newEventBroadcaster({ client: fake, clock });
    const rec = b.newRecorder({ component: 'replicaset-controller', host: 'node-1' });
    rec.eventf(rs, 'Normal', 'SuccessfulCreate', 'Created pod: %v', 'web-abcde');
    await b.whenIdle();
    const [e] = fake.storedList<Event & KubeObject>(GVR.events, 'ns');
    assert.ok(e);
    assert.match(e.metadata!.name!, /^web\.[0-9a-f]+$/);
    // Unix nanoseconds: the clock's millisecond, with a sub-millisecond part.
    const nanos = BigInt(`0x${e.metadata!.name!.slice('web.'.length)}`);
    assert.equal(nanos / 1000000n, BigInt(Date.parse('2024-03-01T00:00:00Z')));
    assert.deepEqual(e.involvedObject, { kind: 'ReplicaSet', namespace: 'ns', name: 'web', uid: 'u1', apiVersion: 'apps/v1', resourceVersion: '5' });
    assert.equal(e.reason, 'SuccessfulCreate');
    assert.equal(e.message, 'Created pod: web-abcde');
    assert.equal(e.type, 'Normal');
    assert.equal(e.count, 1);
    assert.equal(e.firstTimestamp, '2024-03-01T00:00:00Z');
    assert.equal(e.lastTimestamp, '2024-03-01T00:00:00Z');
    assert.deepEqual(e.source, { component: 'replicaset-controller', host: 'node-1' });
    assert.equal(e.reportingComponent, 'replicaset-controller');
    assert.equal(e.reportingInstance, 'node-1');
    await b.shutdown();
  });

  it('names events of two broadcasters about one object in the same millisecond apart (both are written)', async () => {
    const clock = new FakeClock('2024-03-01T00:00:00Z');
    const fake = newFakeClient({ clock });
    const a = newEventBroadcaster({ client: fake, clock });
    const b = newEventBroadcaster({ client: fake, clock });
    a.newRecorder({ component: 'volume-expand' }).event(rs, 'Normal', 'ExternalExpanding', 'waiting for an external controller to expand this PVC');
    b.newRecorder({ component: 'resizer' }).event(rs, 'Normal', 'Resizing', 'External resizer is resizing volume pv-1');
    await quiet(async () => {
      await a.whenIdle();
      await b.whenIdle();
    });
    const reasons = fake.storedList<Event & KubeObject>(GVR.events, 'ns').map((e) => e.reason);
    assert.deepEqual(reasons.sort(), ['ExternalExpanding', 'Resizing']);
    await a.shutdown();
    await b.shutdown();
  });

  it('drops events beyond maxQueued while the sink is busy, logging the first drop and then their count at most every 10 s', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let first = true;
    fake.prependReactor('create', 'events', () => (first ? ((first = false), blocked.then(() => undefined)) : undefined));
    const lines: string[] = [];
    const restore = setLogOutput((l) => lines.push(l));
    try {
      const b = newEventBroadcaster({ client: fake, clock, maxQueued: 2 });
      const rec = b.newRecorder({ component: 'default-scheduler' });
      for (let i = 0; i < 6; i++) rec.event({ ...rs, metadata: { ...rs.metadata, name: `p${i}`, uid: `u${i}` } }, 'Normal', 'Scheduled', `assigned p${i}`);
      await flushMicrotasks();
      // p0 is being written, p1 and p2 wait, p3, p4 and p5 found the queue full: one line, for p3.
      const drops = lines.filter((l) => l.includes('unable to record event, dropped it'));
      assert.equal(drops.length, 1);
      assert.match(drops[0]!, /too many queued events \(2\)/);
      assert.match(drops[0]!, /object="ns\/p3"/);
      const counts = () => lines.filter((l) => l.includes('dropped events: the queue was full'));
      assert.equal(counts().length, 0);
      release();
      await b.whenIdle();
      // The queue has room again, but within 10 s of the last report nothing more is logged.
      rec.event({ ...rs, metadata: { ...rs.metadata, name: 'p6', uid: 'u6' } }, 'Normal', 'Scheduled', 'assigned p6');
      assert.equal(counts().length, 0);
      // Later, the next event logs the count of those not reported (p4 and p5).
      await clock.advance(10_000);
      rec.event({ ...rs, metadata: { ...rs.metadata, name: 'p7', uid: 'u7' } }, 'Normal', 'Scheduled', 'assigned p7');
      assert.equal(counts().length, 1);
      assert.match(counts()[0]!, /dropped=2/);
      await b.whenIdle();
      assert.deepEqual(fake.storedList<Event & KubeObject>(GVR.events, 'ns').map((e) => e.involvedObject?.name).sort(), ['p0', 'p1', 'p2', 'p6', 'p7']);
      await b.shutdown();
    } finally {
      setLogOutput(restore);
    }
  });

  it('files events of cluster-scoped objects in default', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const b = newEventBroadcaster({ client: fake, clock });
    b.newRecorder({ component: 'c' }).annotatedEventf({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, { a: 'b' }, 'Warning', 'R', 'm');
    await b.whenIdle();
    const [e] = fake.storedList(GVR.events, 'default');
    assert.deepEqual(e?.metadata?.annotations, { a: 'b' });
    await b.shutdown();
  });

  it('patches the count of a repeated event, and creates it again when it is gone', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const b = newEventBroadcaster({ client: fake, clock });
    const rec = b.newRecorder({ component: 'c' });
    rec.event(rs, 'Warning', 'FailedCreate', 'quota');
    await b.whenIdle();
    await clock.advance(1000);
    rec.event(rs, 'Warning', 'FailedCreate', 'quota');
    await b.whenIdle();
    const stored = fake.storedList<Event & KubeObject>(GVR.events, 'ns');
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.count, 2);
    assert.deepEqual(fake.actions().map((a) => `${a.verb}:${a.patchType ?? ''}`), ['create:', 'patch:strategic']);
    await fake.resource(GVR.events).namespace('ns').delete(stored[0]!.metadata!.name!);
    fake.clearActions();
    rec.event(rs, 'Warning', 'FailedCreate', 'quota');
    await b.whenIdle();
    assert.deepEqual(fake.actions().map((a) => a.verb), ['patch', 'create']);
    assert.equal(fake.storedList<Event & KubeObject>(GVR.events, 'ns')[0]!.count, 3);
    await b.shutdown();
  });

  it('retries network failures on the clock and does not retry rejections', () =>
    quiet(async () => {
      const clock = new FakeClock();
      const fake = newFakeClient({ clock });
      let failures = 2;
      fake.prependReactor('create', 'events', (a) => {
        if (a.object?.reason === 'Rejected') throw new StatusError(newStatus(422, 'Invalid', 'bad event'));
        if (failures-- > 0) throw new NetworkError('connection refused');
        return undefined;
      });
      const b = newEventBroadcaster({ client: fake, clock, random: () => 0.5 });
      const rec = b.newRecorder({ component: 'c' });
      rec.event(rs, 'Normal', 'Rejected', 'x');
      rec.event(rs, 'Normal', 'Retried', 'y');
      await flushMicrotasks();
      await clock.advance(4_999);
      assert.equal(fake.storedList(GVR.events, 'ns').length, 0);
      await clock.advance(1); // first retry after 10 s * random
      await clock.advance(10_000); // then every 10 s
      await b.whenIdle();
      const stored = fake.storedList<Event & KubeObject>(GVR.events, 'ns');
      assert.deepEqual(stored.map((e) => e.reason), ['Retried']);
      assert.equal(fake.actions().filter((a) => a.object?.reason === 'Rejected').length, 1);
      await b.shutdown();
    }));

  it('drops events beyond the queue bound instead of blocking', () =>
    quiet(async () => {
      const clock = new FakeClock();
      const fake = newFakeClient({ clock });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      fake.prependReactor('create', 'events', async () => {
        await gate;
        return undefined;
      });
      const b = newEventBroadcaster({ client: fake, clock, maxQueued: 2 });
      const rec = b.newRecorder({ component: 'c' });
      for (let i = 0; i < 5; i++) rec.event({ ...rs, metadata: { ...rs.metadata, name: `o${i}` } }, 'Normal', 'R', `m${i}`);
      release();
      await b.whenIdle();
      // o0 was taken by the writer at once; o1 and o2 fit in the queue; o3 and o4 were dropped.
      assert.deepEqual(
        fake.storedList<Event & KubeObject>(GVR.events, 'ns').map((e) => e.involvedObject.name).sort(),
        ['o0', 'o1', 'o2'],
      );
      await b.shutdown();
    }));

  it('ignores unsupported event types and never throws', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const b = newEventBroadcaster({ client: fake, clock });
    await quiet(async () => b.newRecorder({ component: 'c' }).event(rs, 'Bogus' as 'Normal', 'R', 'm'));
    await b.whenIdle();
    assert.equal(fake.actions().length, 0);
    await b.shutdown();
  });
});
