#!/usr/bin/env node
/**
 * Regenerates the screenshots of docs/dashboard.md (docs/images/dashboard-*.png):
 * starts `kcm up` in a temporary data directory on free ports, applies the
 * examples (a Deployment, a StatefulSet, a Job, a CronJob, a DaemonSet) and a
 * pod no node can fit, rolls the Deployment out, and photographs each view in
 * headless Chromium (Debian's /usr/bin/chromium or $KCM_CHROMIUM, driven by
 * playwright-core). Run after `npm run build`:
 *
 *   node scripts/dashboard-screenshots.mjs
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const chromiumPath = process.env.KCM_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  console.error(`dashboard-screenshots: no Chromium at ${chromiumPath} (apt-get install chromium, or set KCM_CHROMIUM)`);
  process.exit(2);
}
const out = join(root, 'docs', 'images');
mkdirSync(out, { recursive: true });

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(fn, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'kcm-screenshots-'));
const [apiPort, cmPort, dashPort] = [await freePort(), await freePort(), await freePort()];
const kcm = spawn(process.execPath, [join(root, 'bin', 'kcm.js'), 'up', '--data-dir', dataDir, '--secure-port', String(apiPort), '--controller-manager-secure-port', String(cmPort), '--dashboard-port', String(dashPort), '--nodes', '4'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
kcm.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
kcm.stderr.resume();
const kubeconfig = join(dataDir, 'kubeconfig');
const kubectl = (...args) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });

let browser;
try {
  const loginUrl = await waitFor(() => /^Dashboard: (http:\S+)$/m.exec(stdout)?.[1], 30_000, 'the dashboard URL');
  await waitFor(() => /kcm up: ready in/.test(stdout), 60_000, 'kcm up to be ready');
  const base = loginUrl.replace(/login\?.*$/, '');
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(loginUrl);

  for (const f of ['deployment.yaml', 'statefulset.yaml', 'job.yaml', 'cronjob.yaml', 'daemonset.yaml']) kubectl('apply', '--validate=false', '-f', join(root, 'examples', f));
  // A pod no node fits: Pending, with the scheduler's filter results.
  kubectl('run', 'too-big', '--image=nginx', '--restart=Never', '--overrides={"spec":{"containers":[{"name":"too-big","image":"nginx","resources":{"requests":{"cpu":"64"}}}]}}');
  kubectl('rollout', 'status', 'deployment/web', '--timeout=120s');
  kubectl('set', 'image', 'deployment/web', 'web=nginx:1.28');
  kubectl('rollout', 'status', 'deployment/web', '--timeout=120s');
  await sleep(3000);

  const shots = [
    ['controllers', '#/controllers'],
    ['owners', '#/owners?ns=default'],
    ['nodes', '#/nodes'],
  ];
  for (const [name, hash] of shots) {
    await page.goto(base + hash);
    await sleep(2500);
    await page.screenshot({ path: join(out, `dashboard-${name}.png`) });
    console.log(`wrote docs/images/dashboard-${name}.png`);
  }
  const uid = kubectl('get', 'deployment', 'web', '-o', 'jsonpath={.metadata.uid}');
  await page.goto(`${base}#/timeline?uid=${uid}`);
  await sleep(2500);
  await page.screenshot({ path: join(out, 'dashboard-timeline.png') });
  console.log('wrote docs/images/dashboard-timeline.png');
} finally {
  await browser?.close();
  kcm.kill('SIGTERM');
  await new Promise((r) => kcm.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
