import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { GVR } from '../api/gvr.js';
import { newRestConfig } from '../client/rest-config.js';
import { startFakeApiServer } from '../client/testing/fake-api-server.js';
import { newStatus, StatusError } from '../client/errors.js';
import { newFakeClient } from '../controller/testing/fake-client.js';
import { FakeClock } from '../util/clock/clock.js';
import { setLogFormat, setLogOutput } from '../util/log/logger.js';
import { controller } from './builder.js';
import { LeaderElectionLostError } from './errors.js';
import { kinds } from './kinds.js';
import { newManager } from './manager.js';
import { settle, testManager, until } from './test-support.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

function cm(name: string, ns = 'default'): ConfigMap & { [k: string]: unknown } {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns } };
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('runtime manager', () => {
  it('renews its lease through a client of its own, with /leader-election in the user agent, as controller-runtime', async () => {
    const server = await startFakeApiServer({ resources: [{ gvr: GVR.leases, kind: 'Lease', namespaced: true }] });
    const ac = new AbortController();
    try {
      const mgr = newManager({ name: 'widgets', restConfig: newRestConfig({ host: server.url, userAgent: 'widgets/v1' }), leaderElection: { identity: 'one', namespace: 'default' } });
      const done = mgr.start(ac.signal);
      await mgr.elected();
      const leaseRequests = server.requests.filter((r) => r.path.includes('/leases'));
      assert.ok(leaseRequests.length > 0);
      for (const r of leaseRequests) assert.equal(r.headers['user-agent'], 'widgets/v1/leader-election');
      ac.abort();
      await done;
    } finally {
      ac.abort();
      await server.close();
    }
  });

  it('runs the controllers of one candidate at a time, and hands over on release', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    fake.seed(GVR.configMaps, cm('a'));
    const reconciledBy: string[] = [];
    const make = (identity: string) => {
      const mgr = newManager({ name: 'widgets', client: fake, clock, leaderElection: { identity, namespace: 'kube-system' } });
      controller(mgr)
        .for(kinds.ConfigMap)
        .complete(() => {
          reconciledBy.push(identity);
        });
      const ac = new AbortController();
      return { mgr, ac, done: mgr.start(ac.signal) };
    };
    const one = make('one');
    await one.mgr.elected();
    const two = make('two');
    await until(() => reconciledBy.length === 1, 'leader reconciles');
    await clock.advance(20_000);
    await settle();
    assert.deepEqual(reconciledBy, ['one']);
    assert.equal(one.mgr.isLeader(), true);
    assert.equal(two.mgr.isLeader(), false);
    const lease = fake.stored<Lease & { [k: string]: unknown }>(GVR.leases, 'kube-system', 'widgets-leader');
    assert.equal(lease?.spec?.holderIdentity, 'one');

    one.ac.abort();
    await one.done;
    // Released on shutdown: the other candidate takes over at its next retry, not after the lease duration.
    // Step the clock (the retry timer is set when the previous attempt's requests finish), never waiting on a timer that is not set yet.
    for (let i = 0; i < 12 && !two.mgr.isLeader(); i++) {
      await clock.advance(500);
      await settle();
    }
    assert.equal(two.mgr.isLeader(), true, 'the other candidate leads within 6 s of the release');
    await two.mgr.elected();
    await until(() => reconciledBy.length === 2, 'successor reconciles');
    assert.deepEqual(reconciledBy, ['one', 'two']);
    two.ac.abort();
    await two.done;
  });

  it('stops its controllers and rejects with LeaderElectionLostError when renewals fail past the deadline', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    fake.seed(GVR.configMaps, cm('a'));
    const mgr = newManager({ name: 'widgets', client: fake, clock, leaderElection: { identity: 'one', namespace: 'default' } });
    let running = 0;
    controller(mgr)
      .for(kinds.ConfigMap)
      .complete(async (ctx) => {
        running++;
        await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
        running--;
      });
    const done = mgr.start(new AbortController().signal);
    let outcome: unknown;
    void done.catch((err: unknown) => (outcome = err));
    await mgr.elected();
    await until(() => running === 1, 'reconcile running');
    fake.prependReactor('update', 'leases', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'etcd down'));
    });
    for (let i = 0; i < 12 && outcome === undefined; i++) {
      await clock.advance(2_000);
      await settle();
    }
    assert.ok(outcome instanceof LeaderElectionLostError, `rejected with ${String(outcome)}`);
    assert.equal(running, 0);
    assert.equal(mgr.isLeader(), false);
  });

  it('runs runnables that need no leadership on every replica, and the others only while leading', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const started: string[] = [];
    const make = (identity: string) => {
      const mgr = newManager({ name: 'r', client: fake, clock, leaderElection: { identity, namespace: 'default' } });
      const wait = (signal: AbortSignal) => new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      mgr.add({ needLeaderElection: false, start: (s) => (started.push(`${identity}:everywhere`), wait(s)) });
      mgr.add({ start: (s) => (started.push(`${identity}:leader`), wait(s)) });
      const ac = new AbortController();
      return { mgr, ac, done: mgr.start(ac.signal) };
    };
    const one = make('one');
    await one.mgr.elected();
    const two = make('two');
    await until(() => started.length === 3, 'three starts');
    await settle();
    assert.deepEqual(started.sort(), ['one:everywhere', 'one:leader', 'two:everywhere']);
    one.ac.abort();
    two.ac.abort();
    await Promise.all([one.done, two.done]);
  });

  it('serves /healthz, /readyz (informers synced, watches alive) and /metrics with the controller-runtime metrics', async () => {
    const t = testManager({ healthProbeBindAddress: '127.0.0.1:0', metricsBindAddress: 'localhost:0' });
    t.fake.seed(GVR.configMaps, cm('a'));
    controller(t.mgr).for(kinds.ConfigMap).complete(() => undefined);
    await t.start();
    try {
      await settle();
      const probe = t.mgr.healthProbeUrl()!;
      const metrics = t.mgr.metricsUrl()!;
      assert.notEqual(probe, metrics);
      assert.deepEqual(await get(`${probe}/healthz`), { status: 200, body: 'ok' });
      assert.deepEqual(await get(`${probe}/readyz`), { status: 200, body: 'ok' });
      assert.match((await get(`${probe}/readyz?verbose`)).body, /\[\+\]informers ok/);
      assert.equal((await get(`${probe}/metrics`)).status, 404);
      const text = (await get(`${metrics}/metrics`)).body;
      assert.match(text, /controller_runtime_reconcile_total\{controller="configmap",result="success"\} 1/);
      assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="configmap"\} 1/);
      assert.match(text, /workqueue_adds_total\{name="configmap",controller="configmap"\} 1/);
      assert.match(text, /controller_runtime_active_workers\{controller="configmap"\} 0/);

      // The ConfigMap watch goes down and cannot come back: ready again only within the grace period.
      t.fake.prependReactor('watch', 'configmaps', () => {
        throw new StatusError(newStatus(503, 'ServiceUnavailable', 'down'));
      });
      t.fake.closeWatches(GVR.configMaps);
      await settle();
      assert.equal((await get(`${probe}/readyz`)).status, 200);
      for (let i = 0; i < 8; i++) {
        await t.clock.advance(5_000);
        await settle();
      }
      const down = await get(`${probe}/readyz`);
      assert.equal(down.status, 500);
      assert.match(down.body, /\[-\]informers failed: reason withheld/);
      assert.deepEqual(await get(`${probe}/healthz`), { status: 200, body: 'ok' });
    } finally {
      await t.stop();
    }
    await assert.rejects(fetch(`${t.mgr.healthProbeUrl()}/healthz`));
  });

  it('serves probes and metrics on one port when both addresses are the same', async () => {
    const clock = new FakeClock();
    const mgr = newManager({ name: 'x', client: newFakeClient({ clock }), clock, leaderElection: false, healthProbeBindAddress: '127.0.0.1:0', metricsBindAddress: '127.0.0.1:0' });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    await mgr.elected();
    await settle();
    // Distinct servers for equal ":0" addresses would be two ports; the same address string shares one.
    assert.equal(mgr.healthProbeUrl(), mgr.metricsUrl());
    assert.equal((await get(`${mgr.metricsUrl()}/metrics`)).status, 200);
    assert.equal((await get(`${mgr.healthProbeUrl()}/readyz`)).status, 200);
    ac.abort();
    await done;
  });

  it('writes reconcile logs that carry controller, namespace, name and a reconcileID', async () => {
    const lines: string[] = [];
    const prev = setLogOutput((l) => lines.push(l));
    setLogFormat('json');
    try {
      const t = testManager();
      t.fake.seed(GVR.configMaps, cm('a'));
      const ids: string[] = [];
      controller(t.mgr)
        .for(kinds.ConfigMap)
        .complete((ctx) => {
          ids.push(ctx.reconcileID);
          ctx.log.info({ step: 'one' }, 'reconciling widget');
          throw new Error('boom');
        });
      await t.start();
      await until(() => ids.length === 1, 'reconcile');
      await t.clock.advance(5);
      await until(() => ids.length === 2, 'retry');
      await t.stop();
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const mine = parsed.filter((l) => l.msg === 'reconciling widget');
      assert.equal(mine.length, 2);
      assert.deepEqual(
        { controller: mine[0]!.controller, namespace: mine[0]!.namespace, name: mine[0]!.name, step: mine[0]!.step },
        { controller: 'configmap', namespace: 'default', name: 'a', step: 'one' },
      );
      assert.match(String(mine[0]!.reconcileID), /^[0-9a-f-]{36}$/);
      assert.notEqual(mine[0]!.reconcileID, mine[1]!.reconcileID);
      assert.deepEqual(
        mine.map((l) => l.reconcileID),
        ids,
      );
      const err = parsed.find((l) => l.msg === 'Reconciler error');
      assert.equal(err?.err, 'boom');
      assert.equal(err?.reconcileID, ids[0]);
      assert.equal(err?.severity, 'error');
    } finally {
      setLogFormat('text');
      setLogOutput(prev);
    }
  });

  it('fails start() when a controller cannot sync its caches in time', async () => {
    const t = testManager();
    t.fake.prependReactor('list', 'configmaps', () => {
      throw new StatusError(newStatus(403, 'Forbidden', 'configmaps is forbidden'));
    });
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .withOptions({ cacheSyncTimeoutMs: 10_000 })
      .complete(() => undefined);
    const done = t.mgr.start(new AbortController().signal);
    let outcome: unknown;
    void done.catch((err: unknown) => (outcome = err));
    await settle();
    for (let i = 0; i < 20 && outcome === undefined; i++) {
      await t.clock.advance(1_000);
      await settle();
    }
    assert.match(String(outcome), /timed out waiting for caches to sync/);
  });

  it('refuses to start twice, and needs a name and a connection', async () => {
    assert.throws(() => newManager({ name: '', client: newFakeClient() }), /name is required/);
    assert.throws(() => newManager({ name: 'x' }), /restConfig/);
    const t = testManager();
    await t.start();
    await assert.rejects(t.mgr.start(new AbortController().signal), /already started/);
    await t.stop();
  });
});
