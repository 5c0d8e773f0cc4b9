#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with Node's test runner.
// Usage: node scripts/run-tests.mjs [--only src|test/integration|test/e2e] [filter...]
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');
const args = process.argv.slice(2);
let only = [];
const filters = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--only') only.push(args[++i]);
  else filters.push(args[i]);
}
if (only.length === 0) only = ['src', 'test'];

function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const files = only
  .flatMap((d) => walk(join(dist, d), []))
  .filter((f) => filters.length === 0 || filters.some((s) => relative(dist, f).includes(s)))
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
