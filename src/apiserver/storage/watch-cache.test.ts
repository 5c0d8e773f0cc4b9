import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock/clock.js';
import { newMemoryStorage } from './memory.js';
import { openSqliteStorage } from './sqlite.js';
import { newCachedStorage, type CachedStorageOptions } from './watch-cache.js';
import { runStorageSuite } from './storage.suite.js';
import { StorageError, type Storage, type StorageEvent, type StoredObject } from './storage.js';
import { hasLazyList, LazyStoredObject } from './stored-object.js';

runStorageSuite('watch cache over memory', async () => ({ storage: await newCachedStorage(newMemoryStorage()) }));

/** A watch cache over a sqlite store in a new directory, reopened over the same directory. */
const overSqlite = (opts: CachedStorageOptions = {}) => async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kcm-cache-'));
  const open = () => newCachedStorage(openSqliteStorage(dir), opts);
  let storage: Storage = await open();
  return {
    storage,
    reopen: async () => {
      await storage.close();
      storage = await open();
      return storage;
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
};
runStorageSuite('watch cache over sqlite', overSqlite());
runStorageSuite('watch cache over sqlite, one namespace uncached', overSqlite({ uncachedPrefixes: ['/registry/pods/default/'] }));

/** A backend that counts calls and can break its watches. */
function spyBackend(inner: Storage) {
  const calls = { get: 0, list: 0, watch: 0 };
  const errorFns: ((err: Error) => void)[] = [];
  const spy: Storage = {
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    get: (k) => (calls.get++, inner.get(k)),
    list: (p, o) => (calls.list++, inner.list(p, o)),
    create: (k, o) => inner.create(k, o),
    update: (k, o, p) => inner.update(k, o, p),
    delete: (k, p) => inner.delete(k, p),
    watch: (p, r, on, onErr) => {
      calls.watch++;
      const h = inner.watch(p, r, on, onErr);
      if (onErr) errorFns.push((err) => (h.stop(), onErr(err)));
      return h;
    },
    compact: (r) => inner.compact(r),
    close: () => inner.close(),
  };
  if (hasLazyList(inner)) Object.assign(spy, { listLazy: (p: string) => inner.listLazy(p), lazyObject: (k: string, r: number) => inner.lazyObject(k, r) });
  return { spy, calls, breakWatches: (err: Error) => errorFns.splice(0).forEach((f) => f(err)) };
}

const settle = () => new Promise<void>((r) => setImmediate(r));
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });

describe('watch cache', () => {
  it('serves get and latest lists from memory and past revisions from the backend', async () => {
    const b = spyBackend(newMemoryStorage());
    await b.spy.create('/registry/configmaps/default/before', cm('before'));
    const c = await newCachedStorage(b.spy);
    assert.equal(b.calls.list, 1);
    await c.create('/registry/configmaps/default/a', cm('a'));
    assert.equal((await c.get('/registry/configmaps/default/a'))?.revision, 2);
    assert.equal((await c.list('/registry/configmaps/')).items.length, 2);
    assert.equal((await c.list('/registry/configmaps/', { revision: 2 })).items.length, 2);
    assert.equal(b.calls.get, 0);
    assert.equal(b.calls.list, 1);
    const past = await c.list('/registry/configmaps/', { revision: 1 });
    assert.deepEqual(past.items.map((i) => i.key), ['/registry/configmaps/default/before']);
    assert.equal(b.calls.list, 2);
    await c.close();
  });

  it('fans one backend watch out to many watchers', async () => {
    const b = spyBackend(newMemoryStorage());
    const c = await newCachedStorage(b.spy);
    const got: number[] = new Array(100).fill(0);
    const handles = got.map((_, i) => c.watch(i % 2 === 0 ? '/registry/configmaps/' : '/registry/secrets/', 0, () => got[i]!++));
    await c.create('/registry/configmaps/default/a', cm('a'));
    await settle();
    assert.equal(b.calls.watch, 1);
    assert.deepEqual(got, got.map((_, i) => (i % 2 === 0 ? 1 : 0)));
    handles.forEach((h) => h.stop());
    await c.close();
  });

  it('drops events older than the fresh window beyond the minimum and answers older watches with Compacted', async () => {
    const clock = new FakeClock();
    const backend = newMemoryStorage();
    const c = await newCachedStorage(backend, { clock, minEvents: 3, eventFreshMs: 75_000 });
    for (let i = 1; i <= 5; i++) await c.create(`/registry/configmaps/default/c${i}`, cm(`c${i}`));
    assert.equal(c.windowSize(), 5, 'fresh events are all kept');
    await clock.advance(76_000);
    await c.create('/registry/configmaps/default/c6', cm('c6'));
    assert.equal(c.windowSize(), 3);
    assert.throws(() => c.watch('/registry/', 2, () => {}), (e: unknown) => e instanceof StorageError && e.code === 'Compacted');
    const events: StorageEvent[] = [];
    c.watch('/registry/', 3, (e) => events.push(e));
    await settle();
    assert.deepEqual(events.map((e) => e.revision), [4, 5, 6]);
    assert.equal(backend.compactedRevision(), 0, 'the backend still has the history');
    await c.close();
  });

  it('keeps at most historyWindow events however fresh', async () => {
    const c = await newCachedStorage(newMemoryStorage(), { clock: new FakeClock(), historyWindow: 10, minEvents: 2 });
    for (let i = 0; i < 25; i++) await c.create(`/registry/configmaps/default/c${i}`, cm(`c${i}`));
    assert.equal(c.windowSize(), 10);
    assert.throws(() => c.watch('/registry/', 14, () => {}), (e: unknown) => e instanceof StorageError && e.code === 'Compacted');
    c.watch('/registry/', 15, () => {}).stop();
    await c.close();
  });

  it('ends its watchers, reads through, and re-initialises when the backend watch fails', async () => {
    const clock = new FakeClock();
    const b = spyBackend(newMemoryStorage());
    const c = await newCachedStorage(b.spy, { clock, retryMs: 1000 });
    const errors: Error[] = [];
    c.watch('/registry/', 0, () => {}, (e) => errors.push(e));
    await settle();
    b.breakWatches(new Error('backend watch lost'));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.message, 'backend watch lost');
    await b.spy.create('/registry/configmaps/default/a', cm('a'));
    const getsBefore = b.calls.get;
    assert.equal((await c.get('/registry/configmaps/default/a'))?.revision, 1);
    assert.equal(b.calls.get, getsBefore + 1, 'read went to the backend while the cache is down');
    await clock.advance(1000);
    await settle();
    assert.equal(b.calls.watch, 2);
    assert.equal((await c.get('/registry/configmaps/default/a'))?.revision, 1);
    assert.equal(b.calls.get, getsBefore + 1, 'served from the cache again');
    const events: StorageEvent[] = [];
    c.watch('/registry/', 1, (e) => events.push(e));
    await c.create('/registry/configmaps/default/b', cm('b'));
    await settle();
    assert.deepEqual(events.map((e) => `${e.type} ${e.revision}`), ['ADDED 2']);
    await c.close();
  });

  describe('over sqlite, after a restart', () => {
    /** A cache over a sqlite store that already holds configmaps c0..c{n-1} (c0 updated once). */
    async function restarted(n: number) {
      const dir = mkdtempSync(join(tmpdir(), 'kcm-cache-lazy-'));
      const first = openSqliteStorage(dir);
      for (let i = 0; i < n; i++) await first.create(`/registry/configmaps/default/c${String(i).padStart(4, '0')}`, cm(`c${i}`));
      await first.update('/registry/configmaps/default/c0000', { ...cm('c0'), data: { v: '2' } });
      await first.close();
      const c = await newCachedStorage(openSqliteStorage(dir));
      return { c, dir, done: async () => (await c.close(), rmSync(dir, { recursive: true, force: true })) };
    }
    const unread = (o: StoredObject | undefined) => o instanceof LazyStoredObject && o.pendingReader() !== undefined;
    const undecoded = (o: StoredObject) => (o as unknown as { obj: unknown }).obj === undefined;

    it('loads keys and revisions only, and reads and decodes each object on first use', async () => {
      const { c, done } = await restarted(3);
      try {
        const got = await c.get('/registry/configmaps/default/c0001');
        assert.ok(unread(got), 'a get hands out the object unread');
        assert.equal(got!.object.metadata?.name, 'c1');
        assert.equal(got!.object.metadata?.resourceVersion, '2');
        assert.ok(Object.isFrozen(got!.object.metadata));
        assert.equal((await c.get('/registry/configmaps/default/c0001'))!.object, got!.object, 'decoded once and shared');
        assert.equal(((await c.get('/registry/configmaps/default/c0000'))!.object.data as { v?: string })?.v, '2');
      } finally {
        await done();
      }
    });

    it('reads the values of a list in one batch when the first is read, and none for a list nobody reads', async () => {
      const { c, done } = await restarted(50);
      try {
        const keysOnly = await c.list('/registry/configmaps/');
        assert.equal(keysOnly.items.length, 50);
        assert.ok(keysOnly.items.every(unread));
        const l = await c.list('/registry/configmaps/', { limit: 20 });
        assert.equal(l.items[0]!.object.metadata?.name, 'c0');
        assert.ok(l.items.every((i) => !unread(i)), 'the whole page was read with the first');
        assert.ok(l.items.slice(1).every(undecoded), 'but only the first was decoded');
        assert.ok(keysOnly.items.slice(20).every(unread), 'objects beyond the page are still unread');
        const filtered = await c.list('/registry/configmaps/', { filter: (o) => o.metadata?.name === 'c42' });
        assert.deepEqual(filtered.items.map((i) => i.key), ['/registry/configmaps/default/c0042']);
        assert.ok(keysOnly.items.every((i) => !unread(i)), 'a filter reads what it walks');
      } finally {
        await done();
      }
    });

    it('keeps an unread object readable after a write replaces it and compaction removes its row', async () => {
      const { c, done } = await restarted(3);
      try {
        const before = await c.list('/registry/configmaps/');
        assert.ok(before.items.every(unread));
        await c.update('/registry/configmaps/default/c0001', { ...cm('c1'), data: { v: 'new' } });
        await c.delete('/registry/configmaps/default/c0002');
        await c.compact(c.currentRevision());
        assert.equal(before.items[1]!.object.data, undefined);
        assert.equal(before.items[1]!.object.metadata?.resourceVersion, '2');
        assert.equal(before.items[2]!.object.metadata?.name, 'c2');
        assert.equal(((await c.get('/registry/configmaps/default/c0001'))!.object.data as { v?: string })?.v, 'new');
        assert.equal(await c.get('/registry/configmaps/default/c0002'), undefined);
      } finally {
        await done();
      }
    });

    it('holds no replaced value in its window, and replays events as live watchers got them', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kcm-cache-thin-'));
      const c = await newCachedStorage(openSqliteStorage(dir));
      try {
        const from = c.currentRevision();
        const live: StorageEvent[] = [];
        const h = c.watch('/registry/configmaps/', from, (e) => live.push(e));
        const a = '/registry/configmaps/default/a';
        await c.create(a, cm('a'));
        await c.update(a, { ...cm('a'), data: { v: '1' } });
        await c.update(a, { ...cm('a'), data: { v: '2' } });
        await c.create('/registry/configmaps/default/b', cm('b'));
        await c.delete(a);
        await settle();
        h.stop();
        assert.deepEqual(live.map((e) => e.type), ['ADDED', 'MODIFIED', 'MODIFIED', 'ADDED', 'DELETED']);
        assert.equal(c.windowSize(), 5);
        assert.equal(c.windowValues(), 1, "only b's value, still its latest: a's were replaced or deleted");
        const replayed: StorageEvent[] = [];
        c.watch('/registry/configmaps/', from, (e) => replayed.push(e));
        await settle();
        assert.deepEqual(replayed, live);
        assert.equal((replayed[2] as { prevObject: unknown }).prevObject, replayed[1]!.object, "an event's previous object is the one before it, read once");
        assert.ok(Object.isFrozen(replayed[0]!.object));
        const fromMiddle: StorageEvent[] = [];
        c.watch(a, live[1]!.revision, (e) => fromMiddle.push(e));
        await settle();
        assert.deepEqual(fromMiddle, [live[2], live[4]]);
      } finally {
        await c.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('fails a first read after close with Closed', async () => {
      const { c, dir } = await restarted(2);
      const got = await c.get('/registry/configmaps/default/c0001');
      await c.close();
      assert.throws(() => got!.object, (e: unknown) => e instanceof StorageError && e.code === 'Closed');
      rmSync(dir, { recursive: true, force: true });
    });
  });

  describe('uncached prefixes (events, as kube-apiserver keeps no watch cache for them)', () => {
    const ev = (name: string, n = 1) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'default' }, count: n });
    async function setup(backendKind: 'sqlite' | 'memory') {
      const dir = mkdtempSync(join(tmpdir(), 'kcm-cache-uncached-'));
      const { spy, calls } = spyBackend(backendKind === 'sqlite' ? openSqliteStorage(dir) : newMemoryStorage());
      const c = await newCachedStorage(spy, { uncachedPrefixes: ['/registry/events/'] });
      return { c, calls, done: async () => (await c.close(), rmSync(dir, { recursive: true, force: true })) };
    }

    it('keeps their writes out of the window and reads them from the backend; other keys stay cached', async () => {
      const { c, calls, done } = await setup('sqlite');
      try {
        await c.create('/registry/configmaps/default/a', cm('a'));
        await settle();
        const window = c.windowSize();
        const first = await c.create('/registry/events/default/e1', ev('e1'));
        await c.update('/registry/events/default/e1', ev('e1', 2), { revision: first.revision });
        await c.create('/registry/events/default/e2', ev('e2'));
        await settle();
        assert.equal(c.windowSize(), window, 'no window events for events');
        const before = { ...calls };
        assert.equal((await c.get('/registry/events/default/e1'))?.object.count, 2);
        const l = await c.list('/registry/events/default/');
        assert.deepEqual(l.items.map((o) => o.object.metadata?.name), ['e1', 'e2']);
        assert.equal(l.revision, c.currentRevision());
        assert.deepEqual([calls.get - before.get, calls.list - before.list], [1, 1], 'both from the backend');
        assert.equal((await c.get('/registry/configmaps/default/a'))?.object.metadata?.name, 'a');
        assert.equal(calls.get - before.get, 1, 'a configmap from the cache');
        // A list over every key (the object count metric) still has them.
        assert.deepEqual((await c.list('/registry/')).items.map((o) => o.key), ['/registry/configmaps/default/a', '/registry/events/default/e1', '/registry/events/default/e2']);
        await c.delete('/registry/events/default/e2');
        await settle();
        assert.deepEqual((await c.list('/registry/')).items.map((o) => o.key), ['/registry/configmaps/default/a', '/registry/events/default/e1']);
      } finally {
        await done();
      }
    });

    it('serves a watch of them, or of a prefix covering them, from the backend, replaying from an older revision', async () => {
      const { c, calls, done } = await setup('sqlite');
      try {
        const start = c.currentRevision();
        await c.create('/registry/events/default/e1', ev('e1'));
        await c.create('/registry/configmaps/default/a', cm('a'));
        await settle();
        const before = calls.watch;
        const seen: string[] = [];
        const h = c.watch('/registry/events/', start, (e) => seen.push(`${e.type} ${e.key}`));
        const all: string[] = [];
        const h2 = c.watch('/registry/', start, (e) => all.push(`${e.type} ${e.key}`));
        await c.create('/registry/events/default/e2', ev('e2'));
        await settle();
        assert.equal(calls.watch - before, 2);
        assert.deepEqual(seen, ['ADDED /registry/events/default/e1', 'ADDED /registry/events/default/e2']);
        assert.deepEqual(all, ['ADDED /registry/events/default/e1', 'ADDED /registry/configmaps/default/a', 'ADDED /registry/events/default/e2']);
        h.stop();
        h2.stop();
        // A watch of other keys is the cache's.
        c.watch('/registry/configmaps/', start, () => undefined).stop();
        assert.equal(calls.watch - before, 2);
      } finally {
        await done();
      }
    });

    it('caches everything over a backend that cannot read values lazily (memory)', async () => {
      const { c, calls, done } = await setup('memory');
      try {
        await c.create('/registry/events/default/e1', ev('e1'));
        await settle();
        const window = c.windowSize();
        assert.ok(window >= 1);
        const before = calls.get;
        assert.equal((await c.get('/registry/events/default/e1'))?.object.count, 1);
        assert.equal(calls.get, before);
      } finally {
        await done();
      }
    });
  });
});
