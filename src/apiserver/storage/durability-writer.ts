/**
 * Child process of durability.test.ts: opens the sqlite storage in the
 * directory given as argv[2] and creates objects as fast as it can, keeping
 * `argv[3]` (default 32) writes in flight. After each write is acknowledged
 * (its promise resolved) it prints `<key> <revision>` on stdout, so every
 * printed line is a write the storage promised to keep. Runs until killed.
 */
import { openSqliteStorage } from './sqlite.js';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: durability-writer <dir> [inflight]\n');
  process.exit(2);
}
const inflight = Number(process.argv[3] ?? 32) || 32;
const storage = openSqliteStorage(dir);
const payload = 'x'.repeat(1024);
let n = 0;

async function writer(id: number): Promise<void> {
  for (;;) {
    const key = `/registry/configmaps/default/w${process.pid}-${id}-${n++}`;
    const r = await storage.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key.split('/').pop(), namespace: 'default' }, data: { payload } });
    process.stdout.write(`${key} ${r.revision}\n`);
  }
}

process.stdout.write('ready\n');
for (let i = 0; i < inflight; i++) {
  writer(i).catch((err: unknown) => {
    process.stderr.write(`writer failed: ${String(err)}\n`);
    process.exit(1);
  });
}
