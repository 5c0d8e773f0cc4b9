#!/usr/bin/env node
/**
 * `npm run conformance:upstream`: the upstream Kubernetes v1.20 [Conformance]
 * e2e tests against `kcm up`, one test per e2e.test process, results written
 * to docs/upstream-conformance.md.
 *
 * Needs e2e.test (or e2e-sawait.test) in $KCM_REAL_BIN (default /tmp/k8sbin),
 * built by ../shared/tools/build-e2e.sh, and ../shared/tools/run-e2e.sh.
 * Usage: node scripts/upstream-conformance.mjs [GROUP-REGEX] [--from RESULTS]
 *   default GROUP: '^\[sig-apps\]|^\[sig-api-machinery\]'
 *   --from RESULTS: only write the report from an earlier run-e2e.sh results file
 *   --exclude REGEX: leave out the tests whose names match, ignoring case (e.g. 'webhook|aggregator')
 *
 * Known reasons for failures (limits of simulated nodes, features not built)
 * are kept in scripts/upstream-conformance-reasons.json, test name -> reason,
 * and printed beside each failing test.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.KCM_REAL_BIN ?? '/tmp/k8sbin';
const args = process.argv.slice(2);
const fromIdx = args.indexOf('--from');
const from = fromIdx >= 0 ? args.splice(fromIdx, 2)[1] : undefined;
const exIdx = args.indexOf('--exclude');
const exclude = exIdx >= 0 ? new RegExp(args.splice(exIdx, 2)[1], 'i') : undefined;
const group = args[0] ?? '^\\[sig-apps\\]|^\\[sig-api-machinery\\]';
const runE2e = join(root, '..', 'shared', 'tools', 'run-e2e.sh');
const results = from ?? (await runAgainstKcmUp());

async function runAgainstKcmUp() {
  if (!existsSync(join(bin, 'e2e.test')) && !existsSync(join(bin, 'e2e-sawait.test'))) {
    console.error(`upstream-conformance: no e2e.test in ${bin}; build it with ../shared/tools/build-e2e.sh or set KCM_REAL_BIN`);
    process.exit(2);
  }
  if (!existsSync(runE2e)) {
    console.error(`upstream-conformance: ${runE2e} not found`);
    process.exit(2);
  }

  const dir = mkdtempSync(join(tmpdir(), 'kcm-upstream-e2e-'));
  const data = join(dir, 'data');
  const up = spawn(process.execPath, [join(root, 'bin', 'kcm.js'), 'up', '--data-dir', data, '--secure-port', '0', '--controller-manager-secure-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  up.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  up.stderr.setEncoding('utf8').on('data', () => undefined);
  const stop = () => {
    if (up.exitCode === null) up.kill('SIGTERM');
  };
  process.on('exit', stop);

  const deadline = Date.now() + 120_000;
  while (!/kcm up: ready in \d+ ms/.test(out)) {
    if (Date.now() > deadline || up.exitCode !== null) {
      console.error(`upstream-conformance: kcm up did not become ready\n${out}`);
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const res = join(dir, 'results.txt');
  console.error(`upstream-conformance: kcm up ready; running ${group}${exclude ? ` without ${exclude.source}` : ''}`);
  let selection = group;
  if (exclude) {
    // The list run-e2e.sh would make, less the excluded names, handed to it as a file.
    const e2e = existsSync(join(bin, 'e2e-sawait.test')) ? join(bin, 'e2e-sawait.test') : join(bin, 'e2e.test');
    const dry = spawnSync(e2e, ['--ginkgo.dryRun', '--ginkgo.focus=\\[Conformance\\]', '--ginkgo.noColor', '--kubeconfig=/dev/null', '--provider=skeleton'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    const re = new RegExp(group);
    const names = [...new Set([...dry.stdout.matchAll(/\{"msg":"PASSED (.*?)","total"/g)].map((m) => m[1]))].filter((n) => re.test(n) && !exclude.test(n)).sort();
    selection = join(dir, 'tests.txt');
    writeFileSync(selection, names.join('\n') + '\n');
  }
  const r = spawnSync('bash', [runE2e, join(data, 'kubeconfig'), selection, res], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, K8SBIN: bin } });
  stop();
  if (r.status !== 0 && !existsSync(res)) process.exit(r.status ?? 1);
  return res;
}

const reasonsFile = join(root, 'scripts', 'upstream-conformance-reasons.json');
const reasons = existsSync(reasonsFile) ? JSON.parse(readFileSync(reasonsFile, 'utf8')) : {};
const rows = readFileSync(results, 'utf8')
  .split('\n')
  .filter((l) => /^\d{3}\t/.test(l))
  .map((l) => {
    const [, result, secs, name, failure] = l.split('\t');
    return { result, secs, name, failure: failure ?? '' };
  })
  .sort((a, b) => (a.name < b.name ? -1 : 1));
const passed = rows.filter((x) => x.result === 'PASS').length;
const esc = (s) => s.replaceAll('|', '\\|');
const lines = [
  '# Upstream conformance tests against kcm up',
  '',
  'Written by `npm run conformance:upstream` (scripts/upstream-conformance.mjs): the',
  '`[Conformance]` e2e tests of Kubernetes v1.20 (`e2e.test` from ../shared/tools/build-e2e.sh),',
  `matching \`${group}\`${exclude ? ` but not \`${exclude.source}\`` : ''}, each run alone by ../shared/tools/run-e2e.sh against one \`kcm up\`.`,
  'A failing test shows its first failure line and, where known, why it cannot pass yet',
  '(scripts/upstream-conformance-reasons.json).',
  '',
  `Run on ${new Date().toISOString().slice(0, 10)}: ${passed} of ${rows.length} passed.`,
  '',
  '| test | result | why |',
  '| --- | --- | --- |',
  ...rows.map((x) => `| ${esc(x.name)} | ${x.result} | ${x.result === 'PASS' ? '' : esc(reasons[x.name] ?? x.failure)} |`),
  '',
];
const doc = join(root, 'docs', 'upstream-conformance.md');
const existing = existsSync(doc) ? readFileSync(doc, 'utf8') : '';
// Keep the sections of other groups: one section per GROUP.
const marker = `<!-- group: ${group}${exclude ? ` exclude: ${exclude.source}` : ''} -->`;
const section = `${marker}\n${lines.join('\n')}`;
const parts = existing.split(/(?=<!-- group: )/).filter((p) => p.startsWith('<!-- group: ') && !p.startsWith(marker));
writeFileSync(doc, [...parts.map((p) => p.trimEnd() + '\n'), section].join('\n'));
console.error(`upstream-conformance: ${passed}/${rows.length} passed; wrote ${doc}`);
if (!from) rmSync(dirname(results), { recursive: true, force: true });
