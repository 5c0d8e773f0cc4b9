/**
 * The data dir is private: a dir made beforehand with `mkdir -p` (0755),
 * and files in it other users could read, are tightened when `kcm apiserver`
 * starts; what it creates (database, WAL, keys, kubeconfig) is 0600 in 0700
 * folders, so no other local user can read a Secret from the database file.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKcm } from './harness.js';

const mode = (p: string) => statSync(p).mode & 0o777;

function listModes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (p: string, rel: string) => {
    out.set(rel || '.', mode(p));
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) if (rel !== '' || ['db', 'pki', 'kubeconfig'].includes(n)) walk(join(p, n), rel ? `${rel}/${n}` : n);
  };
  walk(dir, '');
  return out;
}

describe('data dir permissions of kcm apiserver', () => {
  it('keeps the database, WAL, keys and kubeconfig private, tightening a data dir made by mkdir -p', async () => {
    const base = mkdtempSync(join(tmpdir(), 'kcm-perm-e2e-'));
    const dataDir = join(base, 'data');
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o755);
    try {
      let kcm = await startKcm('apiserver', [], { dataDir });
      await kcm.kubectlOk(['create', 'secret', 'generic', 'token', '--from-literal=password=hunter2']);
      const modes = listModes(dataDir);
      for (const [p, m] of modes) {
        const isDir = statSync(join(dataDir, p)).isDirectory();
        // Certificates are public; everything else is private.
        if (p.endsWith('.crt')) assert.ok((m & 0o022) === 0, `${p} is 0${m.toString(8)}`);
        else assert.equal(m, isDir ? 0o700 : 0o600, `${p} is 0${m.toString(8)}`);
      }
      for (const want of ['db', 'db/kcm.db', 'db/kcm.db-wal', 'pki', 'pki/ca.key', 'kubeconfig']) assert.ok(modes.has(want), `${want} exists`);
      await kcm.stop({ keepDataDir: true });

      // Someone loosens things between runs: the next start tightens them again.
      chmodSync(dataDir, 0o755);
      chmodSync(join(dataDir, 'db'), 0o755);
      chmodSync(join(dataDir, 'db', 'kcm.db'), 0o644);
      writeFileSync(join(dataDir, 'pki', 'extra.pem'), 'x', { mode: 0o644 });
      chmodSync(join(dataDir, 'pki', 'extra.pem'), 0o644);
      kcm = await startKcm('apiserver', [], { dataDir });
      assert.match(kcm.stderr() + kcm.stdout(), /tightened the permissions/);
      for (const [p, m] of listModes(dataDir)) {
        const isDir = statSync(join(dataDir, p)).isDirectory();
        if (p.endsWith('.crt')) assert.ok((m & 0o022) === 0, `${p} after restart is 0${m.toString(8)}`);
        else assert.equal(m, isDir ? 0o700 : 0o600, `${p} after restart is 0${m.toString(8)}`);
      }
      await kcm.stop({ keepDataDir: true });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
