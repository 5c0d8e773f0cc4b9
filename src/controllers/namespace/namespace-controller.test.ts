import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Namespace, NamespaceCondition } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import { GVR } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import type { FakeAction } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, until, type TestContext } from '../garbagecollector/test-support.js';
import { descriptor, newNamespaceController, type NamespaceController } from './namespace-controller.js';

const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets' };

/**
 * Emulates PUT namespaces/{name}/finalize: stores spec.finalizers, removes the
 * namespace when none remain. (The fake client knows only metadata.finalizers,
 * so terminating namespaces carry a stand-in `test/spec-finalizers` one.)
 */
function withFinalize(t: TestContext): void {
  t.fake.prependReactor('update', 'namespaces/finalize', (a: FakeAction) => {
    const body = a.object as Kube<Namespace>;
    const stored = structuredClone(t.fake.stored<Kube<Namespace>>(GVR.namespaces, '', a.name!)!);
    stored.spec = { finalizers: body.spec?.finalizers ?? [] };
    if (stored.spec.finalizers!.length === 0) stored.metadata!.finalizers = [];
    return t.fake.resource<Kube<Namespace>>(GVR.namespaces).update(stored);
  });
}

function terminating(name: string, extra: Partial<Kube<Namespace>> = {}): Kube<Namespace> {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['test/spec-finalizers'] },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
    ...extra,
  } as Kube<Namespace>;
}

const cm = (name: string, ns: string, extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...extra } });

function condition(t: TestContext, ns: string, type: string): NamespaceCondition | undefined {
  return t.fake.stored<Kube<Namespace>>(GVR.namespaces, '', ns)?.status?.conditions?.find((c) => c.type === type);
}

/** Records the controller's own delayed requeues (informer-driven ones go through the same call, so clear first). */
function spyDelays(c: NamespaceController): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const w = c.worker as { enqueueAfter(k: string, ms: number): void };
  const orig = w.enqueueAfter.bind(w);
  w.enqueueAfter = (k, ms) => {
    if (ms !== 5_000) out.push([k, ms]);
    orig(k, ms);
  };
  return out;
}

async function setup(seed: (t: TestContext) => void) {
  const t = newTestContext();
  seed(t);
  withFinalize(t);
  const c = newNamespaceController(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  await until(() => c.hasSynced(), 'synced');
  return { t, c };
}

describe('namespace controller', () => {
  before(() => setLogOutput(() => {}));

  it('leaves a namespace without deletionTimestamp alone', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'live' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
      t.fake.seed(GVR.configMaps, cm('a', 'live'));
    });
    t.fake.clearActions();
    await c.syncNamespace('live');
    assert.deepEqual(t.fake.actions().filter((a) => a.verb !== 'get').map((a) => a.verb), []);
    assert.ok(t.fake.stored(GVR.configMaps, 'live', 'a'));
    await t.close();
  });

  it('deletes every namespaced resource, custom resources too, then finalizes the namespace', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('doomed'));
      t.fake.seed(GVR.configMaps, cm('a', 'doomed'), cm('b', 'doomed'), cm('other', 'keep'));
      t.fake.seed(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'doomed' } });
      t.fake.seed(GVR.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'doomed' } });
    });
    await c.syncNamespace('doomed');
    assert.equal(t.fake.storedList(GVR.configMaps, 'doomed').length, 0);
    assert.equal(t.fake.storedList(WIDGETS, 'doomed').length, 0);
    assert.equal(t.fake.storedList(GVR.deployments, 'doomed').length, 0);
    assert.ok(t.fake.stored(GVR.configMaps, 'keep', 'other'));
    const statusWrite = t.fake.actions().find((a) => a.verb === 'update' && a.subresource === 'status' && (a.object as Kube<Namespace>).status?.phase === 'Terminating');
    assert.ok(statusWrite, 'phase set to Terminating');
    const fin = t.fake.actions().find((a) => a.subresource === 'finalize');
    assert.deepEqual((fin?.object as Kube<Namespace>).spec?.finalizers, []);
    assert.equal(t.fake.stored(GVR.namespaces, '', 'doomed'), undefined);
    const dc = t.fake.actions().find((a) => a.verb === 'deletecollection' && a.resource === 'configmaps');
    assert.equal(dc?.deleteOptions?.propagationPolicy, 'Background');
    await t.close();
  });

  it('rediscovers resources on every pass, so content of a CRD created since the last discovery is deleted too', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('late'));
      t.fake.seed(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'late' } });
    });
    // A discovery cache filled before the CRD existed: widgets appear only after invalidate().
    const d = t.discovery;
    const fresh = d.serverPreferredResources.bind(d);
    let cached = true;
    d.invalidate = () => {
      cached = false;
    };
    d.serverPreferredResources = async () => {
      const r = await fresh();
      return cached ? { ...r, resources: r.resources.filter((l) => l.groupVersion !== 'example.com/v1') } : r;
    };
    await c.syncNamespace('late');
    assert.equal(t.fake.storedList(WIDGETS, 'late').length, 0, 'the custom resource was deleted');
    assert.equal(t.fake.stored(GVR.namespaces, '', 'late'), undefined);
    await t.close();
  });

  it('keeps the namespace while content with finalizers remains, with counts in the conditions, and requeues after half the estimate', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('held'));
      t.fake.seed(GVR.configMaps, cm('stuck', 'held', { finalizers: ['example.com/hold'] }));
    });
    const delays = spyDelays(c);
    await c.syncNamespace('held');
    assert.ok(t.fake.stored(GVR.namespaces, '', 'held'));
    assert.ok(t.fake.stored(GVR.configMaps, 'held', 'stuck')?.metadata?.deletionTimestamp);
    const remaining = condition(t, 'held', 'NamespaceContentRemaining');
    assert.equal(remaining?.status, 'True');
    assert.equal(remaining?.reason, 'SomeResourcesRemain');
    assert.equal(remaining?.message, 'Some resources are remaining: configmaps. has 1 resource instances');
    const fins = condition(t, 'held', 'NamespaceFinalizersRemaining');
    assert.equal(fins?.status, 'True');
    assert.equal(fins?.reason, 'SomeFinalizersRemain');
    assert.equal(fins?.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    assert.equal(condition(t, 'held', 'NamespaceDeletionDiscoveryFailure')?.reason, 'ResourcesDiscovered');
    assert.equal(condition(t, 'held', 'NamespaceDeletionContentFailure')?.status, 'False');
    assert.equal(t.fake.actions().some((a) => a.subresource === 'finalize'), false);
    // Requeued after 15/2+1 = 8 s.
    assert.deepEqual(delays, [['held', 8_000]]);

    // The finalizer goes: the next pass finalizes and the conditions turn to their ok variants.
    const stuck = structuredClone(t.fake.stored(GVR.configMaps, 'held', 'stuck')!);
    stuck.metadata!.finalizers = [];
    await t.fake.resource(GVR.configMaps).namespace('held').update(stuck);
    t.fake.prependReactor('update', 'namespaces/finalize', () => undefined);
    const before = structuredClone(t.fake.stored<Kube<Namespace>>(GVR.namespaces, '', 'held')!);
    t.fake.clearActions();
    await c.syncNamespace('held');
    assert.equal(t.fake.stored(GVR.namespaces, '', 'held'), undefined);
    assert.ok(before.status?.conditions?.length === 5);
    const written = t.fake
      .actions()
      .filter((a) => a.verb === 'update' && a.resource === 'namespaces' && a.subresource === 'status')
      .at(-1)?.object as Kube<Namespace> | undefined;
    const ok = (type: string) => {
      const c = written?.status?.conditions?.find((x) => x.type === type);
      return [c?.status, c?.reason, c?.message];
    };
    assert.deepEqual(ok('NamespaceDeletionDiscoveryFailure'), ['False', 'ResourcesDiscovered', 'All resources successfully discovered']);
    assert.deepEqual(ok('NamespaceDeletionGroupVersionParsingFailure'), ['False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed']);
    assert.deepEqual(ok('NamespaceDeletionContentFailure'), ['False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization']);
    assert.deepEqual(ok('NamespaceContentRemaining'), ['False', 'ContentRemoved', 'All content successfully removed']);
    assert.deepEqual(ok('NamespaceFinalizersRemaining'), ['False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished']);
    await t.close();
  });

  it('reports discovery failures and content deletion failures as conditions, and fails the pass', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('broken'));
      t.fake.seed(GVR.configMaps, cm('a', 'broken'));
    });
    t.discovery.failing.add('example.com/v1');
    t.fake.prependReactor('deletecollection', 'configmaps', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'storage down'));
    });
    await assert.rejects(c.syncNamespace('broken'));
    const disc = condition(t, 'broken', 'NamespaceDeletionDiscoveryFailure');
    assert.equal(disc?.status, 'True');
    assert.equal(disc?.reason, 'DiscoveryFailed');
    assert.equal(disc?.message, 'Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: example.com/v1: example.com/v1 unavailable');
    const content = condition(t, 'broken', 'NamespaceDeletionContentFailure');
    assert.equal(content?.reason, 'ContentDeletionFailed');
    assert.equal(content?.message, 'Failed to delete all resource types, 1 remaining: storage down');
    assert.ok(t.fake.stored(GVR.namespaces, '', 'broken'));
    await t.close();
  });

  it('reports an unparseable group version with GroupVersionParsingFailed and the parse error', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('odd'));
      t.discovery.lists.push({ groupVersion: 'too/many/parts', resources: [] });
    });
    await assert.rejects(c.syncNamespace('odd'));
    const gv = condition(t, 'odd', 'NamespaceDeletionGroupVersionParsingFailure');
    assert.deepEqual([gv?.status, gv?.reason, gv?.message], ['True', 'GroupVersionParsingFailed', 'unexpected GroupVersion string: too/many/parts']);
    await t.close();
  });

  it('waits for pods with a grace period, estimating the time left', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('pods'));
      t.fake.seed(GVR.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'pods', finalizers: ['kubelet/hold'] }, spec: { terminationGracePeriodSeconds: 30 }, status: { phase: 'Running' } });
    });
    t.clock.setTime(Date.parse('2024-01-01T00:00:10Z'));
    const delays = spyDelays(c);
    await c.syncNamespace('pods');
    // estimate 30 - 10 = 20 s: requeue after 11 s.
    assert.deepEqual(delays, [['pods', 11_000]]);
    await t.close();
  });

  it('queues terminating namespaces 5 s after they change, and runs to completion', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.namespaces, terminating('x'));
      t.fake.seed(GVR.configMaps, cm('a', 'x'));
    });
    const run = c.run(2, t.stop.signal);
    await t.clock.advance(100);
    await t.clock.advance(4_800);
    assert.ok(t.fake.stored(GVR.configMaps, 'x', 'a'));
    await t.clock.advance(200);
    await until(() => !t.fake.stored(GVR.namespaces, '', 'x'), 'namespace gone');
    await t.close();
    await run;
  });

  it('is registered as namespace-controller with 10 workers', () => {
    assert.equal(descriptor.name, 'namespace-controller');
    assert.deepEqual(descriptor.aliases, ['namespace']);
    assert.equal(descriptor.defaultWorkers, 10);
  });
});
