import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap as ConfigMapType, Pod as PodType } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newFakeClient } from '../controller/testing/fake-client.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { setLogOutput } from '../util/log/logger.js';
import { newRuntimeCache } from './cache.js';
import { UncachedKindError } from './errors.js';
import { kinds, metadataOnly } from './kinds.js';
import type { ManagerCacheOptions } from './manager.js';
import { settle, testManager, until, type TestManager } from './test-support.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

type ConfigMap = ConfigMapType & { [k: string]: unknown };
type Pod = PodType & { [k: string]: unknown };

function cm(name: string, ns = 'default', labels?: Record<string, string>, data: Record<string, string> = {}): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data };
}

function pod(name: string, ns: string, nodeName: string, labels?: Record<string, string>): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, spec: { nodeName, containers: [{ name: 'c', image: 'x' }] } };
}

/**
 * A manager on the fake client, kept running by a runnable that waits for
 * the stop signal (a manager with nothing to run returns from start() at once).
 */
function manager(cache: ManagerCacheOptions): TestManager {
  const t = testManager({ cache });
  t.mgr.add({ start: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })) });
  return t;
}

/** Lets the event loop turn until the async `cond` holds (no clock time passes). */
async function eventually(cond: () => Promise<boolean>, what: string, turns = 300): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (await cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`${what}: not reached after ${turns} turns`);
}

const names = (objs: KubeObject[] | { metadata?: { name?: string; namespace?: string } }[]) =>
  objs.map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`).sort();

describe('runtime cache', () => {
  it('refuses reads of a kind nobody cached with UncachedKindError, through the cache and the client', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    await t.start();
    await assert.rejects(t.mgr.cache.get(kinds.Secret, { namespace: 'default', name: 'a' }), (err: unknown) => {
      assert.ok(err instanceof UncachedKindError);
      assert.equal(err.kind, kinds.Secret);
      assert.match(err.message, /^Secret\/v1 is not cached: /);
      return true;
    });
    await assert.rejects(t.mgr.cache.list(kinds.Secret), UncachedKindError);
    await assert.rejects(t.mgr.client.get(kinds.Secret, { namespace: 'default', name: 'a' }), UncachedKindError);
    await assert.rejects(t.mgr.client.list(kinds.Deployment), UncachedKindError);
    assert.equal(t.mgr.cache.has(kinds.Secret), false);
    assert.equal(t.mgr.cache.has(kinds.ConfigMap), true);
    await t.stop();
  });

  it('refuses reads before it is started', async () => {
    const clock = new FakeClock();
    const cache = newRuntimeCache({ client: newFakeClient({ clock }), clock });
    cache.watch(kinds.ConfigMap);
    await assert.rejects(cache.list(kinds.ConfigMap), /before it is started/);
  });

  it('hands out copies: changing what get or list returned does not change the cache', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    t.fake.seed(GVR.configMaps, cm('a', 'default', { app: 'web' }, { k: 'v' }));
    await t.start();
    const got = (await t.mgr.cache.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    got.data!.k = 'changed';
    got.metadata!.labels!.app = 'changed';
    const [listed] = await t.mgr.cache.list(kinds.ConfigMap);
    assert.equal(listed!.data!.k, 'v');
    listed!.data!.k = 'changed again';
    delete listed!.metadata!.labels;
    const again = (await t.mgr.cache.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))!;
    assert.deepEqual(again.data, { k: 'v' });
    assert.deepEqual(again.metadata?.labels, { app: 'web' });
    assert.notEqual(again, got);
    await t.stop();
  });

  it('answers get with undefined for an object it does not hold, and needs a namespace for namespaced kinds', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    await t.start();
    assert.equal(await t.mgr.cache.get(kinds.ConfigMap, { namespace: 'default', name: 'missing' }), undefined);
    await assert.rejects(t.mgr.cache.get(kinds.ConfigMap, { name: 'a' }), TypeError);
    await t.stop();
  });

  it('stores objects with apiVersion and kind set and without managedFields, from the list and from the watch', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    const managedFields = [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }];
    t.fake.seed(GVR.configMaps, { ...cm('listed'), metadata: { name: 'listed', namespace: 'default', managedFields } });
    // List items from an API server carry neither apiVersion nor kind.
    t.fake.prependReactor('list', 'configmaps', () => ({
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: t.fake.resourceVersion() },
      items: t.fake.storedList(GVR.configMaps).map(({ apiVersion: _a, kind: _k, ...rest }) => rest),
    }));
    await t.start();
    await t.fake.resource(GVR.configMaps).namespace('default').create({ ...cm('watched'), metadata: { name: 'watched', namespace: 'default', managedFields } });
    await eventually(async () => (await t.mgr.cache.list(kinds.ConfigMap)).length === 2, 'both cached');
    const items = await t.mgr.cache.list(kinds.ConfigMap);
    assert.deepEqual(names(items), ['default/listed', 'default/watched']);
    for (const o of items) {
      assert.equal(o.apiVersion, 'v1');
      assert.equal(o.kind, 'ConfigMap');
      assert.equal(o.metadata?.managedFields, undefined);
      assert.ok(o.metadata?.uid, 'the rest of the metadata is kept');
    }
    const got = await t.mgr.cache.get(kinds.ConfigMap, { namespace: 'default', name: 'listed' });
    assert.equal(got?.kind, 'ConfigMap');
    assert.equal(got?.metadata?.managedFields, undefined);
    await t.stop();
  });

  it('lists by namespace, and by label selector as a string or as a map', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    t.fake.seed(
      GVR.configMaps,
      cm('web-db', 'a', { app: 'web', tier: 'db' }),
      cm('web-fe', 'a', { app: 'web', tier: 'fe' }),
      cm('api', 'a', { app: 'api' }),
      cm('web-b', 'b', { app: 'web' }),
      cm('plain', 'b'),
    );
    await t.start();
    const c = t.mgr.cache;
    assert.deepEqual(names(await c.list(kinds.ConfigMap)), ['a/api', 'a/web-db', 'a/web-fe', 'b/plain', 'b/web-b']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { namespace: 'b' })), ['b/plain', 'b/web-b']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { namespace: 'none' })), []);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { labelSelector: 'app=web,tier!=db' })), ['a/web-fe', 'b/web-b']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { labelSelector: '!app' })), ['b/plain']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { labelSelector: { app: 'web' } })), ['a/web-db', 'a/web-fe', 'b/web-b']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { labelSelector: { app: 'web', tier: 'db' } })), ['a/web-db']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { namespace: 'a', labelSelector: { app: 'web' } })), ['a/web-db', 'a/web-fe']);
    await t.stop();
  });

  it('keeps up with changes the watch delivers', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    t.fake.seed(GVR.configMaps, cm('a', 'default', {}, { v: '1' }));
    await t.start();
    const cms = t.fake.resource(GVR.configMaps).namespace('default');
    await cms.patch('a', 'merge', { data: { v: '2' } });
    await cms.create(cm('b'));
    await eventually(async () => (await t.mgr.cache.get(kinds.ConfigMap, { namespace: 'default', name: 'a' }))?.data?.v === '2', 'update seen');
    await eventually(async () => (await t.mgr.cache.list(kinds.ConfigMap)).length === 2, 'create seen');
    await cms.delete('a');
    await eventually(async () => (await t.mgr.cache.get(kinds.ConfigMap, { namespace: 'default', name: 'a' })) === undefined, 'delete seen');
    await t.stop();
  });

  describe('field indexes', () => {
    async function indexed(cache: ManagerCacheOptions = {}): Promise<TestManager> {
      const t = manager(cache);
      t.mgr.indexField(kinds.Pod, 'spec.nodeName', (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
      t.mgr.indexField(kinds.Pod, 'metadata.labels.app', (p) => Object.values(p.metadata?.labels ?? {}).length ? [p.metadata!.labels!.app ?? ''] : []);
      t.fake.seed(
        GVR.pods,
        pod('a1', 'a', 'n1', { app: 'web' }),
        pod('a2', 'a', 'n2', { app: 'web' }),
        pod('a3', 'a', 'n1', { app: 'db' }),
        pod('b1', 'b', 'n1', { app: 'web' }),
        pod('c1', 'c', 'n1', { app: 'web' }),
      );
      await t.start();
      return t;
    }

    it('answers matchingFields in one namespace and across all namespaces', async () => {
      const t = await indexed();
      const c = t.mgr.cache;
      assert.deepEqual(names(await c.list(kinds.Pod, { matchingFields: { 'spec.nodeName': 'n1' } })), ['a/a1', 'a/a3', 'b/b1', 'c/c1']);
      assert.deepEqual(names(await c.list(kinds.Pod, { namespace: 'a', matchingFields: { 'spec.nodeName': 'n1' } })), ['a/a1', 'a/a3']);
      assert.deepEqual(names(await c.list(kinds.Pod, { namespace: 'b', matchingFields: { 'spec.nodeName': 'n2' } })), []);
      assert.deepEqual(names(await c.list(kinds.Pod, { matchingFields: { 'spec.nodeName': 'n3' } })), []);
      await t.stop();
    });

    it('intersects several fields, and combines with a label selector', async () => {
      const t = await indexed();
      const c = t.mgr.cache;
      assert.deepEqual(names(await c.list(kinds.Pod, { matchingFields: { 'spec.nodeName': 'n1', 'metadata.labels.app': 'web' } })), ['a/a1', 'b/b1', 'c/c1']);
      assert.deepEqual(
        names(await c.list(kinds.Pod, { namespace: 'a', matchingFields: { 'spec.nodeName': 'n1', 'metadata.labels.app': 'web' } })),
        ['a/a1'],
      );
      assert.deepEqual(names(await c.list(kinds.Pod, { matchingFields: { 'spec.nodeName': 'n1' }, labelSelector: 'app=db' })), ['a/a3']);
      await t.stop();
    });

    it('follows changes of the indexed field', async () => {
      const t = await indexed();
      await t.fake.resource(GVR.pods).namespace('a').patch('a2', 'merge', { spec: { nodeName: 'n1' } });
      await eventually(
        async () => names(await t.mgr.cache.list(kinds.Pod, { namespace: 'a', matchingFields: { 'spec.nodeName': 'n1' } })).length === 3,
        'a2 moved to n1',
      );
      assert.deepEqual(names(await t.mgr.cache.list(kinds.Pod, { matchingFields: { 'spec.nodeName': 'n2' } })), []);
      await t.stop();
    });

    it('refuses matchingFields on a field without an index', async () => {
      const t = await indexed();
      await assert.rejects(t.mgr.cache.list(kinds.Pod, { matchingFields: { 'spec.schedulerName': 'x' } }), {
        message: 'list Pod/v1: no index for field spec.schedulerName (declare it with indexField)',
      });
      await t.stop();
    });

    it('refuses a second index of one field', () => {
      const t = manager({});
      t.mgr.indexField(kinds.Pod, 'spec.nodeName', () => []);
      assert.throws(() => t.mgr.indexField(kinds.Pod, 'spec.nodeName', () => []), /already has an index for spec\.nodeName/);
    });

    it('answers across the namespaces of a cache restricted to some', async () => {
      const t = await indexed({ namespaces: ['a', 'b'] });
      const c = t.mgr.cache;
      assert.deepEqual(names(await c.list(kinds.Pod, { matchingFields: { 'spec.nodeName': 'n1' } })), ['a/a1', 'a/a3', 'b/b1']);
      assert.deepEqual(names(await c.list(kinds.Pod, { namespace: 'b', matchingFields: { 'spec.nodeName': 'n1' } })), ['b/b1']);
      await t.stop();
    });
  });

  it('caches only objects matching a per-kind label selector, and asks the server for just those', async () => {
    const t = manager({ kinds: [kinds.ConfigMap], byKind: [{ kind: kinds.ConfigMap, labelSelector: 'app=web' }] });
    t.fake.seed(GVR.configMaps, cm('web', 'default', { app: 'web' }), cm('db', 'default', { app: 'db' }), cm('none'));
    await t.start();
    const c = t.mgr.cache;
    assert.deepEqual(names(await c.list(kinds.ConfigMap)), ['default/web']);
    assert.equal(await c.get(kinds.ConfigMap, { namespace: 'default', name: 'db' }), undefined);
    const reads = t.fake.actions().filter((a) => a.resource === 'configmaps' && (a.verb === 'list' || a.verb === 'watch'));
    assert.ok(reads.length >= 2);
    for (const a of reads) assert.equal((a.listOptions ?? a.watchOptions)?.labelSelector, 'app=web', `${a.verb} uses the selector`);
    // Relabelled into the selector: it arrives; out of it: it goes.
    const cms = t.fake.resource(GVR.configMaps).namespace('default');
    await cms.patch('db', 'merge', { metadata: { labels: { app: 'web' } } });
    await cms.patch('web', 'merge', { metadata: { labels: { app: 'other' } } });
    await eventually(async () => names(await c.list(kinds.ConfigMap)).join() === 'default/db', 'relabelled');
    await t.stop();
  });

  it("caches namespaced kinds only in the manager's namespaces, and refuses reads elsewhere", async () => {
    const t = manager({ kinds: [kinds.ConfigMap, kinds.Namespace], namespaces: ['a', 'b'] });
    t.fake.seed(GVR.configMaps, cm('x', 'a'), cm('y', 'b'), cm('z', 'c'));
    t.fake.seed(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'c' } });
    await t.start();
    const c = t.mgr.cache;
    assert.deepEqual(names(await c.list(kinds.ConfigMap)), ['a/x', 'b/y']);
    assert.deepEqual(names(await c.list(kinds.ConfigMap, { namespace: 'b' })), ['b/y']);
    assert.equal((await c.get(kinds.ConfigMap, { namespace: 'a', name: 'x' }))?.metadata?.name, 'x');
    await assert.rejects(c.get(kinds.ConfigMap, { namespace: 'c', name: 'z' }), /namespace c is not cached for ConfigMap\/v1/);
    await assert.rejects(c.list(kinds.ConfigMap, { namespace: 'c' }), /namespace c is not cached/);
    // Cluster-scoped kinds are cached whole.
    assert.deepEqual(names(await c.list(kinds.Namespace)), ['/a', '/c']);
    const lists = t.fake.actions().filter((a) => a.verb === 'list');
    assert.deepEqual(lists.filter((a) => a.resource === 'configmaps').map((a) => a.namespace).sort(), ['a', 'b']);
    assert.deepEqual(lists.filter((a) => a.resource === 'namespaces').map((a) => a.namespace), ['']);
    await t.stop();
  });

  it("lets a kind's own namespaces override the manager's", async () => {
    const t = manager({ kinds: [kinds.ConfigMap], namespaces: ['a'], byKind: [{ kind: kinds.ConfigMap, namespaces: ['c'] }] });
    t.fake.seed(GVR.configMaps, cm('x', 'a'), cm('z', 'c'));
    await t.start();
    assert.deepEqual(names(await t.mgr.cache.list(kinds.ConfigMap)), ['c/z']);
    await t.stop();
  });

  it("caches a metadataOnly kind as PartialObjectMetadata through the client's metadata view", async () => {
    const secretMeta = metadataOnly(kinds.Secret);
    const t = manager({ kinds: [secretMeta] });
    t.fake.seed(GVR.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default', labels: { a: 'b' }, finalizers: ['f'] }, data: { password: 'aHVudGVyMg==' } });
    await t.start();
    const got = await t.mgr.cache.get(secretMeta, { namespace: 'default', name: 's' });
    assert.ok(got);
    assert.deepEqual(got.metadata.labels, { a: 'b' });
    assert.deepEqual(got.metadata.finalizers, ['f']);
    assert.equal((got as { data?: unknown }).data, undefined, 'no data: metadata only');
    assert.equal(got.apiVersion, 'v1');
    assert.equal(got.kind, 'Secret');
    const reads = t.fake.actions().filter((a) => a.resource === 'secrets');
    assert.deepEqual(
      reads.map((a) => [a.verb, a.metadataOnly]),
      [
        ['list', true],
        ['watch', true],
      ],
    );
    // The full kind is a different cache entry.
    assert.equal(t.mgr.cache.has(kinds.Secret), false);
    await assert.rejects(t.mgr.cache.get(kinds.Secret, { namespace: 'default', name: 's' }), UncachedKindError);
    await t.stop();
  });

  it('starts a kind asked for after start at once', async () => {
    const t = manager({ kinds: [kinds.ConfigMap] });
    t.fake.seed(GVR.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' } });
    await t.start();
    t.mgr.cache.watch(kinds.Secret);
    assert.deepEqual(names(await t.mgr.cache.list(kinds.Secret)), ['default/s']);
    await t.stop();
  });

  describe('readyCheck', () => {
    it('reports an informer that has not synced', async () => {
      const t = manager({ kinds: [kinds.ConfigMap], namespaces: ['a'] });
      t.fake.prependReactor('list', 'configmaps', () => {
        throw new Error('forbidden');
      });
      assert.match(t.mgr.cache.readyCheck()?.message ?? '', /not synced/, 'not synced before start');
      await t.start();
      await settle();
      assert.equal(t.mgr.cache.readyCheck()?.message, 'informer for ConfigMap/v1 in a has not synced');
      await t.stop();
    });

    it('is happy once every informer synced and watches', async () => {
      const t = manager({ kinds: [kinds.ConfigMap, kinds.Secret] });
      await t.start();
      await until(() => t.fake.watcherCount() === 2, 'watching');
      assert.equal(t.mgr.cache.readyCheck(), undefined);
      await t.stop();
    });

    it('reports a watch that stayed down past the grace period, with its last error, and recovers', async () => {
      const t = manager({ kinds: [kinds.ConfigMap] });
      let broken = false;
      t.fake.prependReactor('watch', 'configmaps', () => {
        if (broken) throw new Error('watch refused');
        return undefined;
      });
      await t.start();
      await until(() => t.fake.watcherCount(GVR.configMaps) === 1, 'watching');
      assert.equal(t.mgr.cache.readyCheck(), undefined);

      broken = true;
      assert.equal(t.fake.closeWatches(GVR.configMaps), 1);
      await settle();
      assert.equal(t.fake.watcherCount(GVR.configMaps), 0);
      assert.equal(t.mgr.cache.readyCheck(), undefined, 'down, but within the grace period');

      // Relists and watch retries go on meanwhile; the watch stays down.
      for (let i = 0; i < 6; i++) {
        await t.clock.advance(5_000);
        await settle();
      }
      assert.equal(t.mgr.cache.readyCheck(), undefined, 'down for exactly the grace period');
      await t.clock.advance(1_000);
      await settle();
      assert.equal(t.mgr.cache.readyCheck()?.message, 'watch of ConfigMap/v1 down for 31 s: watch refused');
      assert.ok(t.fake.actions().filter((a) => a.verb === 'watch').length >= 3, 'the reflector kept retrying');

      broken = false;
      for (let i = 0; i < 20 && t.fake.watcherCount(GVR.configMaps) === 0; i++) {
        await t.clock.advance(5_000);
        await settle();
      }
      assert.equal(t.fake.watcherCount(GVR.configMaps), 1);
      assert.equal(t.mgr.cache.readyCheck(), undefined);
      await t.stop();
    });
  });
});
