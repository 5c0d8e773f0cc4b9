import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { setLogOutput } from '../../util/log/logger.js';
import { replicaSetKind, replicationControllerKind } from './kind.js';
import { newReplicaSetController } from './replica-set.js';
import { newTestContext, type TestContext } from './test-context.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => setLogOutput(restoreLog));

type RS = ReplicaSet & KubeObject;
type P = Pod & KubeObject;

function rs(name: string, replicas: number, extra: Partial<NonNullable<ReplicaSet['spec']>> = {}): RS {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name }, annotations: { note: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      ...extra,
    },
  };
}

function pod(name: string, labels: Record<string, string>, opts: { owner?: KubeObject; phase?: string; ready?: string; node?: string; deleting?: boolean; created?: string } = {}): P {
  const p: P = {
    metadata: {
      name,
      namespace: 'default',
      labels,
      ...(opts.created ? { creationTimestamp: opts.created } : {}),
      ...(opts.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['test/hold'] } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(opts.node ? { nodeName: opts.node } : {}) },
    status: {
      phase: opts.phase ?? 'Running',
      ...(opts.ready ? { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: opts.ready }] } : {}),
    },
  };
  if (opts.owner) {
    p.metadata!.ownerReferences = [
      { apiVersion: 'apps/v1', kind: opts.owner.kind ?? 'ReplicaSet', name: opts.owner.metadata!.name!, uid: opts.owner.metadata!.uid!, controller: true, blockOwnerDeletion: true },
    ];
  }
  return p;
}

async function setup(objects: { rs?: RS[]; pods?: P[] } = {}, burstReplicas?: number) {
  const t = newTestContext();
  const seededRS = t.fake.seed(GVR.replicaSets, ...(objects.rs ?? []));
  const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller', burstReplicas ? { burstReplicas } : {});
  return { t, c, seededRS };
}

function podsOf(t: TestContext): P[] {
  return t.fake.storedList<P>(GVR.pods, 'default');
}

describe('replicaset controller', () => {
  it('creates the missing pods with the owner name prefix, template labels, annotations and a controller reference', async () => {
    const { t, c, seededRS } = await setup({ rs: [rs('web', 3)] });
    await t.start();
    await c.sync('default/web');
    const pods = podsOf(t);
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.match(p.metadata!.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.deepEqual(p.metadata?.labels, { app: 'web' });
      assert.deepEqual(p.metadata?.annotations, { note: 'x' });
      assert.deepEqual(p.metadata?.ownerReferences, [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: seededRS[0]!.metadata!.uid, controller: true, blockOwnerDeletion: true },
      ]);
    }
    const events = t.recorders.get('replicaset-controller')!.events;
    assert.deepEqual(events.sort(), pods.map((p) => `Normal SuccessfulCreate Created pod: ${p.metadata!.name}`).sort());
    const stored = t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!;
    assert.deepEqual(stored.status, { replicas: 0, observedGeneration: 1 }, 'status counts what the cache held during the sync');
    await t.settle();
    await c.sync('default/web');
    assert.equal(t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!.status?.replicas, 3);
    await t.stop();
  });

  it('creates in slow-start batches and stops at the first failing batch', async () => {
    const { t, c } = await setup({ rs: [rs('web', 10)] });
    await t.start();
    let creates = 0;
    t.fake.prependReactor('create', 'pods', () => {
      creates++;
      if (creates > 3) throw new StatusError(newStatus(403, 'Forbidden', 'exceeded quota: q'));
      return undefined;
    });
    await assert.rejects(c.sync('default/web'), /exceeded quota/);
    // Batches of 1, 2 and 4: the third batch fails after the 4th call.
    assert.equal(creates, 7);
    assert.equal(podsOf(t).length, 3);
    await t.settle();
    assert.equal(c.expectations.getExpectations('default/web')?.add, 0, 'pods never created are not waited for');
    assert.equal(c.expectations.satisfiedExpectations('default/web'), true);
    const status = t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!.status!;
    const cond = status.conditions?.find((x) => x.type === 'ReplicaFailure');
    assert.equal(cond?.status, 'True');
    assert.equal(cond?.reason, 'FailedCreate');
    assert.equal(cond?.message, 'exceeded quota: q');
    assert.equal(t.events().filter((e) => e === 'Warning FailedCreate Error creating: exceeded quota: q').length, 4);
    await t.stop();
  });

  it('makes a single create call when a quota rejects every pod, and clears ReplicaFailure once creating works', async () => {
    const { t, c } = await setup({ rs: [rs('web', 5)] });
    await t.start();
    let creates = 0;
    let quotaFull = true;
    t.fake.prependReactor('create', 'pods', () => {
      creates++;
      if (quotaFull) throw new StatusError(newStatus(403, 'Forbidden', 'pods "web-" is forbidden: exceeded quota: pods'));
      return undefined;
    });
    await assert.rejects(c.sync('default/web'));
    assert.equal(creates, 1);
    await t.settle();
    quotaFull = false;
    await c.sync('default/web');
    await t.settle();
    await c.sync('default/web');
    const status = t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!.status!;
    assert.equal(status.conditions, undefined);
    assert.equal(status.replicas, 5);
    await t.stop();
  });

  it('does not create a second round while the cache has not seen its own creates', async () => {
    const { t, c } = await setup({ rs: [rs('web', 2)] });
    await t.start();
    // Creates "succeed" but the pods never reach the store, so the informer never sees them.
    let n = 0;
    t.fake.prependReactor('create', 'pods', (a) => ({ ...(a.object as P), metadata: { ...(a.object as P).metadata, name: `ghost-${n++}` } }));
    await c.sync('default/web');
    assert.equal(n, 2);
    await c.sync('default/web');
    await c.sync('default/web');
    assert.equal(n, 2, 'no creates while expectations are pending');
    await t.clock.advance(5 * 60 * 1000 + 1);
    await c.sync('default/web');
    assert.equal(n, 4, 'expectations expire after five minutes');
    await t.stop();
  });

  it('lets the informer satisfy expectations so the next sync may act again', async () => {
    const { t, c } = await setup({ rs: [rs('web', 2)] });
    await t.start();
    await c.sync('default/web');
    await t.settle();
    assert.equal(c.expectations.satisfiedExpectations('default/web'), true);
    const scaled = t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!;
    await t.fake.resource<RS>(GVR.replicaSets).namespace('default').update({ ...scaled, spec: { ...scaled.spec!, replicas: 4 } });
    await t.settle();
    await c.sync('default/web');
    assert.equal(podsOf(t).length, 4);
    await t.stop();
  });

  it('deletes surplus pods in ranking order: unscheduled, pending, not ready, then the most recently ready', async () => {
    const owner = rs('web', 2);
    const t = newTestContext();
    const [seeded] = t.fake.seed(GVR.replicaSets, owner);
    t.fake.seed(
      GVR.pods,
      pod('ready-old', { app: 'web' }, { owner: seeded, node: 'n1', ready: '2023-12-01T00:00:00Z', created: '2023-12-01T00:00:00Z' }),
      pod('unscheduled', { app: 'web' }, { owner: seeded, phase: 'Pending' }),
      pod('pending', { app: 'web' }, { owner: seeded, node: 'n1', phase: 'Pending' }),
      pod('not-ready', { app: 'web' }, { owner: seeded, node: 'n2' }),
      pod('ready-new', { app: 'web' }, { owner: seeded, node: 'n2', ready: '2023-12-31T23:59:00Z', created: '2023-12-31T23:00:00Z' }),
    );
    const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller');
    await t.start();
    await c.sync('default/web');
    assert.deepEqual(podsOf(t).map((p) => p.metadata?.name).sort(), ['ready-new', 'ready-old']);
    assert.deepEqual(
      t.fake.actions().filter((a) => a.verb === 'delete').map((a) => a.name).sort(),
      ['not-ready', 'pending', 'unscheduled'],
    );
    assert.ok(t.events().includes('Normal SuccessfulDelete Deleted pod: pending'));
    await t.stop();
  });

  it('does not count failed, succeeded or terminating pods', async () => {
    const t = newTestContext();
    const [seeded] = t.fake.seed(GVR.replicaSets, rs('web', 2));
    t.fake.seed(
      GVR.pods,
      pod('failed', { app: 'web' }, { owner: seeded, phase: 'Failed' }),
      pod('done', { app: 'web' }, { owner: seeded, phase: 'Succeeded' }),
      pod('going', { app: 'web' }, { owner: seeded, deleting: true }),
    );
    const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller');
    await t.start();
    await c.sync('default/web');
    assert.equal(t.fake.actions().filter((a) => a.verb === 'create' && a.resource === 'pods').length, 2);
    assert.equal(t.fake.actions().filter((a) => a.verb === 'delete').length, 0);
    await t.stop();
  });

  it('adopts matching orphans, releases pods that stopped matching and leaves other owners alone', async () => {
    const t = newTestContext();
    const [seeded] = t.fake.seed(GVR.replicaSets, rs('web', 2));
    const other: KubeObject = { kind: 'ReplicaSet', metadata: { name: 'other', uid: 'other-uid' } };
    t.fake.seed(
      GVR.pods,
      pod('orphan', { app: 'web' }),
      pod('theirs', { app: 'web' }, { owner: other }),
      pod('relabelled', { app: 'db' }, { owner: seeded }),
    );
    const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller');
    await t.start();
    await c.sync('default/web');
    const byName = new Map(podsOf(t).map((p) => [p.metadata!.name!, p]));
    assert.equal(byName.get('orphan')!.metadata?.ownerReferences?.[0]?.uid, seeded!.metadata!.uid);
    assert.equal(byName.get('theirs')!.metadata?.ownerReferences?.[0]?.uid, 'other-uid');
    assert.deepEqual(byName.get('relabelled')!.metadata?.ownerReferences ?? [], []);
    // One adopted pod counts: one more is created.
    assert.equal(t.fake.actions().filter((a) => a.verb === 'create' && a.resource === 'pods').length, 1);
    assert.ok(t.fake.actions().some((a) => a.verb === 'get' && a.resource === 'replicasets'), 'the owner is re-read before adopting');
    await t.stop();
  });

  it('refuses to adopt when the live object has another uid', async () => {
    const t = newTestContext();
    t.fake.seed(GVR.replicaSets, rs('web', 1));
    t.fake.seed(GVR.pods, pod('orphan', { app: 'web' }));
    const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller');
    await t.start();
    t.fake.prependReactor('get', 'replicasets', () => ({ ...rs('web', 1), metadata: { name: 'web', namespace: 'default', uid: 'someone-else' } }));
    await assert.rejects(c.sync('default/web'), /is gone/);
    assert.deepEqual(t.fake.stored<P>(GVR.pods, 'default', 'orphan')!.metadata?.ownerReferences ?? [], []);
    await t.stop();
  });

  it('neither adopts nor creates pods for a replica set being deleted', async () => {
    const t = newTestContext();
    t.fake.seed(GVR.replicaSets, { ...rs('web', 3), metadata: { name: 'web', namespace: 'default', deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] } });
    t.fake.seed(GVR.pods, pod('orphan', { app: 'web' }));
    const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller');
    await t.start();
    await c.sync('default/web');
    assert.equal(t.fake.actions().filter((a) => a.verb === 'create' || a.verb === 'patch').length, 0);
    await t.stop();
  });

  it('creates at most burstReplicas pods per sync', async () => {
    const { t, c } = await setup({ rs: [rs('web', 10)] }, 4);
    await t.start();
    await c.sync('default/web');
    assert.equal(podsOf(t).length, 4);
    await t.stop();
  });

  it('counts ready and available pods with minReadySeconds and requeues when one becomes available', async () => {
    const t = newTestContext('2024-01-01T00:00:00Z');
    const [seeded] = t.fake.seed(GVR.replicaSets, rs('web', 2, { minReadySeconds: 10 }));
    t.fake.seed(
      GVR.pods,
      pod('a', { app: 'web' }, { owner: seeded, node: 'n', ready: '2023-12-31T23:00:00Z' }),
      pod('b', { app: 'web' }, { owner: seeded, node: 'n', ready: '2023-12-31T23:59:55Z' }),
    );
    const c = newReplicaSetController(replicaSetKind, t.ctx, 'replicaset-controller');
    await t.start();
    await c.sync('default/web');
    const status = t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!.status!;
    assert.deepEqual(status, { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1, observedGeneration: 1 });
    while (c.worker.queue.len() > 0) {
      const k = await c.worker.queue.get();
      c.worker.queue.done(k!);
    }
    await t.clock.advance(5000);
    assert.equal(c.worker.queue.len(), 0, 'not yet');
    await t.clock.advance(1001);
    assert.equal(c.worker.queue.len(), 1, 'requeued when pod b becomes available');
    await c.sync('default/web');
    assert.equal(t.fake.stored<RS>(GVR.replicaSets, 'default', 'web')!.status!.availableReplicas, 2);
    await t.stop();
  });

  it('writes status only when it changed', async () => {
    const { t, c } = await setup({ rs: [rs('web', 0)] });
    await t.start();
    await c.sync('default/web');
    await t.settle();
    t.fake.clearActions();
    await c.sync('default/web');
    assert.deepEqual(t.fake.actions().filter((a) => a.verb !== 'list' && a.verb !== 'watch'), []);
    await t.stop();
  });
});

describe('replicationcontroller controller', () => {
  it('keeps the replica count of a ReplicationController with a map selector', async () => {
    const t = newTestContext();
    t.fake.seed(GVR.replicationControllers, {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'legacy', namespace: 'default' },
      spec: { replicas: 2, selector: { app: 'legacy' }, template: { metadata: { labels: { app: 'legacy' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    const c = newReplicaSetController(replicationControllerKind, t.ctx, 'replicationcontroller-controller');
    await t.start();
    await c.sync('default/legacy');
    const pods = podsOf(t);
    assert.equal(pods.length, 2);
    assert.equal(pods[0]!.metadata?.ownerReferences?.[0]?.kind, 'ReplicationController');
    assert.equal(pods[0]!.metadata?.ownerReferences?.[0]?.apiVersion, 'v1');
    assert.equal(t.recorders.get('replication-controller')?.events.length, 2);
    await t.settle();
    await c.sync('default/legacy');
    assert.equal(t.fake.stored<KubeObject>(GVR.replicationControllers, 'default', 'legacy')!.status?.toString() !== undefined, true);
    assert.equal((t.fake.stored<KubeObject>(GVR.replicationControllers, 'default', 'legacy')!.status as { replicas: number }).replicas, 2);
    await t.stop();
  });
});
