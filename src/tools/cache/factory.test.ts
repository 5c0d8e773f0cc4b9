import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { GroupVersionResource, KubeObject, PartialObjectMetadata } from '../../api/types.js';
import { GVR, gvrString } from '../../api/gvr.js';
import type { Client, ResourceInterface } from '../../client/interfaces.js';
import { FakeClock } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newSharedInformerFactory, sharedOrMetadataInformer, stripManagedFields } from './factory.js';
import { NAMESPACE_INDEX } from './store.js';
import { newFakeListerWatcher } from './testing/fake-lister-watcher.js';
import type { FakeListerWatcher } from './testing/fake-lister-watcher.js';

/** A Client whose resources list and watch through FakeListerWatchers (one per GVR and view). */
function fakeClient(seed: Record<string, KubeObject[]> = {}) {
  const lws = new Map<string, FakeListerWatcher<KubeObject>>();
  const scopes: string[] = [];
  const lwFor = (key: string) => {
    let lw = lws.get(key);
    if (!lw) {
      lw = newFakeListerWatcher<KubeObject>(seed[key] ?? []);
      lws.set(key, lw);
    }
    return lw;
  };
  const ri = (key: string, gvr: GroupVersionResource, ns = ''): ResourceInterface<KubeObject> => {
    const lw = lwFor(key);
    const notUsed = () => {
      throw new Error('not used by informers');
    };
    return {
      gvr,
      namespace: (n: string) => {
        scopes.push(`${key}@${n}`);
        return ri(key, gvr, n);
      },
      list: (o = {}) => lw.list(o).then((l) => ({ ...l, items: ns ? l.items.filter((i) => i.metadata?.namespace === ns) : l.items })),
      watch: (o = {}, signal = new AbortController().signal) => lw.watch(o, signal),
      get: notUsed,
      listAll: notUsed,
      create: notUsed,
      update: notUsed,
      updateStatus: notUsed,
      patch: notUsed,
      delete: notUsed,
      deleteCollection: notUsed,
      getSubresource: notUsed,
      createSubresource: notUsed,
      updateSubresource: notUsed,
    } as ResourceInterface<KubeObject>;
  };
  const client: Client = {
    resource: <T extends KubeObject>(gvr: GroupVersionResource) => ri(gvrString(gvr), gvr) as unknown as ResourceInterface<T>,
    metadata: (gvr: GroupVersionResource) => ri(`metadata:${gvrString(gvr)}`, gvr) as unknown as ResourceInterface<PartialObjectMetadata>,
  };
  return { client, lwFor, scopes };
}

const podA: KubeObject = {
  metadata: { namespace: 'ns', name: 'a', managedFields: [{ manager: 'kubectl', operation: 'Apply' }] },
  spec: { x: 1 },
};

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

describe('shared informer factory', () => {
  it('returns one informer per resource, however it is asked for', () => {
    const { client } = fakeClient();
    const f = newSharedInformerFactory(client, { clock: new FakeClock() });
    const pods = f.pods();
    assert.equal(f.pods(), pods);
    assert.equal(f.forResource(GVR.pods), pods);
    assert.equal(f.informerFor(gvrString(GVR.pods), () => assert.fail('not created twice')), pods);
    assert.notEqual(f.deployments(), pods);
    assert.notEqual(f.forResourceMetadata(GVR.pods), pods);
    assert.equal(f.forResourceMetadata(GVR.pods), f.forResourceMetadata(GVR.pods));
  });

  it("gives identity-only watchers the full informer another controller asked for, also through a version fallback, else a metadata one", () => {
    const { client } = fakeClient();
    const f = newSharedInformerFactory(client, { clock: new FakeClock() });
    assert.equal(sharedOrMetadataInformer(f, GVR.configMaps), f.forResourceMetadata(GVR.configMaps), 'no one asked for configmaps');
    const deployments = f.deployments();
    assert.equal(sharedOrMetadataInformer(f, GVR.deployments), deployments);
    // A 1.20 server's discovery names batch/v1beta1 CronJobs, which the CronJob controller watches as batch/v1.
    const older = { group: 'batch', version: 'v1beta1', resource: 'cronjobs' };
    assert.equal(sharedOrMetadataInformer(f, older), f.forResourceMetadata(older), 'before anyone asked for CronJobs');
    const cronJobs = f.forResource({ group: 'batch', version: 'v1', resource: 'cronjobs' });
    assert.equal(sharedOrMetadataInformer(f, older), cronJobs);
  });

  it('has an accessor for every built-in resource', () => {
    const { client } = fakeClient();
    const f = newSharedInformerFactory(client, { clock: new FakeClock() });
    for (const key of Object.keys(GVR) as (keyof typeof GVR)[]) {
      assert.equal(typeof f[key], 'function', key);
      assert.equal(f[key](), f.forResource(GVR[key]));
    }
  });

  it('starts informers registered after start, syncs them, drops managedFields and shuts down', async () => {
    const clock = new FakeClock();
    const { client, lwFor } = fakeClient({ [gvrString(GVR.pods)]: [podA] });
    const f = newSharedInformerFactory(client, { clock });
    const ac = new AbortController();
    const pods = f.pods();
    f.start(ac.signal);
    const synced = f.waitForCacheSync(ac.signal);
    await clock.advance(100);
    assert.deepEqual(await synced, new Map([[gvrString(GVR.pods), true]]));
    const cached = pods.getStore().getByKey('ns/a')!;
    assert.equal(cached.metadata?.managedFields, undefined);
    assert.deepEqual(cached.spec, { x: 1 });
    assert.ok(podA.metadata?.managedFields, 'the input object is not mutated');
    assert.deepEqual(pods.getIndexer().indexKeys(NAMESPACE_INDEX, 'ns'), ['ns/a']);
    await lwFor(gvrString(GVR.pods)).until(() => lwFor(gvrString(GVR.pods)).watchCalls.length > 0);
    assert.equal(lwFor(gvrString(GVR.pods)).watchCalls[0]!.dropManagedFields, true, 'the watch cuts managedFields before parsing');

    const nodes = f.nodes();
    f.start(ac.signal);
    await lwFor(gvrString(GVR.nodes)).until(() => nodes.hasSynced());
    assert.equal(lwFor(gvrString(GVR.pods)).listCalls.length, 1, 'a second start does not restart running informers');

    await f.shutdown();
    assert.equal(pods.isStopped(), true);
    assert.equal(nodes.isStopped(), true);
    assert.equal(ac.signal.aborted, false);
  });

  it('keeps managedFields in the watch text for a transform of its own', async () => {
    const clock = new FakeClock();
    const { client, lwFor } = fakeClient({ [gvrString(GVR.pods)]: [podA] });
    const f = newSharedInformerFactory(client, { clock, transform: (o) => o });
    const pods = f.pods();
    const ac = new AbortController();
    f.start(ac.signal);
    const lw = lwFor(gvrString(GVR.pods));
    await lw.until(() => pods.hasSynced() && lw.watchCalls.length > 0);
    assert.equal(lw.watchCalls[0]!.dropManagedFields, undefined);
    assert.deepEqual(pods.getStore().getByKey('ns/a')!.metadata?.managedFields, podA.metadata?.managedFields);
    ac.abort();
    await f.shutdown();
  });

  it('scopes informers to the namespace option and uses the metadata client for metadata informers', async () => {
    const clock = new FakeClock();
    const { client, scopes, lwFor } = fakeClient({ [`metadata:${gvrString(GVR.pods)}`]: [podA] });
    const f = newSharedInformerFactory(client, { clock, namespace: 'ns', tweakListOptions: (o) => void (o.labelSelector = 'app=web') });
    const meta = f.forResourceMetadata(GVR.pods);
    const ac = new AbortController();
    f.start(ac.signal);
    const lw = lwFor(`metadata:${gvrString(GVR.pods)}`);
    await lw.until(() => meta.hasSynced());
    assert.deepEqual(scopes, [`metadata:${gvrString(GVR.pods)}@ns`]);
    assert.equal(lw.listCalls[0]!.labelSelector, 'app=web');
    assert.deepEqual(meta.getStore().listKeys(), ['ns/a']);
    ac.abort();
    await f.shutdown();
  });

  it('borrows the informers of the resources it is told to from another factory, which runs and stops them', async () => {
    const clock = new FakeClock();
    const lender = fakeClient({ [gvrString(GVR.pods)]: [podA] });
    const own = fakeClient();
    const from = newSharedInformerFactory(lender.client, { clock });
    const f = newSharedInformerFactory(own.client, { clock, borrow: { from, resources: [GVR.pods, GVR.nodes] } });
    const pods = f.pods();
    assert.equal(pods, from.pods(), "the lender's informer itself");
    assert.equal(f.hasInformer(GVR.pods), true);
    assert.notEqual(f.deployments(), from.deployments(), 'other resources are its own');
    // The borrower's start runs the borrowed informer; its wait includes it.
    const ac = new AbortController();
    f.start(ac.signal);
    const synced = f.waitForCacheSync(ac.signal);
    await clock.advance(100);
    assert.deepEqual(await synced, new Map([[gvrString(GVR.deployments), true], [gvrString(GVR.pods), true]]));
    assert.deepEqual(pods.getStore().listKeys(), ['ns/a']);
    assert.equal(lender.lwFor(gvrString(GVR.pods)).listCalls.length, 1);
    assert.equal(own.lwFor(gvrString(GVR.pods)).listCalls.length, 0, "one watch: the lender's");
    // Neither the borrower's signal nor its shutdown stops the lender's informer; the lender's shutdown does.
    ac.abort();
    await f.shutdown();
    assert.equal(pods.isStopped(), false);
    assert.equal(f.deployments().isStopped(), true);
    await from.shutdown();
    assert.equal(pods.isStopped(), true);
  });

  it('borrows nothing when scoped to a namespace or tweaking list options', () => {
    const from = newSharedInformerFactory(fakeClient().client, { clock: new FakeClock() });
    const scoped = newSharedInformerFactory(fakeClient().client, { clock: new FakeClock(), namespace: 'ns', borrow: { from, resources: [GVR.pods] } });
    assert.notEqual(scoped.pods(), from.pods());
    const tweaked = newSharedInformerFactory(fakeClient().client, { clock: new FakeClock(), tweakListOptions: () => undefined, borrow: { from, resources: [GVR.pods] } });
    assert.notEqual(tweaked.pods(), from.pods());
  });

  it('reports an informer as not synced when the wait is aborted', async () => {
    const clock = new FakeClock();
    const { client, lwFor } = fakeClient();
    lwFor(gvrString(GVR.pods)).failLists(new Error('down'), new Error('down'));
    const f = newSharedInformerFactory(client, { clock });
    f.pods();
    const ac = new AbortController();
    f.start(ac.signal);
    const wait = new AbortController();
    const synced = f.waitForCacheSync(wait.signal);
    await clock.advance(100);
    wait.abort();
    assert.deepEqual(await synced, new Map([[gvrString(GVR.pods), false]]));
    ac.abort();
    await f.shutdown();
  });

  it('stripManagedFields leaves objects without managedFields untouched', () => {
    const o = { metadata: { name: 'x' } };
    assert.equal(stripManagedFields(o), o);
  });
});
