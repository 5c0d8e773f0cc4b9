import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock/clock.js';
import { backoffDuration, newSchedulingQueue } from './scheduling-queue.js';
import { makePod } from './testing.js';

const prio = (name: string, priority: number) => makePod(name, { spec: { priority } });

describe('scheduling queue', () => {
  it('pops by priority, then by queue time', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    q.add(prio('low', 0));
    await clock.advance(1);
    q.add(prio('high', 100));
    await clock.advance(1);
    q.add(prio('low2', 0));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await q.pop())!.pod.metadata!.name);
    assert.deepEqual(order, ['high', 'low', 'low2']);
  });

  it('doubles the backoff from 1 s up to 10 s', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffDuration(n)), [1000, 2000, 4000, 8000, 10000, 10000]);
  });

  it('keeps unschedulable pods until a cluster event, then respects their backoff', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    const ac = new AbortController();
    q.run(ac.signal);
    q.add(makePod('p'));
    const qp = (await q.pop())!;
    q.addUnschedulable(qp, q.schedulingCycle());
    await clock.advance(5_000);
    assert.deepEqual(q.counts(), { active: 0, backoff: 0, unschedulable: 1 });
    q.moveAllToActiveOrBackoff('NodeAdd');
    assert.deepEqual(q.counts(), { active: 1, backoff: 0, unschedulable: 0 }, 'backoff of 1 s is over');
    const again = (await q.pop())!;
    assert.equal(again.attempts, 2);
    q.addUnschedulable(again, q.schedulingCycle());
    q.moveAllToActiveOrBackoff('NodeAdd');
    assert.deepEqual(q.counts(), { active: 0, backoff: 1, unschedulable: 0 }, 'second backoff of 2 s not over');
    await clock.advance(2_000);
    assert.deepEqual(q.counts(), { active: 1, backoff: 0, unschedulable: 0 });
    ac.abort();
  });

  it('sends a pod to backoff when a cluster event happened during its attempt', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    q.add(makePod('p'));
    const qp = (await q.pop())!;
    const cycle = q.schedulingCycle();
    q.moveAllToActiveOrBackoff('NodeAdd');
    q.addUnschedulable(qp, cycle);
    assert.deepEqual(q.counts(), { active: 0, backoff: 1, unschedulable: 0 });
  });

  it('moves only pods rejected by the named plugins', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    q.add(makePod('a'));
    q.add(makePod('b'));
    const a = (await q.pop())!;
    const b = (await q.pop())!;
    a.unschedulablePlugins = new Set(['InterPodAffinity']);
    b.unschedulablePlugins = new Set(['NodeResourcesFit']);
    q.addUnschedulable(a, q.schedulingCycle());
    q.addUnschedulable(b, q.schedulingCycle());
    await clock.advance(2_000);
    q.moveAllToActiveOrBackoff('AssignedPodAdd', ['InterPodAffinity']);
    assert.deepEqual(q.counts(), { active: 1, backoff: 0, unschedulable: 1 });
    assert.equal((await q.pop())!.pod.metadata!.name, 'a');
  });

  it('retries unschedulable pods after five minutes without events', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    const ac = new AbortController();
    q.run(ac.signal);
    q.add(makePod('p'));
    q.addUnschedulable((await q.pop())!, q.schedulingCycle());
    await clock.advance(4 * 60_000);
    assert.equal(q.counts().unschedulable, 1);
    await clock.advance(90_000);
    assert.equal(q.counts().active, 1);
    ac.abort();
  });

  it('forgets a pod deleted while it was being scheduled', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    const pod = makePod('p');
    q.add(pod);
    const qp = (await q.pop())!;
    q.delete(pod);
    q.addUnschedulable(qp, q.schedulingCycle());
    assert.deepEqual(q.counts(), { active: 0, backoff: 0, unschedulable: 0 });
  });

  it('wakes a waiting pop when a pod arrives and returns undefined once closed', async () => {
    const clock = new FakeClock();
    const q = newSchedulingQueue({ clock });
    const waiting = q.pop();
    q.add(makePod('late'));
    assert.equal((await waiting)!.pod.metadata!.name, 'late');
    const blocked = q.pop();
    q.close();
    assert.equal(await blocked, undefined);
  });
});
