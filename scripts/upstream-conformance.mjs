#!/usr/bin/env node
/**
 * `npm run conformance:upstream`: the upstream Kubernetes v1.20 [Conformance]
 * e2e tests, one test per e2e.test process (../shared/tools/run-e2e.sh),
 * against `kcm up` or against the real control plane with simulated nodes
 * (etcd, kube-apiserver, kube-controller-manager and kube-scheduler v1.20 from
 * ../shared/tools/build-real-k8s.sh, plus `kcm nodes`): the baseline that
 * shows which failures are limits of simulated nodes and which are kcm's.
 *
 * Needs e2e.test (or e2e-sawait.test) in $KCM_REAL_BIN (default /tmp/k8sbin),
 * built by ../shared/tools/build-e2e.sh.
 * Usage: node scripts/upstream-conformance.mjs [GROUP-REGEX] [flags]
 *   GROUP-REGEX  default '^\[sig-apps\]|^\[sig-api-machinery\]'
 *   --cluster kcm|real   what to run against (default kcm: `kcm up`)
 *   --exclude REGEX      leave out the tests whose names match, ignoring case
 *   --from RESULTS       take the results of an earlier run-e2e.sh run instead of running
 *   --report             only rewrite docs/upstream-conformance.md from the stored results
 *
 * Every run merges its results, test by test, into
 * test/conformance/upstream/<cluster>.tsv (committed), and the report,
 * docs/upstream-conformance.md, is written from both files: per test, the
 * result on each cluster and, for failures, why (scripts/upstream-conformance-reasons.json,
 * test name -> reason, else the first failure line).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.KCM_REAL_BIN ?? '/tmp/k8sbin';
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const from = flag('--from');
const excludeFlag = flag('--exclude');
const exclude = excludeFlag ? new RegExp(excludeFlag, 'i') : undefined;
const cluster = flag('--cluster') ?? 'kcm';
const reportOnly = args.includes('--report') ? (args.splice(args.indexOf('--report'), 1), true) : false;
const group = args[0] ?? '^\\[sig-apps\\]|^\\[sig-api-machinery\\]';
if (cluster !== 'kcm' && cluster !== 'real') {
  console.error(`upstream-conformance: --cluster must be kcm or real, got ${cluster}`);
  process.exit(2);
}
const runE2e = join(root, '..', 'shared', 'tools', 'run-e2e.sh');
const store = join(root, 'test', 'conformance', 'upstream');
const clusters = { real: 'real control plane, simulated nodes', kcm: 'kcm up' };
/** Tests that change cluster-wide admission or aggregation (see run()). */
const intrusive = /AdmissionWebhook|CustomResourceConversionWebhook|Aggregator/;

if (!reportOnly) {
  const results = from ?? (await run());
  merge(cluster, parseResults(readFileSync(results, 'utf8')));
  if (!from) rmSync(dirname(results), { recursive: true, force: true });
}
writeReport();

/** Starts the cluster, runs the selected tests with run-e2e.sh, stops the cluster; returns the results file. */
async function run() {
  const e2e = ['e2e-sawait.test', 'e2e.test'].map((f) => join(bin, f)).find((f) => existsSync(f));
  if (!e2e) fail(`no e2e.test in ${bin}; build it with ../shared/tools/build-e2e.sh or set KCM_REAL_BIN`);
  if (!existsSync(runE2e)) fail(`${runE2e} not found`);
  const dir = mkdtempSync(join(tmpdir(), 'kcm-upstream-e2e-'));
  const target = cluster === 'kcm' ? await startKcmUp(dir) : await startReal();
  process.on('exit', () => target.stop());
  // The list run-e2e.sh would make, less the excluded names, handed to it as a file.
  const dry = spawnSync(e2e, ['--ginkgo.dryRun', '--ginkgo.focus=\\[Conformance\\]', '--ginkgo.noColor', '--kubeconfig=/dev/null', '--provider=skeleton'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const re = new RegExp(group);
  const names = [...new Set([...dry.stdout.matchAll(/\{"msg":"PASSED (.*?)","total"/g)].map((m) => JSON.parse(`"${m[1]}"`) /* the names are JSON strings: \" is a quote */))].filter((n) => re.test(n) && !exclude?.test(n)).sort();
  if (names.length === 0) fail(`no conformance test matches ${group}`);
  console.error(`upstream-conformance: ${clusters[cluster]} ready; running ${names.length} tests matching ${group}${exclude ? ` without ${exclude.source}` : ''}`);
  // Tests that register cluster-wide webhooks or APIServices run last: one killed by the time
  // limit leaves its configuration behind (a fail-closed webhook on CRDs, say), which would fail
  // every test after it for reasons of its own.
  const last = names.filter((n) => intrusive.test(n));
  const phases = [names.filter((n) => !intrusive.test(n)), last].filter((p) => p.length > 0);
  const res = join(dir, 'results.txt');
  const lines = [];
  for (const [i, phase] of phases.entries()) {
    const selection = join(dir, `tests-${i}.txt`);
    writeFileSync(selection, phase.join('\n') + '\n');
    const out = join(dir, `results-${i}.txt`);
    const r = spawnSync('bash', [runE2e, target.kubeconfig, selection, out], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, K8SBIN: bin } });
    if (r.status !== 0 && !existsSync(out)) process.exit(r.status ?? 1);
    lines.push(readFileSync(out, 'utf8'));
  }
  await target.stop();
  writeFileSync(res, lines.join(''));
  return res;
}


async function startKcmUp(dir) {
  const data = join(dir, 'data');
  const up = spawn(process.execPath, [join(root, 'bin', 'kcm.js'), 'up', '--data-dir', data, '--secure-port', '0', '--controller-manager-secure-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  up.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  up.stderr.setEncoding('utf8').on('data', () => undefined);
  const stop = async () => {
    if (up.exitCode === null) up.kill('SIGTERM');
  };
  const deadline = Date.now() + 120_000;
  while (!/kcm up: ready in \d+ ms/.test(out)) {
    if (Date.now() > deadline || up.exitCode !== null) {
      await stop();
      fail(`kcm up did not become ready\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { kubeconfig: join(data, 'kubeconfig'), stop };
}

/** etcd, the real kube-apiserver, kube-controller-manager and kube-scheduler, and `kcm nodes` (test/e2e/real-cluster.ts). */
async function startReal() {
  for (const b of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
    if (!existsSync(join(bin, b))) fail(`no ${b} in ${bin}; build it with ../shared/tools/build-real-k8s.sh or set KCM_REAL_BIN`);
  }
  const mod = join(root, 'dist', 'test', 'e2e', 'real-cluster.js');
  if (!existsSync(mod)) fail(`${mod} not found; run tsc first (npm run conformance:upstream does)`);
  const { startRealCluster } = await import(pathToFileURL(mod).href);
  const c = await startRealCluster({ controllerManager: 'real', bin, readyTimeoutMs: 180_000 });
  let stopped = false;
  return {
    kubeconfig: c.kubeconfigPath,
    stop: async () => {
      if (!stopped) await c.stop();
      stopped = true;
    },
  };
}

function fail(msg) {
  console.error(`upstream-conformance: ${msg}`);
  process.exit(2);
}

/** run-e2e.sh's results: "NNN\tRESULT\tSECSs\tNAME\tFAILURE" lines. */
function parseResults(text) {
  const date = new Date().toISOString().slice(0, 10);
  return text
    .split('\n')
    .filter((l) => /^\d{3}\t/.test(l))
    .map((l) => {
      const [, result, secs, name, failure] = l.split('\t');
      return { name, result, secs, failure: failure ?? '', date };
    });
}

function readStore(c) {
  const f = join(store, `${c}.tsv`);
  const rows = new Map();
  if (!existsSync(f)) return rows;
  for (const l of readFileSync(f, 'utf8').split('\n')) {
    if (!l || l.startsWith('#')) continue;
    const [name, result, secs, date, failure] = l.split('\t');
    rows.set(name, { name, result, secs, date, failure: failure ?? '' });
  }
  return rows;
}

function merge(c, fresh) {
  const rows = readStore(c);
  for (const r of fresh) rows.set(r.name, r);
  mkdirSync(store, { recursive: true });
  const sorted = [...rows.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  writeFileSync(
    join(store, `${c}.tsv`),
    [`# ${clusters[c]}: test, result, seconds, date, first failure line (scripts/upstream-conformance.mjs)`, ...sorted.map((r) => [r.name, r.result, r.secs, r.date, r.failure.replace(/[\t\n]/g, ' ')].join('\t'))].join('\n') + '\n',
  );
  const passed = fresh.filter((r) => r.result === 'PASS').length;
  console.error(`upstream-conformance: ${clusters[c]}: ${passed}/${fresh.length} passed`);
}

function writeReport() {
  const reasonsFile = join(root, 'scripts', 'upstream-conformance-reasons.json');
  const reasons = existsSync(reasonsFile) ? JSON.parse(readFileSync(reasonsFile, 'utf8')) : {};
  const real = readStore('real');
  const kcm = readStore('kcm');
  const names = [...new Set([...real.keys(), ...kcm.keys()])].sort();
  const sigOf = (n) => /^\[([^\]]+)\]/.exec(n)?.[1] ?? 'other';
  const sigs = [...new Set(names.map(sigOf))].sort();
  const esc = (s) => s.replaceAll('|', '\\|');
  const cell = (r) => (r ? r.result : 'not run');
  const passes = (m, n) => m.get(n)?.result === 'PASS';
  const regressions = names.filter((n) => passes(real, n) && kcm.has(n) && !passes(kcm, n));
  const dates = [...real.values(), ...kcm.values()].map((r) => r.date).sort();
  const count = (m, list) => {
    const ran = list.filter((n) => m.has(n));
    return ran.length ? `${ran.filter((n) => passes(m, n)).length} of ${ran.length}` : 'not run';
  };
  const lines = [
    '# Upstream conformance tests: kcm up beside the real control plane',
    '',
    'Written by `npm run conformance:upstream` (scripts/upstream-conformance.mjs) from the stored',
    'results in test/conformance/upstream/: the `[Conformance]` e2e tests of Kubernetes v1.20',
    '(`e2e.test` from ../shared/tools/build-e2e.sh), each run alone by ../shared/tools/run-e2e.sh,',
    '',
    `- against **${clusters.real}**: etcd, kube-apiserver, kube-controller-manager and`,
    '  kube-scheduler v1.20.2 (../shared/tools/build-real-k8s.sh) with three `kcm nodes`, the',
    '  baseline: what fails there is a limit of simulated nodes, not of kcm\'s control plane;',
    `- against **${clusters.kcm}** (three simulated nodes).`,
    '',
    'To reproduce (after both build scripts; KCM_REAL_BIN defaults to /tmp/k8sbin):',
    '',
    '```',
    "npm run conformance:upstream -- '^\\[sig-apps\\]|^\\[sig-api-machinery\\]' --cluster real",
    "npm run conformance:upstream -- '^\\[sig-apps\\]|^\\[sig-api-machinery\\]'             # kcm up",
    "npm run conformance:upstream -- '^\\[sig-node\\]|^\\[sig-network\\]|^\\[sig-auth\\]' --cluster real",
    "npm run conformance:upstream -- '^\\[sig-node\\]|^\\[sig-network\\]|^\\[sig-auth\\]'",
    "TEST_TIMEOUT=600 npm run conformance:upstream -- '^\\[sig-scheduling\\]'           # one test waits 5 minutes by design",
    '```',
    '',
    `Results from runs between ${dates[0] ?? '-'} and ${dates[dates.length - 1] ?? '-'}. A failure's "why" is the`,
    'known reason (scripts/upstream-conformance-reasons.json) or else the first failure line of the',
    'kcm up run (of the real run when only that failed).',
    '',
    'Notes on the baseline: /usr/bin/kubectl on the machines this was run on is gcloud\'s dispatcher,',
    'which runs the kubectl release matching the server (1.20 against the real control plane, 1.33',
    'against kcm up), so tests that parse kubectl output can differ by kubectl version alone. In the',
    'runs recorded here the real kube-controller-manager v1.20 once stopped creating ServiceAccount',
    'token Secrets a few minutes into a long run (those results were discarded and the tests re-run on',
    'a fresh cluster), and its DaemonSet controller computed no desired pods on the simulated nodes in',
    'the [Serial] DaemonSet tests; each process\'s log is kept in the cluster\'s temporary directory',
    '(test/e2e/real-cluster.ts) for looking into such cases. The webhook and aggregator tests ran on the',
    'baseline with TEST_TIMEOUT=100 (they wait for servers in pods that simulated nodes do not run).',
    '',
    '| group | tests | ' + clusters.real + ' | kcm up | pass on the real control plane, not on kcm up |',
    '| --- | --- | --- | --- | --- |',
    ...sigs.map((s) => {
      const list = names.filter((n) => sigOf(n) === s);
      return `| [${s}] | ${list.length} | ${count(real, list)} | ${count(kcm, list)} | ${regressions.filter((n) => sigOf(n) === s).length} |`;
    }),
    '',
  ];
  if (regressions.length) {
    lines.push('Tests that pass on the real control plane with simulated nodes but not on kcm up:', '', ...regressions.map((n) => `- ${esc(n)}: ${esc(reasons[n] ?? kcm.get(n).failure)}`), '');
  } else {
    lines.push('Every test that passes on the real control plane with simulated nodes and ran on kcm up passes on kcm up.', '');
  }
  for (const s of sigs) {
    lines.push(`## [${s}]`, '', `| test | ${clusters.real} | kcm up | why |`, '| --- | --- | --- | --- |');
    for (const n of names.filter((x) => sigOf(x) === s)) {
      const r = real.get(n);
      const k = kcm.get(n);
      const failing = [k, r].find((x) => x && x.result !== 'PASS');
      const why = failing ? reasons[n] ?? failing.failure : '';
      lines.push(`| ${esc(n)} | ${cell(r)} | ${cell(k)} | ${esc(why)} |`);
    }
    lines.push('');
  }
  const doc = join(root, 'docs', 'upstream-conformance.md');
  writeFileSync(doc, lines.join('\n'));
  console.error(`upstream-conformance: wrote ${doc}`);
}
