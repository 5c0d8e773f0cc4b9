#!/usr/bin/env node
// Runs every compiled benchmark (dist/bench/*.bench.js), each in its own
// process with --expose-gc, and prints a Markdown section (machine, date,
// results) to paste into bench/RESULTS.md. The side-by-side benchmarks run
// where the real v1.20 binaries are ($KCM_REAL_BIN, default /tmp/k8sbin;
// ../shared/tools/build-real-k8s.sh builds them); their kcm/real ratios are
// printed again together at the end.
// Usage: node scripts/run-bench.mjs [name-filter...]
import { readdirSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import os from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const dir = join(root, 'dist', 'bench');
const filters = process.argv.slice(2);
const files = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.bench.js'))
      .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
      .sort()
  : [];
if (files.length === 0) {
  console.error('run-bench: no benchmarks found in dist/bench (did tsc run?)');
  process.exit(1);
}
// bin/kcm.js runs the bundle only when no tsc wrote dist/src after it: rebuild a stale bundle here, or the benchmarks
// would silently measure the unbundled code (slower to load).
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : -1);
if (mtime(join(root, 'dist', '.tsbuildinfo')) > mtime(join(root, 'dist', 'bundle', 'kcm.js'))) {
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) {
    console.error('run-bench: the bundle did not build (scripts/bundle.mjs)');
    process.exit(1);
  }
}
const cpus = os.cpus();
console.log(`## ${new Date().toISOString().slice(0, 10)}: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`);
let failed = 0;
const ratios = [];
for (const f of files) {
  const script = `import(${JSON.stringify(join(dir, f))}).then(async (m) => { for (const l of await m.run()) console.log(l); }).catch((e) => { console.error(e); process.exit(1); })`;
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30 * 60 * 1000,
  });
  console.log(`### ${f.replace('.bench.js', '')}\n`);
  for (const line of (r.stdout || '').split('\n').filter(Boolean)) {
    console.log(`- ${line}`);
    const m = /^(.*?):.*?(kcm\/real .*)$/.exec(line);
    if (m) ratios.push(`${m[1]}: ${m[2]}`);
  }
  if (r.status !== 0) {
    failed++;
    console.log(`- FAILED (exit ${r.status ?? r.signal}): ${(r.stderr || '').split('\n').slice(0, 5).join(' ')}`);
  }
  console.log('');
}
if (ratios.length) {
  console.log('### kcm / real, side by side\n');
  for (const l of ratios) console.log(`- ${l}`);
  console.log('');
}
process.exit(failed ? 1 : 0);
