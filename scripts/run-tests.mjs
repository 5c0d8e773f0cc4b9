#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js, and the example operator's
// examples/operator/dist/**/*.test.js) with Node's test runner.
// Usage: node scripts/run-tests.mjs [--only src|test/integration|test/e2e|examples] [--real] [filter...]
// --real: the controller scenarios of test/e2e against the real kube-apiserver and kube-scheduler
// in $KCM_REAL_BIN (default /tmp/k8sbin, built by ../shared/tools/build-real-k8s.sh) with
// `kcm controller-manager` and `kcm nodes` (test/e2e/real-cluster.ts), one file at a time.
// KCM_REAL_MODE=real-cm runs the real kube-controller-manager instead (the baseline), and
// KCM_REAL_MODE=real-cm-on-kcm runs the real kube-controller-manager on `kcm apiserver`.
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');
const args = process.argv.slice(2);
let only = [];
const filters = [];
let real = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--only') only.push(args[++i]);
  else if (args[i] === '--real') real = true;
  else filters.push(args[i]);
}
/** The scenario files that use test/e2e/cluster.ts or real-cluster.ts (and so run on a real API server too). */
const realScenarios = ['cronjob', 'dashboard-real', 'daemonset', 'deployment', 'endpoints', 'garbagecollector', 'job', 'namespace', 'nodelifecycle', 'replicaset', 'statefulset', 'volumes-and-mirroring'];
if (real) {
  process.env.KCM_REAL_BIN ??= '/tmp/k8sbin';
  for (const b of ['kube-apiserver', 'kube-scheduler']) {
    if (!existsSync(join(process.env.KCM_REAL_BIN, b))) {
      console.error(`run-tests --real: ${join(process.env.KCM_REAL_BIN, b)} not found; build it with ../shared/tools/build-real-k8s.sh or set KCM_REAL_BIN`);
      process.exit(2);
    }
  }
  only = ['test/e2e'];
  if (filters.length === 0) filters.push(...realScenarios.map((n) => `e2e/${n}.test.js`));
  process.env.KCM_TEST_CONCURRENCY ??= '1';
}
if (only.length === 0) only = ['src', 'test', 'examples'];

function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

/** Where the compiled tests of `d` are: dist/<d>, or each example's own dist/. */
function testDirs(d) {
  if (d === 'examples') return ['operator', 'lab'].map((e) => join(root, 'examples', e, 'dist'));
  return [join(dist, d)];
}

const files = only
  .flatMap((d) => testDirs(d).flatMap((dir) => walk(dir, [])))
  .filter((f) => filters.length === 0 || filters.some((s) => relative(dist, f).includes(s) || relative(root, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files found (did tsc run?)');
  process.exit(1);
}
const concurrency = process.env.KCM_TEST_CONCURRENCY ?? '2';
const child = spawn(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', '--enable-source-maps', ...files],
  { stdio: 'inherit', cwd: root },
);
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
