import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStorage } from './sqlite.js';

const writerScript = fileURLToPath(new URL('./durability-writer.js', import.meta.url));

/** Runs the writer until it has acknowledged `atLeast` writes (or `maxMs` passed), then SIGKILLs it. */
function runAndKill(dir: string, atLeast: number, maxMs: number): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writerScript, dir, '32'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Map<string, number>();
    let buf = '';
    let stderr = '';
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(kill, maxMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const [key, rev] = line.split(' ');
        if (key && rev) acked.set(key, Number(rev));
      }
      if (acked.size >= atLeast) kill();
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer exited on its own (code ${code}): ${stderr}`));
      else resolve(acked);
    });
  });
}

describe('sqlite durability', () => {
  it('keeps every acknowledged write after the writer is killed with SIGKILL mid-stream', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-durability-'));
    try {
      let allAcked = new Map<string, number>();
      // two kill/reopen rounds: the second also checks revisions continue after a crash
      for (let round = 0; round < 2; round++) {
        const acked = await runAndKill(dir, 1500, 4000);
        assert.ok(acked.size > 100, `the writer acknowledged only ${acked.size} writes`);
        allAcked = new Map([...allAcked, ...acked]);
        const s = openSqliteStorage(dir);
        try {
          const maxAcked = Math.max(...allAcked.values());
          for (const [key, rev] of allAcked) {
            const got = await s.get(key);
            assert.ok(got, `acknowledged write ${key}@${rev} is missing after the crash`);
            assert.equal(got.revision, rev);
          }
          assert.ok(s.currentRevision() >= maxAcked);
          const next = await s.create(`/registry/configmaps/default/after-${round}`, { metadata: { name: `after-${round}` } });
          assert.ok(next.revision > maxAcked, `new revision ${next.revision} must exceed ${maxAcked}`);
          allAcked.set(next.key, next.revision);
        } finally {
          await s.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
