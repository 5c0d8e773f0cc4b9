import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { NetworkError } from '../../client/errors.js';
import { newFakeClient, type FakeClient } from '../../controller/testing/fake-client.js';
import { FakeClock, flushMicrotasks, rfc3339Micro } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import { defaultIdentity, newLeaderElector, type LeaderElector } from './leader-elector.js';

type LeaseObj = Lease & KubeObject;

interface Candidate {
  elector: LeaderElector;
  ac: AbortController;
  done: Promise<void>;
  started: number;
  stopped: number;
  leadingSignal: AbortSignal | undefined;
  newLeaders: string[];
  registry: Registry;
}

function candidate(fake: FakeClient, clock: FakeClock, identity: string, opts: { releaseOnCancel?: boolean } = {}): Candidate {
  const registry = new Registry();
  const c = { ac: new AbortController(), started: 0, stopped: 0, leadingSignal: undefined, newLeaders: [], registry } as unknown as Candidate;
  c.elector = newLeaderElector({
    client: fake,
    clock,
    lock: { namespace: 'kube-system', name: 'kcm', identity },
    callbacks: {
      onStartedLeading: async (signal) => {
        c.started++;
        c.leadingSignal = signal;
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
      onStoppedLeading: () => void c.stopped++,
      onNewLeader: (id) => void c.newLeaders.push(id),
    },
    registry,
    random: () => 0,
    ...(opts.releaseOnCancel !== undefined ? { releaseOnCancel: opts.releaseOnCancel } : {}),
  });
  c.done = c.elector.run(c.ac.signal);
  return c;
}

function lease(fake: FakeClient): NonNullable<Lease['spec']> {
  return fake.stored<LeaseObj>(GVR.leases, 'kube-system', 'kcm')!.spec!;
}

async function masterStatus(c: Candidate): Promise<number | undefined> {
  const m = await c.registry.getSingleMetric('leader_election_master_status')!.get();
  return m.values.find((v) => v.labels.name === 'kcm')?.value;
}

async function step(clock: FakeClock, ms: number): Promise<void> {
  await flushMicrotasks();
  await clock.advance(ms);
}

/** A candidate 'me' that has just taken the lease (and does not release it on cancel). */
async function leadingCandidate() {
  const clock = new FakeClock('2024-01-01T00:00:00Z');
  const fake = newFakeClient({ clock });
  const c = candidate(fake, clock, 'me', { releaseOnCancel: false });
  await step(clock, 0);
  assert.equal(c.elector.isLeader(), true);
  return { clock, fake, c };
}

function quietly(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    const restore = setLogOutput(() => {});
    try {
      await fn();
    } finally {
      setLogOutput(restore);
    }
  };
}

describe('leader election', () => {
  it(
    'acquires a free lease and records itself as holder',
    quietly(async () => {
      const clock = new FakeClock('2024-01-01T00:00:00Z');
      const fake = newFakeClient({ clock });
      const c = candidate(fake, clock, 'me');
      await step(clock, 0);
      assert.equal(c.elector.isLeader(), true);
      assert.equal(c.started, 1);
      assert.deepEqual(lease(fake), {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        leaseTransitions: 0,
        acquireTime: '2024-01-01T00:00:00.000000Z',
        renewTime: '2024-01-01T00:00:00.000000Z',
      });
      assert.equal(await masterStatus(c), 1);
      assert.deepEqual(c.newLeaders, ['me']);
      c.ac.abort();
      await c.done;
    }),
  );

  it(
    'renews the lease every retry period',
    quietly(async () => {
      const clock = new FakeClock('2024-01-01T00:00:00Z');
      const fake = newFakeClient({ clock });
      const c = candidate(fake, clock, 'me');
      await step(clock, 0);
      await step(clock, 2000);
      assert.equal(lease(fake).renewTime, rfc3339Micro(Date.parse('2024-01-01T00:00:02Z')));
      assert.equal(lease(fake).acquireTime, '2024-01-01T00:00:00.000000Z');
      await step(clock, 20_000);
      assert.equal(c.elector.isLeader(), true);
      c.ac.abort();
      await c.done;
    }),
  );

  it(
    'respects a lease held by another until it expires on our clock',
    quietly(async () => {
      const clock = new FakeClock('2024-01-01T00:00:00Z');
      const fake = newFakeClient({ clock });
      // The holder's timestamps are far in the past: only our own observation counts.
      fake.seed<LeaseObj>(GVR.leases, {
        metadata: { name: 'kcm', namespace: 'kube-system' },
        spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: '2000-01-01T00:00:00.000000Z', leaseTransitions: 3 },
      });
      const c = candidate(fake, clock, 'me');
      await step(clock, 0);
      assert.equal(c.elector.isLeader(), false);
      assert.equal(c.elector.getLeader(), 'other');
      await step(clock, 14_000);
      assert.equal(c.started, 0);
      assert.equal(lease(fake).holderIdentity, 'other');
      await step(clock, 2_000); // the 16 s attempt sees the observation expired
      assert.equal(c.elector.isLeader(), true);
      assert.equal(lease(fake).holderIdentity, 'me');
      assert.equal(lease(fake).leaseTransitions, 4);
      assert.deepEqual(c.newLeaders, ['other', 'me']);
      c.ac.abort();
      await c.done;
    }),
  );

  it(
    'keeps waiting while the holder keeps renewing',
    quietly(async () => {
      const clock = new FakeClock('2024-01-01T00:00:00Z');
      const fake = newFakeClient({ clock });
      const other = candidate(fake, clock, 'other');
      await step(clock, 0);
      const me = candidate(fake, clock, 'me');
      await step(clock, 60_000);
      assert.equal(other.elector.isLeader(), true);
      assert.equal(me.elector.isLeader(), false);
      assert.equal(me.started, 0);
      other.ac.abort();
      me.ac.abort();
      await Promise.all([other.done, me.done]);
    }),
  );

  it(
    'stops leading when renewals fail until the renew deadline, and never reports leading past it',
    quietly(async () => {
      const { clock, fake, c } = await leadingCandidate();
      fake.prependReactor('update', 'leases', () => {
        throw new NetworkError('connection refused');
      });
      fake.prependReactor('get', 'leases', () => {
        throw new NetworkError('connection refused');
      });
      const lastRenew = clock.now();
      // The next round starts a retry period (2 s) after the last renewal and fails 10 s later, as client-go's.
      // Step through time 1 s at a time: isLeader must turn false exactly then.
      for (let t = 1000; t <= 14_000; t += 1000) {
        await step(clock, 1000);
        const expected = clock.now() - lastRenew < 12_000;
        assert.equal(c.elector.isLeader(), expected, `at +${t} ms`);
        assert.equal(c.leadingSignal?.aborted ?? false, !expected, `leading at +${t} ms`);
      }
      await c.done;
      assert.equal(c.leadingSignal?.aborted, true);
      assert.equal(c.stopped, 1);
      assert.equal(await masterStatus(c), 0);
    }),
  );

  it(
    'keeps leading after its process was busy for longer than the renew deadline, when nobody took the lease meanwhile',
    quietly(async () => {
      const { clock, fake, c } = await leadingCandidate();
      // 20 s pass with no timer firing (a busy event loop), then the overdue renewal round runs.
      clock.setTime(clock.now() + 20_000);
      await step(clock, 0);
      await step(clock, 0);
      assert.equal(c.leadingSignal?.aborted, false);
      assert.equal(c.elector.isLeader(), true);
      assert.equal(lease(fake).renewTime, rfc3339Micro(clock.now()));
      c.ac.abort();
      await c.done;
    }),
  );

  it(
    'releases the lease on cancel so another candidate takes over at once',
    quietly(async () => {
      const clock = new FakeClock('2024-01-01T00:00:00Z');
      const fake = newFakeClient({ clock });
      const a = candidate(fake, clock, 'a');
      await step(clock, 0);
      const b = candidate(fake, clock, 'b');
      await step(clock, 0);
      assert.equal(a.elector.isLeader(), true);
      assert.equal(b.elector.isLeader(), false);
      a.ac.abort();
      await a.done;
      assert.equal(lease(fake).holderIdentity, '');
      assert.equal(lease(fake).leaseDurationSeconds, 1);
      assert.equal(a.elector.isLeader(), false);
      assert.equal(a.stopped, 1);
      await step(clock, 2_000);
      assert.equal(b.elector.isLeader(), true);
      b.ac.abort();
      await b.done;
    }),
  );

  it(
    'lets exactly one of two candidates lead',
    quietly(async () => {
      const clock = new FakeClock('2024-01-01T00:00:00Z');
      const fake = newFakeClient({ clock });
      const a = candidate(fake, clock, 'a');
      const b = candidate(fake, clock, 'b');
      for (let i = 0; i < 30; i++) {
        await step(clock, 1000);
        const leaders = [a, b].filter((c) => c.elector.isLeader()).length;
        assert.equal(leaders, 1, `at step ${i}`);
      }
      assert.equal(a.started + b.started, 1);
      a.ac.abort();
      b.ac.abort();
      await Promise.all([a.done, b.done]);
    }),
  );

  it('rejects timings client-go rejects and makes host-based identities', () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const base = { client: fake, clock, lock: { namespace: 'ns', name: 'l', identity: 'x' }, callbacks: { onStartedLeading() {}, onStoppedLeading() {} } };
    assert.throws(() => newLeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }), /leaseDuration/);
    assert.throws(() => newLeaderElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 }), /renewDeadline/);
    assert.match(defaultIdentity(), /^.+_[0-9a-f-]{36}$/);
  });
});
