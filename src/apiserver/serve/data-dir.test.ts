import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { securePrivateDataDir, usePrivateUmask } from './data-dir.js';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('data dir permissions', () => {
  let base: string;
  before(() => {
    base = mkdtempSync(join(tmpdir(), 'kcm-perm-'));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('creates a missing data dir 0700', () => {
    const dir = join(base, 'new', 'data');
    securePrivateDataDir(dir);
    assert.equal(mode(dir), 0o700);
  });

  it('tightens a data dir made by mkdir -p and the database, keys and kubeconfig in it, logging each change', () => {
    const dir = join(base, 'existing');
    mkdirSync(join(dir, 'db'), { recursive: true });
    mkdirSync(join(dir, 'pki'), { recursive: true });
    mkdirSync(join(dir, 'other'), { recursive: true });
    for (const [p, m] of [
      [dir, 0o755],
      [join(dir, 'db'), 0o755],
      [join(dir, 'pki'), 0o750],
      [join(dir, 'other'), 0o755],
    ] as const)
      chmodSync(p, m);
    for (const f of ['db/kcm.db', 'db/kcm.db-wal', 'db/kcm.db-shm', 'pki/ca.key', 'kubeconfig', 'other/notes.txt']) {
      writeFileSync(join(dir, f), 'x');
      chmodSync(join(dir, f), 0o644);
    }
    chmodSync(join(dir, 'pki', 'ca.key'), 0o600);
    symlinkSync('/etc/hostname', join(dir, 'db', 'link'));
    const lines: string[] = [];
    const log = { info: (fields: Record<string, unknown>, msg: string) => lines.push(`${msg} ${String(fields.path)}`) } as never;
    const changed = securePrivateDataDir(dir, log);
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(join(dir, 'db')), 0o700);
    assert.equal(mode(join(dir, 'pki')), 0o700);
    for (const f of ['db/kcm.db', 'db/kcm.db-wal', 'db/kcm.db-shm', 'pki/ca.key', 'kubeconfig']) assert.equal(mode(join(dir, f)), 0o600, f);
    // Not kcm's: left alone; a link is not followed.
    assert.equal(mode(join(dir, 'other')), 0o755);
    assert.equal(mode(join(dir, 'other', 'notes.txt')), 0o644);
    assert.equal(changed.length, 7);
    assert.equal(lines.length, 7);
    assert.ok(lines.every((l) => l.startsWith('tightened the permissions')));
    assert.deepEqual(securePrivateDataDir(dir, log), []);
  });

  it('makes files the process creates afterwards private', () => {
    const prev = usePrivateUmask();
    try {
      const f = join(base, 'created-after');
      writeFileSync(f, 'secret');
      assert.equal(mode(f), 0o600);
    } finally {
      process.umask(prev);
    }
  });
});
