import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStorage } from './sqlite.js';
import { runStorageSuite } from './storage.suite.js';
import type { Storage } from './storage.js';
import { LazyStoredObject, hasLazyList, jsonTextOf, rememberView, storedText } from './stored-object.js';
import { setLogOutput } from '../../util/log/logger.js';

function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const restore = setLogOutput(() => {});
  return fn().finally(() => setLogOutput(restore));
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'kcm-sqlite-'));
}

runStorageSuite('sqlite', async () => {
  const dir = tempDir();
  let storage: Storage = openSqliteStorage(dir);
  return {
    storage,
    reopen: async () => {
      await storage.close();
      storage = openSqliteStorage(dir);
      return storage;
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('sqlite storage', () => {
  it('stores objects as the JSON of what it returns, resourceVersion last in metadata, in WAL mode with synchronous FULL', async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir);
      const created = await s.create('/registry/pods/default/a', { metadata: { resourceVersion: '77', name: 'a' }, spec: { x: 1 } });
      assert.equal(JSON.stringify(created.object), '{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"x":1}}');
      await s.close();
      const db = new Database(join(dir, 'kcm.db'), { readonly: true });
      const row = db.prepare('SELECT key, mod_revision, create_revision, version, deleted, value FROM kv').get() as Record<string, unknown>;
      assert.deepEqual(row, { key: '/registry/pods/default/a', mod_revision: 1, create_revision: 1, version: 1, deleted: 0, value: '{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"x":1}}' });
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives a write's stored text as the exact JSON of the object and of a view of it, for the latest batch only", async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir);
      const a = await s.create('/registry/pods/default/a', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', labels: { x: '<&>' } }, spec: { n: 1 } });
      assert.equal(storedText(a.object), JSON.stringify(a.object));
      const view = { ...a.object, apiVersion: 'v1', kind: 'Pod' };
      rememberView(view, a.object);
      assert.equal(jsonTextOf(view), JSON.stringify(view));
      const reordered = { kind: 'Pod', ...a.object };
      rememberView(reordered, a.object);
      assert.notEqual(JSON.stringify(reordered), JSON.stringify(a.object));
      assert.equal(jsonTextOf(reordered), undefined, 'a view with its fields in another order is encoded afresh');
      const changed = { ...a.object, spec: { n: 2 } };
      rememberView(changed, a.object);
      assert.equal(jsonTextOf(changed), undefined, 'a view whose field was replaced is encoded afresh');
      const b = await s.update('/registry/pods/default/a', { ...a.object, spec: { n: 3 } }, { revision: a.revision });
      assert.equal(storedText(b.object), JSON.stringify(b.object));
      assert.equal(storedText(a.object), undefined, "an earlier batch's texts are dropped");
      assert.equal(jsonTextOf(view), undefined);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps no last object of keys under unkeptPrefixes, and still gives their updates the previous object', async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir, { unkeptPrefixes: ['/registry/events/'] });
      const latest = (s as unknown as { latest: Map<string, unknown> }).latest;
      const seen: { type: string; prev?: unknown }[] = [];
      const w = await s.watch('/registry/', 0, (e) => seen.push({ type: e.type, prev: e.type === 'MODIFIED' ? e.prevObject.metadata?.resourceVersion : undefined }));
      const e1 = await s.create('/registry/events/default/e1', { metadata: { name: 'e1' }, count: 1 });
      await s.create('/registry/pods/default/p', { metadata: { name: 'p' } });
      assert.deepEqual([...latest.keys()], ['/registry/pods/default/p']);
      await s.update('/registry/events/default/e1', { metadata: { name: 'e1' }, count: 2 }, { revision: e1.revision });
      assert.deepEqual(seen, [{ type: 'ADDED', prev: undefined }, { type: 'ADDED', prev: undefined }, { type: 'MODIFIED', prev: String(e1.revision) }]);
      assert.deepEqual([...latest.keys()], ['/registry/pods/default/p']);
      w.stop();
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('commits writes issued in the same tick in one transaction', async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir);
      const db = (s as unknown as { db: Database.Database }).db;
      let commits = 0;
      const orig = db.transaction.bind(db);
      // count transactions run by the storage
      (db as unknown as { transaction: typeof db.transaction }).transaction = ((fn: (...a: unknown[]) => unknown) => {
        const tx = orig(fn);
        return Object.assign((...a: unknown[]) => {
          commits++;
          return tx(...a);
        }, tx);
      }) as typeof db.transaction;
      const writes = [];
      for (let i = 0; i < 50; i++) writes.push(s.create(`/registry/pods/default/p${i}`, { metadata: { name: `p${i}` } }));
      const done = await Promise.all(writes);
      assert.equal(commits, 1);
      assert.deepEqual(done.map((d) => d.revision), Array.from({ length: 50 }, (_, i) => i + 1));
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects only the write whose object is not JSON', async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir);
      const bad = s.create('/registry/pods/default/bad', { metadata: { name: 'bad' }, n: 1n } as never);
      const good = s.create('/registry/pods/default/good', { metadata: { name: 'good' } });
      await assert.rejects(bad, (err: unknown) => (err as { code?: string }).code === 'Internal');
      assert.equal((await good).revision, 1);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('index image', () => {
    const cm = (name: string, v = 1) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { v: String(v) } });
    const key = (name: string) => `/registry/configmaps/default/${name}`;
    /** Ends a storage as a crash would: its database handle closes, nothing is written at close. */
    const crash = (s: Storage) => (s as unknown as { db: Database.Database }).db.close();
    const imageRow = (dir: string) => {
      const db = new Database(join(dir, 'kcm.db'), { readonly: true });
      try {
        return db.prepare('SELECT revision, compacted, entries FROM index_image').get() as { revision: number; compacted: number; entries: number } | undefined;
      } finally {
        db.close();
      }
    };
    const state = async (s: Storage) => (await s.list('/registry/')).items.map((i) => `${i.key}@${i.revision}=${String(i.object.data && (i.object.data as Record<string, string>).v)}`);

    it('is written at close and read at open, with the rows written after it (a crash) replayed', async () => {
      const dir = tempDir();
      try {
        const s1 = openSqliteStorage(dir);
        for (let i = 0; i < 5; i++) await s1.create(key(`c${i}`), cm(`c${i}`));
        await s1.update(key('c1'), cm('c1', 2));
        await s1.delete(key('c2'));
        await s1.close();
        assert.deepEqual(imageRow(dir), { revision: 7, compacted: 0, entries: 7 });

        const s2 = openSqliteStorage(dir);
        assert.equal(s2.currentRevision(), 7);
        await s2.update(key('c3'), cm('c3', 2));
        await s2.create(key('c2'), cm('c2', 3));
        await s2.delete(key('c4'));
        const expected = await state(s2);
        crash(s2);
        assert.equal(imageRow(dir)?.revision, 7, 'no image written by a crashed store');

        const s3 = openSqliteStorage(dir);
        assert.equal(s3.currentRevision(), 10);
        assert.deepEqual(await state(s3), expected);
        assert.deepEqual((await s3.list('/registry/', { revision: 6 })).items.map((i) => i.key), [key('c0'), key('c1'), key('c2'), key('c3'), key('c4')]);
        assert.equal((await s3.create(key('c5'), cm('c5'))).revision, 11);
        await s3.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('is rewritten by compaction, so a key deleted and compacted away stays deleted after a crash', async () => {
      const dir = tempDir();
      try {
        const s1 = openSqliteStorage(dir);
        await s1.create(key('a'), cm('a'));
        await s1.create(key('b'), cm('b'));
        await s1.close();
        const s2 = openSqliteStorage(dir);
        await s2.delete(key('a'));
        await s2.update(key('b'), cm('b', 2));
        await s2.compact(4);
        assert.deepEqual(imageRow(dir), { revision: 4, compacted: 4, entries: 1 });
        await s2.create(key('c'), cm('c'));
        crash(s2);
        const s3 = openSqliteStorage(dir);
        assert.deepEqual(await state(s3), [`${key('b')}@4=2`, `${key('c')}@5=1`]);
        assert.equal(s3.compactedRevision(), 4);
        await s3.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('is ignored, and the revision log scanned, when it does not match the log', async () => {
      const dir = tempDir();
      try {
        const s1 = openSqliteStorage(dir);
        for (let i = 0; i < 4; i++) await s1.create(key(`c${i}`), cm(`c${i}`));
        await s1.close();
        const tamper = (sql: string) => {
          const db = new Database(join(dir, 'kcm.db'));
          db.exec(sql);
          db.close();
        };
        // a compaction the image has not seen (an older kcm compacted)
        tamper(`DELETE FROM kv WHERE mod_revision = 1; INSERT OR REPLACE INTO meta (name, value) VALUES ('compacted', 1)`);
        let s = openSqliteStorage(dir);
        assert.deepEqual((await s.list('/registry/')).items.map((i) => i.key), [key('c1'), key('c2'), key('c3')]);
        await s.close();
        // the last row of the image gone from the log
        tamper(`DELETE FROM kv WHERE mod_revision = 4`);
        s = openSqliteStorage(dir);
        assert.deepEqual((await s.list('/registry/')).items.map((i) => i.key), [key('c1'), key('c2')]);
        await s.close();
        // an unreadable image
        tamper(`UPDATE index_image SET numbers = x'00'`);
        s = openSqliteStorage(dir);
        assert.deepEqual((await s.list('/registry/')).items.map((i) => i.key), [key('c1'), key('c2')]);
        await s.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('lists the latest state for a cache without reading values, and reads each on first use', async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir);
      await s.create('/registry/pods/default/a', { metadata: { name: 'a' } });
      await s.create('/registry/pods/default/b', { metadata: { name: 'b' } });
      await s.delete('/registry/pods/default/b');
      assert.ok(hasLazyList(s));
      const l = s.listLazy('/registry/pods/');
      assert.deepEqual(l.items.map((i) => [i.key, i.revision]), [['/registry/pods/default/a', 1]]);
      const a = l.items[0] as LazyStoredObject;
      assert.ok(a.pendingReader(), 'not read yet');
      assert.equal(a.object.metadata?.resourceVersion, '1');
      assert.ok(Object.isFrozen(a.object));
      assert.equal(a.pendingReader(), undefined);
      assert.equal(a.object, a.object, 'decoded once, then shared');
      const unread = s.listLazy('/registry/pods/').items[0]!;
      await s.close();
      assert.throws(() => unread.object, (err: unknown) => (err as { code?: string }).code === 'Closed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the write-ahead log sync', () => {
    /** A storage whose WAL syncs complete when the test says. */
    function manualSync(dir: string) {
      const syncs: ((err?: Error) => void)[] = [];
      const s = openSqliteStorage(dir, { syncWal: (done) => syncs.push(done) });
      return { s, syncs };
    }
    const key = (n: string) => `/registry/configmaps/default/${n}`;
    const cm = (n: string, v = '1') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n }, data: { v } });
    const tick = () => new Promise<void>((r) => setImmediate(r));
    /** Lets `writes` commit (one batch), completes the sync that started for them, and waits for them. */
    async function synced<T>(syncs: ((err?: Error) => void)[], writes: Promise<T>): Promise<T> {
      await tick();
      syncs[syncs.length - 1]!();
      return writes;
    }

    it('acknowledges, shows and dispatches a committed batch only after a sync that covers it, in revision order', async () => {
      const dir = tempDir();
      try {
        const { s, syncs } = manualSync(dir);
        const settled: string[] = [];
        const track = <T>(name: string, p: Promise<T>) =>
          p.then(
            (v) => (settled.push(name), v),
            (e: unknown) => (settled.push(`${name}:${(e as { code?: string }).code}`), undefined),
          );
        const events: string[] = [];
        s.watch('/registry/', 0, (e) => events.push(`${e.type} ${e.key.split('/').pop()} ${e.revision}`));
        const a = track('a', s.create(key('a'), cm('a')));
        await tick();
        assert.equal(syncs.length, 1, 'the first batch is committed and its sync started');
        assert.equal(s.currentRevision(), 0);
        assert.equal(await s.get(key('a')), undefined, 'not readable before the sync');
        assert.deepEqual((await s.list('/registry/')).items, []);
        assert.ok(hasLazyList(s));
        assert.deepEqual(s.listLazy('/registry/').items, []);
        // Committed while the first sync runs, checked against the unsynced create: a sync of its own.
        const again = track('a-again', s.create(key('a'), cm('a')));
        const b = track('b', s.create(key('b'), cm('b')));
        await tick();
        assert.equal(syncs.length, 2);
        // A third batch waits: two syncs run at most.
        const c = track('c', s.update(key('a'), cm('a', '2'), { revision: 1 }));
        await tick();
        assert.equal(syncs.length, 2);
        assert.deepEqual(settled, []);
        assert.deepEqual(events, []);
        // A watch started now replays nothing unsynced.
        const late: number[] = [];
        s.watch('/registry/', 0, (e) => late.push(e.revision));
        await tick();
        assert.deepEqual(late, []);

        // The second sync ends first: it covers the first batch too (written before it started).
        syncs[1]!();
        await Promise.all([a, again, b]);
        assert.deepEqual(settled.sort(), ['a', 'a-again:KeyExists', 'b']);
        assert.equal(s.currentRevision(), 2);
        assert.equal(((await s.get(key('a')))?.object as { data?: Record<string, string> } | undefined)?.data?.['v'], '1');
        assert.deepEqual(events, ['ADDED a 1', 'ADDED b 2']);
        assert.equal(syncs.length, 3, 'the waiting batch gets the free sync');
        syncs[0]!();
        await tick();
        assert.equal(settled.length, 3, 'the first sync ending late changes nothing');
        syncs[2]!();
        await c;
        assert.deepEqual(events, ['ADDED a 1', 'ADDED b 2', 'MODIFIED a 3']);
        assert.deepEqual(late, [1, 2, 3], 'the late watcher gets each write once');
        assert.equal(s.currentRevision(), 3);
        assert.equal(syncs.length, 3);
        await s.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('lists for a cache the synced state while later writes await their sync', async () => {
      const dir = tempDir();
      try {
        const { s, syncs } = manualSync(dir);
        await synced(syncs, Promise.all([s.create(key('a'), cm('a')), s.create(key('b'), cm('b'))]));
        const later = Promise.all([s.update(key('a'), cm('a', '2')), s.delete(key('b')), s.create(key('c'), cm('c'))]);
        await tick();
        assert.ok(hasLazyList(s));
        const items = s.listLazy('/registry/').items;
        assert.deepEqual(items.map((i) => [i.key, i.revision]), [[key('a'), 1], [key('b'), 2]]);
        assert.equal((items[0]!.object as { data?: Record<string, string> }).data?.['v'], '1');
        syncs[1]!();
        await later;
        assert.deepEqual(s.listLazy('/registry/').items.map((i) => [i.key, i.revision]), [[key('a'), 3], [key('c'), 5]]);
        await s.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('compacts the readable history while writes await their sync, and reopens with them', async () => {
      const dir = tempDir();
      try {
        const { s, syncs } = manualSync(dir);
        await synced(syncs, Promise.all([s.create(key('a'), cm('a')), s.create(key('b'), cm('b'))]));
        await synced(syncs, s.update(key('a'), cm('a', '2')));
        // Unsynced: b deleted and created again, a updated.
        const later = Promise.all([s.delete(key('b')), s.update(key('a'), cm('a', '3'))]);
        await tick();
        const recreated = s.create(key('b'), cm('b', '2'));
        await tick();
        await s.compact(3);
        assert.equal(s.compactedRevision(), 3);
        assert.equal(((await s.get(key('a')))?.object as { data?: Record<string, string> }).data?.['v'], '2', 'the readable state is unchanged');
        assert.equal((await s.get(key('b')))?.revision, 2);
        const events: string[] = [];
        s.watch('/registry/', 3, (e) => events.push(`${e.type} ${e.key.split('/').pop()} ${e.revision}`));
        syncs[2]!();
        syncs[3]!();
        await later;
        await recreated;
        assert.deepEqual(events, ['DELETED b 4', 'MODIFIED a 5', 'ADDED b 6']);
        await s.close();
        const again = openSqliteStorage(dir, { syncWal: (d) => d() });
        assert.deepEqual((await again.list('/registry/')).items.map((i) => [i.key, i.revision]), [[key('a'), 5], [key('b'), 6]]);
        assert.equal(again.compactedRevision(), 3);
        await again.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('fails the writes of a failed sync, which stay written and seen by watchers', async () => {
      const dir = tempDir();
      try {
        const { s, syncs } = manualSync(dir);
        const events: string[] = [];
        s.watch('/registry/', 0, (e) => events.push(`${e.type} ${e.revision}`));
        const a = s.create(key('a'), cm('a')).then(
          () => assert.fail('acknowledged'),
          (err: unknown) => err as { code?: string; message: string },
        );
        await quietly(async () => {
          await tick();
          syncs[0]!(new Error('EIO: i/o error, fdatasync'));
          const err = await a;
          assert.equal(err.code, 'Internal');
          assert.match(err.message, /could not be synced to disk.*EIO/);
        });
        assert.deepEqual(events, ['ADDED 1']);
        assert.equal((await s.get(key('a')))?.revision, 1);
        // the next write syncs again
        assert.equal((await synced(syncs, s.create(key('b'), cm('b')))).revision, 2);
        await s.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('closes after the unsynced writes are synced, refusing new ones meanwhile', async () => {
      const dir = tempDir();
      try {
        const { s, syncs } = manualSync(dir);
        const a = s.create(key('a'), cm('a'));
        await tick();
        const closed = s.close();
        await assert.rejects(s.create(key('b'), cm('b')), (err: unknown) => (err as { code?: string }).code === 'Closed');
        let done = false;
        void closed.then(() => (done = true));
        await tick();
        assert.equal(done, false, 'close waits for the sync');
        syncs[0]!();
        assert.equal((await a).revision, 1);
        await closed;
        const again = openSqliteStorage(dir, { syncWal: (d) => d() });
        assert.equal((await again.get(key('a')))?.revision, 1);
        assert.equal(await again.get(key('b')), undefined);
        await again.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('fdatasyncs the WAL file by default before acknowledging, once per group of batches', async () => {
      const dir = tempDir();
      const real = fs.fdatasync;
      const synced: number[] = [];
      const ackedAtSync: number[] = [];
      let acked = 0;
      (fs as { fdatasync: typeof fs.fdatasync }).fdatasync = ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
        synced.push(fs.fstatSync(fd).ino);
        ackedAtSync.push(acked);
        real(fd, cb);
      }) as typeof fs.fdatasync;
      syncBuiltinESMExports();
      try {
        const s = openSqliteStorage(dir);
        for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 20 }, (_, j) => s.create(key(`c${i}-${j}`), cm('x')).then(() => acked++)));
        assert.equal(acked, 60);
        assert.equal(synced.length, 3, 'one sync per awaited batch');
        assert.deepEqual(ackedAtSync, [0, 20, 40], 'each batch acknowledged after its sync');
        const wal = fs.statSync(join(dir, 'kcm.db-wal')).ino;
        assert.deepEqual(synced, [wal, wal, wal]);
        await s.close();
        const db = new Database(join(dir, 'kcm.db'), { readonly: true });
        assert.equal(db.prepare('SELECT count(*) FROM kv').pluck().get() as number, 60);
        db.close();
      } finally {
        (fs as { fdatasync: typeof fs.fdatasync }).fdatasync = real;
        syncBuiltinESMExports();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
