import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, OwnerReference } from '../../api/types.js';
import { GVR } from '../../api/gvr.js';
import { setLogOutput } from '../../util/log/logger.js';
import { descriptor, newGarbageCollectorController, type GarbageCollectorController } from './garbagecollector-controller.js';
import { newTestContext, res, until, type TestContext } from './test-support.js';

const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets' };
const CLUSTER_WIDGETS = { group: 'example.com', version: 'v1', resource: 'clusterwidgets' };

function ownerRef(o: KubeObject, extra: Partial<OwnerReference> = {}): OwnerReference {
  return { apiVersion: o.apiVersion!, kind: o.kind!, name: o.metadata!.name!, uid: o.metadata!.uid!, ...extra };
}
const rs = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name, namespace: 'ns', ...extra } });
const pod = (name: string, owners: OwnerReference[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', ownerReferences: owners, ...extra },
});

async function start(t: TestContext, workers = 2): Promise<{ gc: GarbageCollectorController; run: Promise<void> }> {
  const gc = await newGarbageCollectorController(t.ctx);
  const run = gc.run(workers, t.stop.signal);
  await until(() => gc.isSynced(), 'monitors synced');
  await t.clock.advance(100); // the cache-sync poll
  return { gc, run };
}

async function finish(t: TestContext, run: Promise<void>): Promise<void> {
  await t.close();
  await run;
}

const exists = (t: TestContext, gvr: typeof GVR.pods, ns: string, name: string) => !!t.fake.stored(gvr, ns, name);

describe('garbage collector controller', () => {
  before(() => setLogOutput(() => {}));

  it('watches every deletable resource except events, and picks up new ones on resync', async () => {
    const t = newTestContext();
    const gc = await newGarbageCollectorController(t.ctx);
    const watched = gc.monitored();
    assert.ok(watched.includes('pods/v1'));
    assert.ok(watched.includes('widgets.example.com/v1'));
    assert.ok(!watched.includes('events/v1'));
    assert.ok(!watched.some((w) => w.startsWith('pods/status')));
    t.discovery.lists.push({ groupVersion: 'other.io/v1', resources: [res('gadgets', 'Gadget'), res('readonly', 'ReadOnly', true, ['get', 'list'])] });
    await gc.resyncMonitors();
    assert.ok(gc.monitored().includes('gadgets.other.io/v1'));
    assert.ok(!gc.monitored().includes('readonly.other.io/v1'));
    await t.close();
  });

  it("shares another controller's full informer for a resource instead of a second, metadata-only watch", async () => {
    const t = newTestContext();
    t.ctx.informers.pods(); // as the ReplicaSet controller, built before the collector
    const { run } = await start(t);
    const lists = t.fake.actions().filter((a) => a.verb === 'list');
    assert.ok(lists.some((a) => a.resource === 'pods' && !a.metadataOnly), 'pods listed in full once');
    assert.ok(!lists.some((a) => a.resource === 'pods' && a.metadataOnly), 'no metadata-only pod list');
    assert.ok(lists.some((a) => a.resource === 'configmaps' && a.metadataOnly), 'resources no one else watches stay metadata-only');
    await finish(t, run);
  });

  it('deletes dependents in the background once their owner is gone', async () => {
    const t = newTestContext();
    const [owner] = t.fake.seed(GVR.replicaSets, rs('web'));
    t.fake.seed(GVR.pods, pod('a', [ownerRef(owner!, { controller: true, blockOwnerDeletion: true })]), pod('b', [ownerRef(owner!)]));
    const { run } = await start(t);
    await until(() => t.fake.actions().some((a) => a.verb === 'get' && a.resource === 'replicasets'), 'the owner verified');
    const before = t.fake.actions().length;
    await t.fake.resource(GVR.replicaSets).namespace('ns').delete('web', { propagationPolicy: 'Background' });
    await until(() => t.fake.storedList(GVR.pods).length === 0, 'pods collected');
    const del = t.fake.actions().filter((a) => a.verb === 'delete' && a.resource === 'pods');
    assert.equal(del[0]?.deleteOptions?.propagationPolicy, 'Background');
    assert.ok(del[0]?.deleteOptions?.preconditions?.uid);
    // The owner's deletion was observed: it is known absent, so no dependent looked it up (upstream's absentOwnerCache).
    assert.deepEqual(t.fake.actions().slice(before).filter((a) => a.verb === 'get' && a.resource === 'replicasets'), []);
    await finish(t, run);
  });

  it('keeps a dependent with a second live owner and removes only the gone owner reference', async () => {
    const t = newTestContext();
    const [a, b] = t.fake.seed(GVR.replicaSets, rs('a'), rs('b'));
    t.fake.seed(GVR.pods, pod('shared', [ownerRef(a!), ownerRef(b!)]));
    const { run } = await start(t);
    await t.fake.resource(GVR.replicaSets).namespace('ns').delete('a');
    await until(() => (t.fake.stored(GVR.pods, 'ns', 'shared')?.metadata?.ownerReferences ?? []).length === 1, 'ref removed');
    assert.deepEqual(t.fake.stored(GVR.pods, 'ns', 'shared')!.metadata!.ownerReferences!.map((r) => r.name), ['b']);
    await finish(t, run);
  });

  it('deletes an object whose owner never existed, and one whose owner has another uid', async () => {
    const t = newTestContext();
    t.fake.seed(GVR.replicaSets, rs('real'));
    t.fake.seed(
      GVR.configMaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dangling', namespace: 'ns', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'ghost', uid: 'no-such-uid' }] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stale', namespace: 'ns', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'real', uid: 'old-uid' }] } },
    );
    const { run } = await start(t);
    await until(() => t.fake.storedList(GVR.configMaps).length === 0, 'dangling collected');
    assert.ok(exists(t, GVR.replicaSets, 'ns', 'real'));
    await finish(t, run);
  });

  it('never deletes a dependent whose owner exists but is not in the cache: the live read finds it', async () => {
    // The owner's kind is served but not watchable, so it is only known through the live read.
    const t = newTestContext();
    t.discovery.lists.push({ groupVersion: 'hidden.io/v1', resources: [res('things', 'Thing', true, ['get', 'delete', 'patch'])] });
    const things = { group: 'hidden.io', version: 'v1', resource: 'things' };
    const [thing] = t.fake.seed<KubeObject>(things, { apiVersion: 'hidden.io/v1', kind: 'Thing', metadata: { name: 't', namespace: 'ns' } });
    t.fake.seed(GVR.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace: 'ns', ownerReferences: [ownerRef(thing!)] } });
    const { gc, run } = await start(t);
    await until(() => !!gc.collector.graph.node(thing!.metadata!.uid!), 'virtual node');
    assert.equal(await gc.collector.attemptToDeleteItem(thing!.metadata!.uid!), 'virtual-exists');
    assert.equal(await gc.collector.attemptToDeleteItem(t.fake.stored(GVR.configMaps, 'ns', 'kept')!.metadata!.uid!), 'kept');
    assert.ok(exists(t, GVR.configMaps, 'ns', 'kept'));
    await finish(t, run);
  });

  it('foreground: the owner stays until blocking dependents are gone, then loses its finalizer', async () => {
    const t = newTestContext();
    const [owner] = t.fake.seed(GVR.replicationControllers, { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc', namespace: 'ns' } } as KubeObject);
    t.fake.seed(GVR.pods, pod('held', [ownerRef(owner!, { controller: true, blockOwnerDeletion: true })], { finalizers: ['example.com/hold'] }), pod('free', [ownerRef(owner!)]));
    const { run } = await start(t);
    await t.fake.resource(GVR.replicationControllers).namespace('ns').delete('rc', { propagationPolicy: 'Foreground' });
    await until(() => !!t.fake.stored(GVR.pods, 'ns', 'held')?.metadata?.deletionTimestamp && !exists(t, GVR.pods, 'ns', 'free'), 'dependents deleted');
    for (let i = 0; i < 50; i++) await t.clock.advance(1000);
    assert.ok(exists(t, GVR.replicationControllers, 'ns', 'rc'), 'owner waits for the held pod');
    assert.deepEqual(t.fake.stored(GVR.replicationControllers, 'ns', 'rc')!.metadata!.finalizers, ['foregroundDeletion']);
    const held = structuredClone(t.fake.stored(GVR.pods, 'ns', 'held')!);
    held.metadata!.finalizers = [];
    await t.fake.resource(GVR.pods).namespace('ns').update(held);
    await until(() => !exists(t, GVR.replicationControllers, 'ns', 'rc'), 'owner gone');
    await finish(t, run);
  });

  it('foreground: a dependent that has dependents of its own is deleted in foreground too', async () => {
    const t = newTestContext();
    const [dep] = t.fake.seed(GVR.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' } });
    const [r] = t.fake.seed(GVR.replicaSets, rs('d-1', { ownerReferences: [ownerRef(dep!, { controller: true, blockOwnerDeletion: true })] }));
    t.fake.seed(GVR.pods, pod('d-1-x', [ownerRef(r!, { controller: true, blockOwnerDeletion: true })]));
    const { run } = await start(t);
    await t.fake.resource(GVR.deployments).namespace('ns').delete('d', { propagationPolicy: 'Foreground' });
    await until(() => !exists(t, GVR.deployments, 'ns', 'd') && !exists(t, GVR.replicaSets, 'ns', 'd-1') && !exists(t, GVR.pods, 'ns', 'd-1-x'), 'all gone');
    const rsDelete = t.fake.actions().find((a) => a.verb === 'delete' && a.resource === 'replicasets');
    assert.equal(rsDelete?.deleteOptions?.propagationPolicy, 'Foreground');
    await finish(t, run);
  });

  it('orphan: references are removed from every dependent, then the finalizer, and dependents survive', async () => {
    const t = newTestContext();
    const [owner] = t.fake.seed(GVR.replicaSets, rs('web'));
    t.fake.seed(GVR.pods, pod('a', [ownerRef(owner!, { controller: true, blockOwnerDeletion: true })]), pod('b', [ownerRef(owner!)]));
    const { run } = await start(t);
    await t.fake.resource(GVR.replicaSets).namespace('ns').delete('web', { propagationPolicy: 'Orphan' });
    await until(() => !exists(t, GVR.replicaSets, 'ns', 'web'), 'owner gone');
    for (const p of t.fake.storedList(GVR.pods)) assert.deepEqual(p.metadata?.ownerReferences ?? [], []);
    assert.equal(t.fake.storedList(GVR.pods).length, 2);
    await finish(t, run);
  });

  it('cascades from a custom resource owner, and from a cluster-scoped owner to namespaced dependents', async () => {
    const t = newTestContext();
    const [w] = t.fake.seed(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } });
    const [cw] = t.fake.seed(CLUSTER_WIDGETS, { apiVersion: 'example.com/v1', kind: 'ClusterWidget', metadata: { name: 'cw' } });
    t.fake.seed(
      GVR.configMaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'of-w', namespace: 'ns', ownerReferences: [ownerRef(w!)] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'of-cw', namespace: 'ns', ownerReferences: [ownerRef(cw!)] } },
    );
    const { run } = await start(t);
    for (let i = 0; i < 20; i++) await t.clock.advance(100);
    assert.equal(t.fake.storedList(GVR.configMaps).length, 2, 'nothing collected while owners live');
    await t.fake.resource(WIDGETS).namespace('ns').delete('w');
    await t.fake.resource(CLUSTER_WIDGETS).delete('cw');
    await until(() => t.fake.storedList(GVR.configMaps).length === 0, 'collected');
    await finish(t, run);
  });

  it('reports a cluster-scoped dependent naming a namespaced owner and leaves it alone', async () => {
    const t = newTestContext();
    t.fake.seed(CLUSTER_WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'ClusterWidget',
      metadata: { name: 'bad', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-rs' }] },
    });
    const { gc, run } = await start(t);
    const uid = t.fake.stored(CLUSTER_WIDGETS, '', 'bad')!.metadata!.uid!;
    await until(() => gc.collector.graph.node('u-rs') !== undefined, 'virtual owner in the graph');
    // The virtual owner cannot be looked up without a namespace: it stays (not verified absent), as upstream.
    assert.equal(await gc.collector.attemptToDeleteItem('u-rs'), 'invalid');
    assert.ok(gc.collector.graph.node('u-rs'));
    assert.equal(await gc.collector.attemptToDeleteItem(uid), 'invalid');
    assert.ok(exists(t, CLUSTER_WIDGETS, '', 'bad'));
    assert.ok(t.recorder.events.some((e) => e.startsWith('Warning OwnerRefInvalidNamespace ownerRef [apps/v1/ReplicaSet, namespace: , name: rs, uid: u-rs] does not exist in namespace ""')), t.recorder.events.join('\n'));
    await finish(t, run);
  });

  it('collects an ownership cycle deleted in foreground', async () => {
    const t = newTestContext();
    const [a] = t.fake.seed(GVR.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } });
    const [b] = t.fake.seed(GVR.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'ns', ownerReferences: [ownerRef(a!, { blockOwnerDeletion: true })] } });
    const aWithRef = structuredClone(t.fake.stored(GVR.configMaps, 'ns', 'a')!);
    aWithRef.metadata!.ownerReferences = [ownerRef(b!, { blockOwnerDeletion: true })];
    await t.fake.resource(GVR.configMaps).namespace('ns').update(aWithRef);
    const { run } = await start(t);
    for (let i = 0; i < 20; i++) await t.clock.advance(100);
    assert.equal(t.fake.storedList(GVR.configMaps).length, 2, 'a live cycle is kept');
    await t.fake.resource(GVR.configMaps).namespace('ns').delete('a', { propagationPolicy: 'Foreground' });
    for (let i = 0; i < 200 && t.fake.storedList(GVR.configMaps).length > 0; i++) await t.clock.advance(1000);
    assert.equal(t.fake.storedList(GVR.configMaps).length, 0);
    await finish(t, run);
  });

  it('is registered as garbage-collector-controller with 20 workers', () => {
    assert.equal(descriptor.name, 'garbage-collector-controller');
    assert.deepEqual(descriptor.aliases, ['garbagecollector']);
    assert.equal(descriptor.defaultWorkers, 20);
  });
});
