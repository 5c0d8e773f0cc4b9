import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import { setLogOutput } from '../util/log/logger.js';
import { controller } from './builder.js';
import type { ReconcileContext, Request, Result } from './controller.js';
import { TerminalError } from './errors.js';
import { kinds } from './kinds.js';
import { generationChanged } from './predicates.js';
import { laggingClient, settle, testManager, until, type LaggingClient } from './test-support.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

function cm(name: string, data: Record<string, string> = {}, ns = 'default'): ConfigMap & { [k: string]: unknown } {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

async function metric(t: ReturnType<typeof testManager>, name: string, labels: Record<string, string>): Promise<number> {
  const m = await t.mgr.registry.getSingleMetric(name)?.get();
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

describe('runtime controller', () => {
  it('reconciles every existing object once at start, with typed objects from the cache', async () => {
    const t = testManager();
    t.fake.seed(GVR.configMaps, cm('a', { x: '1' }), cm('b'), cm('c', {}, 'other'));
    const seen: string[] = [];
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete(async (ctx, req) => {
        const obj = await ctx.get();
        seen.push(`${req.namespace}/${req.name}:${obj?.kind}:${obj?.data?.x ?? ''}`);
      });
    await t.start();
    await until(() => seen.length === 3, 'three reconciles');
    assert.deepEqual(seen.sort(), ['default/a:ConfigMap:1', 'default/b:ConfigMap:', 'other/c:ConfigMap:']);
    await settle();
    assert.equal(seen.length, 3);
    assert.equal(await metric(t, 'controller_runtime_reconcile_total', { controller: 'configmap', result: 'success' }), 3);
    await t.stop();
  });

  it('reconciles a key once for several changes made while it was queued', async () => {
    const t = testManager();
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete(async (_ctx, req) => {
        calls++;
        if (req.name === 'blocker') await gate;
      });
    t.fake.seed(GVR.configMaps, cm('blocker'));
    await t.start();
    await until(() => calls === 1, 'blocker in progress');
    // The only worker is busy: these queue up, and x is queued once.
    const cms = t.fake.resource(GVR.configMaps).namespace('default');
    await cms.create(cm('x'));
    await cms.patch('x', 'merge', { data: { a: '1' } });
    await cms.patch('x', 'merge', { data: { a: '2' } });
    await settle();
    release();
    await until(() => calls === 2, 'x reconciled');
    await settle();
    assert.equal(calls, 2);
    await t.stop();
  });

  it('never reconciles one key twice at once, but runs distinct keys in parallel up to maxConcurrentReconciles', async () => {
    const t = testManager();
    const running = new Map<string, number>();
    let maxParallel = 0;
    let maxSameKey = 0;
    const gates: Array<() => void> = [];
    const runs: string[] = [];
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .withOptions({ maxConcurrentReconciles: 2 })
      .complete(async (_ctx, req) => {
        runs.push(req.name);
        running.set(req.name, (running.get(req.name) ?? 0) + 1);
        maxSameKey = Math.max(maxSameKey, running.get(req.name)!);
        maxParallel = Math.max(maxParallel, [...running.values()].reduce((a, b) => a + b, 0));
        await new Promise<void>((r) => gates.push(r));
        running.set(req.name, running.get(req.name)! - 1);
      });
    t.fake.seed(GVR.configMaps, cm('a'), cm('b'), cm('c'));
    await t.start();
    await until(() => gates.length === 2, 'two in parallel');
    assert.equal(maxParallel, 2);
    // Change a while it is being reconciled: it runs again only after the first run.
    const first = runs[0]!;
    await t.fake.resource(GVR.configMaps).namespace('default').patch(first, 'merge', { data: { z: '1' } });
    await settle();
    for (let i = 0; i < 20 && (runs.length < 4 || gates.length > 0); i++) {
      gates.shift()?.();
      await settle();
    }
    assert.equal(runs.length, 4);
    assert.equal(maxSameKey, 1);
    assert.equal(runs.filter((r) => r === first).length, 2);
    assert.equal(maxParallel, 2);
    assert.equal(await metric(t, 'controller_runtime_max_concurrent_reconciles', { controller: 'configmap' }), 2);
    await t.stop();
  });

  it('requeues after requeueAfter milliseconds on the clock, and not before', async () => {
    const t = testManager();
    const times: number[] = [];
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete((): Result => {
        times.push(t.clock.now());
        return times.length < 3 ? { requeueAfter: 30_000 } : {};
      });
    t.fake.seed(GVR.configMaps, cm('a'));
    await t.start();
    const t0 = t.clock.now();
    await until(() => times.length === 1, 'first');
    await t.clock.advance(29_999);
    await settle();
    assert.equal(times.length, 1);
    await t.clock.advance(1);
    await until(() => times.length === 2, 'second');
    await t.clock.advance(30_000);
    await until(() => times.length === 3, 'third');
    assert.deepEqual(times, [t0, t0 + 30_000, t0 + 60_000]);
    assert.equal(await metric(t, 'controller_runtime_reconcile_total', { controller: 'configmap', result: 'requeue_after' }), 2);
    await t.stop();
  });

  it('retries a failing reconcile with per-item exponential backoff from 5 ms, and forgets failures after a success', async () => {
    const t = testManager();
    const times: number[] = [];
    let failUntil = 4;
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete(() => {
        times.push(t.clock.now());
        if (times.length <= failUntil) throw new Error('transient');
      });
    t.fake.seed(GVR.configMaps, cm('a'));
    await t.start();
    const t0 = t.clock.now();
    await until(() => times.length === 1, 'first');
    for (const wait of [5, 10, 20, 40]) {
      await t.clock.advance(wait - 1);
      await settle();
      const before = times.length;
      await t.clock.advance(1);
      await until(() => times.length === before + 1, `retry after ${wait} ms`);
    }
    assert.deepEqual(
      times.map((x) => x - t0),
      [0, 5, 15, 35, 75],
    );
    assert.equal(await metric(t, 'controller_runtime_reconcile_errors_total', { controller: 'configmap' }), 4);
    assert.equal(await metric(t, 'workqueue_retries_total', { name: 'configmap', controller: 'configmap' }), 4);
    // After the success the failure count is gone: a new failure waits 5 ms again.
    failUntil = Infinity;
    const n = times.length;
    await t.fake.resource(GVR.configMaps).namespace('default').patch('a', 'merge', { data: { b: '1' } });
    await until(() => times.length === n + 1, 'reconcile of the change');
    const failedAt = t.clock.now();
    await t.clock.advance(5);
    await until(() => times.length === n + 2, 'retry');
    assert.equal(times[n + 1]! - failedAt, 5);
    await t.stop();
  });

  it('does not retry a TerminalError, and counts it', async () => {
    const t = testManager();
    let calls = 0;
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete(() => {
        calls++;
        throw new TerminalError('spec.size must be positive');
      });
    t.fake.seed(GVR.configMaps, cm('a'));
    await t.start();
    await until(() => calls === 1, 'first');
    await t.clock.advance(60_000);
    await settle();
    assert.equal(calls, 1);
    assert.equal(await metric(t, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'configmap' }), 1);
    assert.equal(await metric(t, 'controller_runtime_reconcile_total', { controller: 'configmap', result: 'error' }), 1);
    await t.stop();
  });

  it('reconciles every object again on the sync period, jittered within [0.9, 1.1) of it', async () => {
    const t = testManager({ cache: { syncPeriodMs: 60 * 60_000 } });
    const times: number[] = [];
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete(() => {
        times.push(t.clock.now());
      });
    t.fake.seed(GVR.configMaps, cm('a'));
    await t.start();
    const t0 = t.clock.now();
    await until(() => times.length === 1, 'first');
    await t.clock.advance(54 * 60_000 - 1);
    await settle();
    assert.equal(times.length, 1);
    for (let i = 0; i < 12 && times.length < 2; i++) {
      await t.clock.advance(60_000);
      await settle();
    }
    assert.equal(times.length, 2);
    const after = times[1]! - t0;
    assert.ok(after >= 54 * 60_000 && after <= 67 * 60_000, `resync after ${after} ms`);
    await t.stop();
  });

  it('filters events with predicates: generationChanged ignores status-only and metadata-only writes', async () => {
    const t = testManager();
    let calls = 0;
    controller(t.mgr)
      .for(kinds.Deployment, { predicates: [generationChanged()] })
      .complete(() => {
        calls++;
      });
    const deploys = t.fake.resource(GVR.deployments).namespace('default');
    await t.start();
    await deploys.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 1 } });
    await until(() => calls === 1, 'create');
    await deploys.patch('web', 'merge', { metadata: { labels: { a: 'b' } } });
    await deploys.patch('web', 'merge', { status: { replicas: 1 } }, { subresource: 'status' });
    await settle();
    assert.equal(calls, 1);
    await deploys.patch('web', 'merge', { spec: { replicas: 2 } });
    await until(() => calls === 2, 'spec change');
    await t.stop();
  });

  it('enqueues the controller owner when an owned object changes, and the mapped keys of a watched kind', async () => {
    const t = testManager();
    const seen: string[] = [];
    controller(t.mgr)
      .for(kinds.Deployment)
      .owns(kinds.ReplicaSet)
      .watches(kinds.ConfigMap, (c) => [{ namespace: c.metadata?.namespace, name: c.metadata?.labels?.app ?? '' }])
      .complete((_ctx, req) => {
        seen.push(req.name);
      });
    await t.start();
    const rs = t.fake.resource(GVR.replicaSets).namespace('default');
    await rs.create({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u1', controller: true }] },
    });
    await rs.create({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'orphan', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'notcontroller', uid: 'u2' }] },
    });
    await t.fake.resource(GVR.configMaps).namespace('default').create(cm('settings'));
    await t.fake.resource(GVR.configMaps).namespace('default').patch('settings', 'merge', { metadata: { labels: { app: 'api' } } });
    await until(() => seen.includes('web') && seen.includes('api'), 'owner and mapped');
    await settle();
    assert.ok(!seen.includes('notcontroller'));
    await t.stop();
  });

  it('waits before the next reconcile of a key until the cache shows that key\'s own writes', async () => {
    let lag!: LaggingClient;
    const t = testManager({ wrap: (c) => (lag = laggingClient(c)) });
    const childrenSeen: number[] = [];
    controller(t.mgr)
      .for(kinds.Deployment)
      .owns(kinds.ConfigMap)
      .complete(async (ctx: ReconcileContext<(typeof kinds.Deployment)['__object'] & object>, req: Request) => {
        const children = await ctx.client.list(kinds.ConfigMap, { namespace: req.namespace });
        childrenSeen.push(children.length);
        if (children.length === 0) {
          await ctx.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: `${req.name}-`, namespace: req.namespace } });
        }
        return childrenSeen.length === 1 ? { requeue: true } : undefined;
      });
    await t.start();
    lag.hold('configmaps');
    await t.fake.resource(GVR.deployments).namespace('default').create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } });
    await until(() => childrenSeen.length === 1, 'first reconcile');
    // The requeue comes due, but the cache has not seen the ConfigMap yet: the reconcile waits.
    await t.clock.advance(10);
    await settle();
    assert.equal(childrenSeen.length, 1);
    lag.release('configmaps');
    await until(() => childrenSeen.length === 2, 'second reconcile');
    assert.deepEqual(childrenSeen, [0, 1]);
    assert.equal(t.fake.storedList(GVR.configMaps, 'default').length, 1);
    assert.equal(await metric(t, 'kcm_runtime_read_your_writes_waits_total', { controller: 'deployment', outcome: 'observed' }), 1);
    await t.stop();
  });

  it('gives up waiting for its own writes after the timeout and reconciles anyway', async () => {
    let lag!: LaggingClient;
    const t = testManager({ wrap: (c) => (lag = laggingClient(c)) });
    let calls = 0;
    controller(t.mgr)
      .for(kinds.Deployment)
      .owns(kinds.ConfigMap)
      .withOptions({ readYourWrites: { timeoutMs: 2000 } })
      .complete(async (ctx, req) => {
        calls++;
        if (calls === 1) {
          await ctx.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${req.name}-child`, namespace: req.namespace } });
          return { requeue: true };
        }
        return undefined;
      });
    await t.start();
    lag.hold('configmaps');
    await t.fake.resource(GVR.deployments).namespace('default').create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } });
    await until(() => calls === 1, 'first');
    await t.clock.advance(1999 + 5);
    await settle();
    assert.equal(calls, 1);
    await t.clock.advance(1);
    await until(() => calls === 2, 'second after timeout');
    assert.equal(await metric(t, 'kcm_runtime_read_your_writes_waits_total', { controller: 'deployment', outcome: 'timeout' }), 1);
    lag.release('configmaps');
    await t.stop();
  });

  it('reconciles without waiting when read-your-writes is off', async () => {
    let lag!: LaggingClient;
    const t = testManager({ wrap: (c) => (lag = laggingClient(c)) });
    const childrenSeen: number[] = [];
    controller(t.mgr)
      .for(kinds.Deployment)
      .owns(kinds.ConfigMap)
      .withOptions({ readYourWrites: false })
      .complete(async (ctx, req) => {
        const children = await ctx.client.list(kinds.ConfigMap, { namespace: req.namespace });
        childrenSeen.push(children.length);
        if (childrenSeen.length === 1) {
          await ctx.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', namespace: req.namespace } });
          return { requeue: true };
        }
        return undefined;
      });
    await t.start();
    lag.hold('configmaps');
    await t.fake.resource(GVR.deployments).namespace('default').create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } });
    await until(() => childrenSeen.length === 1, 'first');
    await t.clock.advance(10);
    await until(() => childrenSeen.length === 2, 'second without waiting');
    assert.deepEqual(childrenSeen, [0, 0]);
    lag.release('configmaps');
    await t.stop();
  });

  it('stops taking work on shutdown and lets the running reconcile finish', async () => {
    const t = testManager();
    let finished = 0;
    let started = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    controller(t.mgr)
      .for(kinds.ConfigMap)
      .complete(async (ctx) => {
        started++;
        await gate;
        assert.equal(ctx.signal.aborted, true);
        finished++;
      });
    t.fake.seed(GVR.configMaps, cm('a'), cm('b'));
    await t.start();
    await until(() => started === 1, 'one running');
    const stopping = t.stop();
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await settle();
    assert.equal(stopped, false);
    release();
    await stopping;
    assert.equal(finished, 1);
    assert.equal(started, 1);
  });

  it('refuses two controllers with one name', () => {
    const t = testManager();
    controller(t.mgr).for(kinds.ConfigMap).complete(() => undefined);
    assert.throws(() => controller(t.mgr).for(kinds.ConfigMap).complete(() => undefined), /already exists/);
    controller(t.mgr).for(kinds.ConfigMap).named('configmap-2').complete(() => undefined);
  });
});
