import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStorage } from './sqlite.js';
import { runStorageSuite } from './storage.suite.js';
import type { Storage } from './storage.js';
import { LazyStoredObject, hasLazyList, jsonTextOf, rememberView, storedText } from './stored-object.js';

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
});
