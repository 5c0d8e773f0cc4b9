import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock/clock.js';
import { newMemoryStorage } from './memory.js';
import { openSqliteStorage } from './sqlite.js';
import { newCachedStorage } from './watch-cache.js';
import { runStorageSuite } from './storage.suite.js';
import { StorageError, type Storage, type StorageEvent } from './storage.js';

runStorageSuite('watch cache over memory', async () => ({ storage: await newCachedStorage(newMemoryStorage()) }));

runStorageSuite('watch cache over sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kcm-cache-'));
  let storage: Storage = await newCachedStorage(openSqliteStorage(dir));
  return {
    storage,
    reopen: async () => {
      await storage.close();
      storage = await newCachedStorage(openSqliteStorage(dir));
      return storage;
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

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
});
