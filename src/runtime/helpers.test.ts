import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment as DeploymentType } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap as ConfigMapType } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { FakeAction } from '../controller/testing/fake-client.js';
import { flushMicrotasks } from '../util/clock/clock.js';
import { setLogOutput } from '../util/log/logger.js';
import { createOrPatch, createOrUpdate, ensureFinalizer } from './helpers.js';
import { kinds } from './kinds.js';
import { testManager, type TestManager } from './test-support.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

const FINALIZER = 'example.com/cleanup';

type ConfigMap = ConfigMapType & { [k: string]: unknown };
type Deployment = DeploymentType & { [k: string]: unknown };

function cm(name: string, data?: Record<string, string>, meta: ConfigMap['metadata'] = {}): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...meta }, ...(data ? { data } : {}) };
}

function deploy(name: string, replicas = 1, status?: Deployment['status']): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } } } },
    ...(status ? { status } : {}),
  };
}

/** The writes recorded by the fake (reads and watches of the informers left out). */
function writes(t: TestManager): FakeAction[] {
  return t.fake.actions().filter((a) => a.verb === 'create' || a.verb === 'update' || a.verb === 'patch' || a.verb === 'delete');
}

/** Lets the event loop turn until the async `cond` holds (no clock time passes). */
async function eventually(cond: () => Promise<boolean>, what: string, turns = 300): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (await cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`${what}: not reached after ${turns} turns`);
}

/**
 * A started manager caching ConfigMaps and Deployments, with `seed` stored first.
 * A runnable keeps it running: a manager with nothing to run returns from start() at once.
 */
async function started(cacheKinds = [kinds.ConfigMap, kinds.Deployment], seed?: (t: TestManager) => void): Promise<TestManager> {
  const t = testManager({ cache: { kinds: cacheKinds } });
  t.mgr.add({ start: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })) });
  seed?.(t);
  await t.start();
  t.fake.clearActions();
  return t;
}

describe('createOrUpdate', () => {
  it("creates the object, mutated, when the cache has none, and says 'created'", async () => {
    const t = await started();
    const op = await createOrUpdate(t.mgr.client, cm('a'), (o) => {
      o.data = { k: 'v' };
    });
    assert.equal(op.result, 'created');
    assert.equal(op.object.kind, 'ConfigMap');
    assert.ok(op.object.metadata?.uid, 'the server answer, with a uid');
    assert.deepEqual(op.object.data, { k: 'v' });
    assert.deepEqual(
      writes(t).map((a) => [a.verb, a.resource, a.namespace, a.name]),
      [['create', 'configmaps', 'default', 'a']],
    );
    assert.deepEqual(writes(t)[0]!.object?.data, { k: 'v' });
    assert.deepEqual(t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')?.data, { k: 'v' });
    await t.stop();
  });

  it("mutates the cached object, sends one update carrying its resourceVersion, and says 'updated'", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.configMaps, cm('a', { k: 'v', keep: '1' })));
    const seeded = t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')!;
    let seen: ConfigMap | undefined;
    const op = await createOrUpdate(t.mgr.client, cm('a'), (o) => {
      seen = structuredClone(o);
      o.data = { ...o.data, k: 'w' };
    });
    assert.equal(op.result, 'updated');
    assert.equal(seen?.metadata?.uid, seeded.metadata?.uid, 'mutate sees the existing object');
    assert.deepEqual(seen?.data, { k: 'v', keep: '1' });
    const w = writes(t);
    assert.deepEqual(
      w.map((a) => [a.verb, a.resource, a.namespace, a.name, a.subresource]),
      [['update', 'configmaps', 'default', 'a', undefined]],
    );
    assert.equal(w[0]!.object?.metadata?.resourceVersion, seeded.metadata?.resourceVersion);
    assert.deepEqual(t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')?.data, { k: 'w', keep: '1' });
    assert.notEqual(op.object.metadata?.resourceVersion, seeded.metadata?.resourceVersion);
    await t.stop();
  });

  it("writes nothing and says 'unchanged' when mutate changed nothing", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.configMaps, cm('a', { k: 'v' })));
    const op = await createOrUpdate(t.mgr.client, cm('a'), (o) => {
      o.data = { k: 'v' };
    });
    assert.equal(op.result, 'unchanged');
    assert.deepEqual(op.object.data, { k: 'v' });
    assert.equal(op.object.metadata?.resourceVersion, t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.resourceVersion);
    assert.deepEqual(writes(t), []);
    await t.stop();
  });

  it('goes from created to unchanged once the cache has the object', async () => {
    const t = await started();
    const mutate = (o: ConfigMap) => {
      o.data = { k: 'v' };
    };
    assert.equal((await createOrUpdate(t.mgr.client, cm('a'), mutate)).result, 'created');
    await eventually(async () => (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' })) !== undefined, 'cached');
    assert.equal((await createOrUpdate(t.mgr.client, cm('a'), mutate)).result, 'unchanged');
    assert.equal(writes(t).length, 1);
    await t.stop();
  });

  it('refuses a mutate that renames or moves the object, on create and on update, writing nothing', async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.configMaps, cm('existing', { k: 'v' })));
    const msg = /the mutate function cannot change the object name or namespace/;
    await assert.rejects(
      createOrUpdate(t.mgr.client, cm('new'), (o) => {
        o.metadata!.name = 'renamed';
      }),
      msg,
    );
    await assert.rejects(
      createOrUpdate(t.mgr.client, cm('existing'), (o) => {
        o.metadata!.name = 'renamed';
      }),
      msg,
    );
    await assert.rejects(
      createOrUpdate(t.mgr.client, cm('existing'), (o) => {
        o.metadata!.namespace = 'elsewhere';
      }),
      msg,
    );
    assert.deepEqual(writes(t), []);
    await t.stop();
  });

  it('needs a name', async () => {
    const t = await started();
    await assert.rejects(createOrUpdate(t.mgr.client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default' } }, () => undefined), TypeError);
    await t.stop();
  });
});

describe('createOrPatch', () => {
  it("creates the object when the cache has none, and says 'created'", async () => {
    const t = await started();
    const op = await createOrPatch(t.mgr.client, deploy('web'), (d) => {
      d.spec!.replicas = 2;
    });
    assert.equal(op.result, 'created');
    assert.deepEqual(
      writes(t).map((a) => [a.verb, a.resource, a.name]),
      [['create', 'deployments', 'web']],
    );
    assert.equal(t.fake.stored<Deployment>(GVR.deployments, 'default', 'web')?.spec?.replicas, 2);
    await t.stop();
  });

  it("sends a merge patch of just the changed fields and says 'updated'", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.deployments, deploy('web', 1, { replicas: 1 })));
    const op = await createOrPatch(t.mgr.client, deploy('web'), (d) => {
      d.spec!.replicas = 3;
      d.metadata!.labels = { ...d.metadata!.labels, tier: 'front' };
    });
    assert.equal(op.result, 'updated');
    const w = writes(t);
    assert.equal(w.length, 1);
    assert.equal(w[0]!.verb, 'patch');
    assert.equal(w[0]!.resource, 'deployments');
    assert.equal(w[0]!.namespace, 'default');
    assert.equal(w[0]!.name, 'web');
    assert.equal(w[0]!.subresource, undefined);
    assert.equal(w[0]!.patchType, 'merge');
    assert.deepEqual(w[0]!.patch, { metadata: { labels: { tier: 'front' } }, spec: { replicas: 3 } });
    const stored = t.fake.stored<Deployment>(GVR.deployments, 'default', 'web')!;
    assert.equal(stored.spec?.replicas, 3);
    assert.deepEqual(stored.metadata?.labels, { app: 'web', tier: 'front' });
    assert.equal(op.object.spec?.replicas, 3);
    await t.stop();
  });

  it("patches the object, then the status through the status subresource, and says 'updatedStatus'", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.deployments, deploy('web', 1, { replicas: 1, readyReplicas: 0 })));
    const op = await createOrPatch(t.mgr.client, deploy('web'), (d) => {
      d.spec!.replicas = 2;
      d.status = { ...d.status, readyReplicas: 2 };
    });
    assert.equal(op.result, 'updatedStatus');
    const w = writes(t);
    assert.deepEqual(
      w.map((a) => [a.verb, a.resource, a.name, a.subresource, a.patchType]),
      [
        ['patch', 'deployments', 'web', undefined, 'merge'],
        ['patch', 'deployments', 'web', 'status', 'merge'],
      ],
    );
    assert.deepEqual(w[0]!.patch, { spec: { replicas: 2 } });
    assert.deepEqual(w[1]!.patch, { status: { readyReplicas: 2 } });
    const stored = t.fake.stored<Deployment>(GVR.deployments, 'default', 'web')!;
    assert.equal(stored.spec?.replicas, 2);
    assert.deepEqual(stored.status, { replicas: 1, readyReplicas: 2 });
    assert.deepEqual(op.object.status, { replicas: 1, readyReplicas: 2 });
    assert.equal(op.object.spec?.replicas, 2);
    await t.stop();
  });

  it("patches only the status when only the status changed, and says 'updatedStatusOnly'", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.deployments, deploy('web', 1, { replicas: 1 })));
    const op = await createOrPatch(t.mgr.client, deploy('web'), (d) => {
      d.status = { replicas: 1, availableReplicas: 1 };
    });
    assert.equal(op.result, 'updatedStatusOnly');
    const w = writes(t);
    assert.deepEqual(
      w.map((a) => [a.verb, a.subresource, a.patchType]),
      [['patch', 'status', 'merge']],
    );
    assert.deepEqual(w[0]!.patch, { status: { availableReplicas: 1 } });
    assert.deepEqual(t.fake.stored<Deployment>(GVR.deployments, 'default', 'web')?.status, { replicas: 1, availableReplicas: 1 });
    assert.deepEqual(op.object.status, { replicas: 1, availableReplicas: 1 });
    await t.stop();
  });

  it("sends nothing and says 'unchanged' when mutate changed nothing", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.deployments, deploy('web', 1, { replicas: 1 })));
    const op = await createOrPatch(t.mgr.client, deploy('web'), (d) => {
      d.spec!.replicas = 1;
      d.status = { replicas: 1 };
    });
    assert.equal(op.result, 'unchanged');
    assert.deepEqual(writes(t), []);
    await t.stop();
  });

  it('refuses a mutate that renames the object', async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.deployments, deploy('web')));
    await assert.rejects(
      createOrPatch(t.mgr.client, deploy('web'), (d) => {
        d.metadata!.name = 'other';
      }),
      /cannot change the object name or namespace/,
    );
    assert.deepEqual(writes(t), []);
    await t.stop();
  });
});

describe('ensureFinalizer', () => {
  it("adds the finalizer to a live object with one update, and says 'present'", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.configMaps, cm('a', { k: 'v' })));
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    const rvBefore = obj.metadata?.resourceVersion;
    let cleaned = 0;
    const state = await ensureFinalizer(t.mgr.client, obj, FINALIZER, () => {
      cleaned++;
    });
    assert.equal(state, 'present');
    assert.equal(cleaned, 0);
    const w = writes(t);
    assert.deepEqual(
      w.map((a) => [a.verb, a.resource, a.name, a.subresource]),
      [['update', 'configmaps', 'a', undefined]],
    );
    assert.deepEqual(w[0]!.object?.metadata?.finalizers, [FINALIZER]);
    assert.deepEqual(t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.finalizers, [FINALIZER]);
    assert.deepEqual(obj.metadata?.finalizers, [FINALIZER], "the caller's object carries the server's metadata");
    assert.notEqual(obj.metadata?.resourceVersion, rvBefore);
    assert.equal(obj.metadata?.resourceVersion, t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.resourceVersion);
    await t.stop();
  });

  it("writes nothing when the finalizer is already there, and says 'present'", async () => {
    const t = await started(undefined, (t) => t.fake.seed(GVR.configMaps, cm('a', {}, { finalizers: [FINALIZER] })));
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    assert.equal(await ensureFinalizer(t.mgr.client, obj, FINALIZER, () => assert.fail('no cleanup while alive')), 'present');
    assert.deepEqual(writes(t), []);
    await t.stop();
  });

  it("on a deleted object runs cleanup, then removes the finalizer, and says 'finalized'; the object then goes", async () => {
    const t = await started(undefined, (t) =>
      t.fake.seed(GVR.configMaps, cm('a', { k: 'v' }, { finalizers: [FINALIZER], deletionTimestamp: '2024-01-01T00:00:00Z' })),
    );
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    const order: string[] = [];
    t.fake.prependReactor('update', 'configmaps', () => {
      order.push('update');
      return undefined;
    });
    const state = await ensureFinalizer(t.mgr.client, obj, FINALIZER, (o) => {
      order.push(`cleanup ${o.metadata?.name} ${o.data?.k}`);
    });
    assert.equal(state, 'finalized');
    assert.deepEqual(order, ['cleanup a v', 'update']);
    const w = writes(t);
    assert.equal(w.length, 1);
    assert.deepEqual(w[0]!.object?.metadata?.finalizers, []);
    assert.equal(t.fake.stored(GVR.configMaps, 'default', 'a'), undefined, 'the last finalizer gone, the object is removed');
    await t.stop();
  });

  it('removes only its own finalizer and leaves the object to the others', async () => {
    const t = await started(undefined, (t) =>
      t.fake.seed(GVR.configMaps, cm('a', {}, { finalizers: ['other/keep', FINALIZER], deletionTimestamp: '2024-01-01T00:00:00Z' })),
    );
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    assert.equal(await ensureFinalizer(t.mgr.client, obj, FINALIZER, () => undefined), 'finalized');
    assert.deepEqual(t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.finalizers, ['other/keep']);
    await t.stop();
  });

  it('leaves the finalizer in place and propagates the error when cleanup throws', async () => {
    const t = await started(undefined, (t) =>
      t.fake.seed(GVR.configMaps, cm('a', {}, { finalizers: [FINALIZER], deletionTimestamp: '2024-01-01T00:00:00Z' })),
    );
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    await assert.rejects(
      ensureFinalizer(t.mgr.client, obj, FINALIZER, async () => {
        throw new Error('dns provider down');
      }),
      /dns provider down/,
    );
    assert.deepEqual(writes(t), []);
    assert.deepEqual(t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.finalizers, [FINALIZER]);
    assert.deepEqual(obj.metadata?.finalizers, [FINALIZER]);
    await t.stop();
  });

  it("says 'deleting' and does nothing for a deleted object without our finalizer", async () => {
    const t = await started(undefined, (t) =>
      t.fake.seed(GVR.configMaps, cm('a', {}, { finalizers: ['someone.else/x'], deletionTimestamp: '2024-01-01T00:00:00Z' })),
    );
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    let cleaned = 0;
    assert.equal(
      await ensureFinalizer(t.mgr.client, obj, FINALIZER, () => {
        cleaned++;
      }),
      'deleting',
    );
    assert.equal(cleaned, 0);
    assert.deepEqual(writes(t), []);
    assert.deepEqual(t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.finalizers, ['someone.else/x']);
    await t.stop();
  });

  it("says 'finalized' when the object is already gone by the time the finalizer is removed", async () => {
    const t = await started(undefined, (t) =>
      t.fake.seed(GVR.configMaps, cm('a', {}, { finalizers: [FINALIZER], deletionTimestamp: '2024-01-01T00:00:00Z' })),
    );
    const obj = (await t.mgr.client.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    let cleaned = 0;
    const state = await ensureFinalizer(t.mgr.client, obj, FINALIZER, async () => {
      cleaned++;
      // Someone else removed the finalizer meanwhile: the object is gone.
      await t.fake.resource(GVR.configMaps).namespace('default').patch('a', 'merge', { metadata: { finalizers: null } });
    });
    assert.equal(state, 'finalized');
    assert.equal(cleaned, 1);
    await t.stop();
  });
});
