/**
 * Client and informers over real HTTP against the embedded API server:
 * list + watch, handlers, listers, pagination, and a relist after a watch
 * was cut off and the server compacted past it.
 */
import { describe, it, before, after } from 'node:test';
import { Backoff } from '../../src/util/wait/backoff.js';
import { realClock } from '../../src/util/clock/clock.js';
import assert from 'node:assert/strict';
import type { Pod, ConfigMap } from 'kubernetes-types/core/v1.js';
import { startTestServer, type TestServer } from '../../src/apiserver/test-server.js';
import { newKubeClient, newRestConfig, typed, type KubeClient } from '../../src/client/index.js';
import { newSharedInformerFactory, newSharedIndexInformer, newLister, listWatchFromClient, DeletedFinalStateUnknown } from '../../src/tools/cache/index.js';
import type { ListerWatcher } from '../../src/tools/cache/interfaces.js';
import { NetworkError, type Watch } from '../../src/client/index.js';
import { parseSelector } from '../../src/api/labels.js';
import type { KubeObject } from '../../src/api/types.js';

async function waitFor(cond: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function pod(name: string, labels: Record<string, string> = {}): Pod & KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
  } as Pod & KubeObject;
}

describe('client and informers against the embedded API server', () => {
  let server: TestServer;
  let client: KubeClient;

  before(async () => {
    server = await startTestServer();
    client = newKubeClient(newRestConfig({ host: server.base, qps: -1 }));
    // Pods need the default service account (ServiceAccount admission).
    await typed(client).serviceAccounts('default').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } as never);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('lists, watches and delivers adds, updates and deletes to handlers and listers', async () => {
    const pods = typed(client).pods('default');
    await pods.create(pod('before-start', { app: 'web' }));
    const factory = newSharedInformerFactory(client);
    const informer = factory.pods();
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (p) => seen.push(`add ${p.metadata?.name}`),
      onUpdate: (_o, n) => seen.push(`update ${n.metadata?.name} ${n.metadata?.labels?.tier ?? ''}`),
      onDelete: (p) => seen.push(`delete ${(p instanceof DeletedFinalStateUnknown ? p.obj : p).metadata?.name}`),
    });
    const ac = new AbortController();
    factory.start(ac.signal);
    const synced = await factory.waitForCacheSync(ac.signal);
    assert.equal([...synced.values()].every(Boolean), true);
    assert.deepEqual(seen, ['add before-start']);

    await pods.create(pod('after-start', { app: 'web' }));
    await pods.patch('after-start', 'merge', { metadata: { labels: { tier: 'front' } } });
    await pods.delete('before-start', { gracePeriodSeconds: 0 });
    await waitFor(() => seen.length >= 4, 10_000, 'four events');
    assert.deepEqual(seen, ['add before-start', 'add after-start', 'update after-start front', 'delete before-start']);

    const lister = newLister(informer.getIndexer());
    assert.deepEqual(lister.namespace('default').list(parseSelector('tier=front')).map((p) => p.metadata?.name), ['after-start']);
    assert.equal(lister.namespace('default').get('before-start'), undefined);
    ac.abort();
    await factory.shutdown();
  });

  it('pages through a large list with limit and continue', async () => {
    const cms = typed(client).configMaps('default');
    for (let i = 0; i < 120; i++) {
      await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(3, '0')}` }, data: { i: String(i) } } as ConfigMap & KubeObject);
    }
    const first = await cms.list({ limit: 50 });
    assert.equal(first.items.length, 50);
    assert.ok(first.metadata.continue);
    const all = await cms.listAll({ limit: 50 } as never);
    assert.equal(all.items.filter((c) => c.metadata?.name?.startsWith('cm-')).length, 120);
  });

  it('relists after the server compacted past a broken watch and reports the deletion as a tombstone', async () => {
    const cms = typed(client).configMaps('default');
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'relist-me' } } as ConfigMap & KubeObject);
    // A ListerWatcher over the real client whose watches can be cut off, as a network partition would.
    const real = listWatchFromClient(cms);
    let blocked = false;
    let refused = 0;
    let current: Watch<ConfigMap & KubeObject> | undefined;
    const lists: string[] = [];
    const lw: ListerWatcher<ConfigMap & KubeObject> = {
      list: (opts) => {
        lists.push(opts.resourceVersion ?? '');
        return real.list(opts);
      },
      watch: async (opts, signal) => {
        if (blocked) {
          refused++;
          throw new NetworkError('partitioned');
        }
        current = await real.watch(opts, signal);
        return current;
      },
    };
    // A short, flat backoff: the partition below makes the reflector retry, and a loaded machine must not stretch that past the test's waits.
    const informer = newSharedIndexInformer(lw, { name: 'configmaps', backoff: new Backoff({ initialMs: 50, maxMs: 200, clock: realClock }) });
    const deleted: unknown[] = [];
    informer.addEventHandler({ onDelete: (o) => deleted.push(o) });
    const ac = new AbortController();
    const running = informer.run(ac.signal);
    try {
      await waitFor(() => informer.hasSynced(), 10_000, 'sync');
      assert.ok(informer.getIndexer().getByKey('default/relist-me'));
      const listsBefore = lists.length;

      // Cut the watch once it is open (under load it may still be on its way after the sync).
      await waitFor(() => current !== undefined, 20_000, 'the watch to open');
      blocked = true;
      current?.stop();
      // The old watch is over once the reflector tried (and failed) to open a new one: the deletion below is unseen.
      await waitFor(() => refused > 0, 20_000, 'a refused re-watch');
      await cms.delete('relist-me');
      await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-partition' } } as ConfigMap & KubeObject);
      await server.storage.compact(server.storage.currentRevision());
      blocked = false;

      await waitFor(() => deleted.length > 0, 20_000, 'the tombstone');
      assert.ok(deleted[0] instanceof DeletedFinalStateUnknown, 'deletion inferred from a relist');
      assert.equal((deleted[0] as DeletedFinalStateUnknown<ConfigMap>).key, 'default/relist-me');
      assert.ok(lists.length > listsBefore, 'the reflector listed again');
      await waitFor(() => informer.getIndexer().getByKey('default/after-partition') !== undefined, 10_000, 'new object');
    } finally {
      ac.abort();
      await running;
    }
  });
});
