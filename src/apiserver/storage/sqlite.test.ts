import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStorage } from './sqlite.js';
import { runStorageSuite } from './storage.suite.js';
import type { Storage } from './storage.js';

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
  it('stores objects as JSON without resourceVersion in WAL mode with synchronous FULL', async () => {
    const dir = tempDir();
    try {
      const s = openSqliteStorage(dir);
      await s.create('/registry/pods/default/a', { metadata: { name: 'a', resourceVersion: '77' } });
      await s.close();
      const db = new Database(join(dir, 'kcm.db'), { readonly: true });
      const row = db.prepare('SELECT key, mod_revision, create_revision, version, deleted, value FROM kv').get() as Record<string, unknown>;
      assert.deepEqual(row, { key: '/registry/pods/default/a', mod_revision: 1, create_revision: 1, version: 1, deleted: 0, value: '{"metadata":{"name":"a"}}' });
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      db.close();
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
});
