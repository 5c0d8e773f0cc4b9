/**
 * The dashboard in a real browser: headless Chromium (Debian's, at
 * /usr/bin/chromium, driven by playwright-core; nothing is downloaded)
 * against `kcm up`. Sign in with the printed URL; create a Deployment and see
 * its owner tree appear and its pods turn ready; roll it out and see the
 * second ReplicaSet; see the controllers, the timeline and the nodes; delete
 * it and see the cascade. Skipped, with the reason, where no Chromium is
 * installed (.ci/run installs it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { freePort, kcmBin, startApiServerProcess, startKcm, waitFor, type KcmProcess } from './harness.js';

const CHROMIUM = process.env.KCM_CHROMIUM ?? '/usr/bin/chromium';
const examples = join(kcmBin, '..', '..', 'examples');
const noChromium = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install Debian's chromium package, or set KCM_CHROMIUM): the dashboard's browser test is skipped`;
if (noChromium) process.stderr.write(`${noChromium}\n`);

/** The flags a closed network and a root user need (no sandbox, no background connections). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

interface Meta {
  metadata: { name: string; uid: string; ownerReferences?: { uid: string }[]; deletionTimestamp?: string };
}

describe('kcm dashboard in a browser', { skip: noChromium }, () => {
  let kcm: KcmProcess;
  let browser: Browser;
  let page: Page;
  let loginUrl: string;

  const list = async (what: string): Promise<Meta[]> => (JSON.parse(await kcm.kubectlOk(['get', what, '-n', 'default', '-o', 'json'])) as { items: Meta[] }).items;
  /** The number of elements matching `selector` on the page. */
  const count = (selector: string) => page.locator(selector).count();

  before(async () => {
    const [dashboardPort, cmPort] = [await freePort(), await freePort()];
    kcm = await startKcm('up', ['--dashboard-port', String(dashboardPort), '--controller-manager-secure-port', String(cmPort)]);
    loginUrl = await waitFor(() => /^Dashboard: (http:\S+)$/m.exec(kcm.stdout())?.[1], 20_000, `the dashboard line (stdout: ${kcm.stdout()})`);
    await waitFor(() => /kcm up: ready in \d+ ms/.test(kcm.stdout()), 30_000, `kcm up to report ready (stdout: ${kcm.stdout()})`);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await kcm?.stop();
  });

  it('refuses a visitor without the login token, and signs in with it', async () => {
    const base = loginUrl.replace(/login\?.*$/, '');
    const anonymous = await page.goto(base);
    assert.equal(anonymous?.status(), 401);
    assert.match(await page.textContent('body') ?? '', /Not signed in/);
    const r = await page.goto(loginUrl);
    assert.equal(r?.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/');
    await page.waitForSelector('.conn[data-state="live"]', { timeout: 15_000 });
  });

  it('shows a new Deployment as a tree of owners whose pods turn ready, then its second ReplicaSet after a rollout', async () => {
    await kcm.kubectlOk(['apply', '--validate=false', '-f', join(examples, 'deployment.yaml')]);
    const dep = await waitFor(async () => (await list('deployments')).find((d) => d.metadata.name === 'web'), 10_000, 'the Deployment');
    await page.goto(`${loginUrl.replace(/login\?.*$/, '')}#/owners?ns=default`);
    await page.waitForSelector(`[data-uid="${dep.metadata.uid}"][data-kind="Deployment"]`, { timeout: 15_000 });
    const rs1 = await waitFor(async () => (await list('replicasets')).find((r) => r.metadata.ownerReferences?.[0]?.uid === dep.metadata.uid), 15_000, 'the first ReplicaSet');
    await page.waitForSelector(`[data-uid="${rs1.metadata.uid}"][data-kind="ReplicaSet"]`, { timeout: 15_000 });
    // Three pods of that ReplicaSet, ready (data-health ok) as the simulated kubelets report them.
    const pods = await waitFor(async () => {
      const p = (await list('pods')).filter((x) => x.metadata.ownerReferences?.[0]?.uid === rs1.metadata.uid && !x.metadata.deletionTimestamp);
      return p.length === 3 ? p : undefined;
    }, 20_000, 'three pods');
    for (const p of pods) await page.waitForSelector(`[data-uid="${p.metadata.uid}"][data-kind="Pod"][data-health="ok"]`, { timeout: 30_000 });
    await page.screenshot({ path: join(kcm.dataDir, 'owners.png') });

    // A rollout: a second ReplicaSet under the same Deployment.
    await kcm.kubectlOk(['set', 'image', 'deployment/web', 'web=nginx:1.28']);
    const rs2 = await waitFor(async () => (await list('replicasets')).find((r) => r.metadata.ownerReferences?.[0]?.uid === dep.metadata.uid && r.metadata.uid !== rs1.metadata.uid), 15_000, 'the second ReplicaSet');
    await page.waitForSelector(`[data-uid="${rs2.metadata.uid}"][data-kind="ReplicaSet"]`, { timeout: 15_000 });
    await kcm.kubectlOk(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    await page.waitForFunction(`document.querySelector('[data-uid="${dep.metadata.uid}"]')?.getAttribute('data-health') === 'ok'`, undefined, { timeout: 15_000 });
  });

  it("shows the controllers with their queues, the Deployment's timeline and the nodes", async () => {
    const base = loginUrl.replace(/login\?.*$/, '');
    await page.goto(`${base}#/controllers`);
    await page.waitForSelector('[data-controller="deployment-controller"]', { timeout: 15_000 });
    assert.ok((await count('[data-queue="deployment"]')) >= 1, 'the deployment queue is listed');
    assert.ok((await count('[data-queue]')) >= 20, 'every controller queue is listed');

    const dep = (await list('deployments')).find((d) => d.metadata.name === 'web')!;
    await page.goto(`${base}#/timeline?uid=${dep.metadata.uid}`);
    // The writes (the image change), the events (ScalingReplicaSet) and the deployment controller's syncs.
    await page.waitForSelector('[data-type="write"]', { timeout: 15_000 });
    await page.waitForSelector('[data-type="event"]', { timeout: 15_000 });
    await page.waitForSelector('[data-type="reconcile"]', { timeout: 15_000 });
    assert.match((await page.textContent('body')) ?? '', /ScalingReplicaSet/);

    await page.goto(`${base}#/nodes`);
    await page.waitForSelector('[data-kind="Node"]', { timeout: 15_000 });
    assert.equal(await count('.node[data-kind="Node"], [data-kind="Node"][data-uid]'), 3);
  });

  it('shows the cascade when the Deployment is deleted: its ReplicaSets and pods leave the tree', async () => {
    const base = loginUrl.replace(/login\?.*$/, '');
    const dep = (await list('deployments')).find((d) => d.metadata.name === 'web')!;
    await page.goto(`${base}#/owners?ns=default`);
    await page.waitForSelector(`[data-uid="${dep.metadata.uid}"]`, { timeout: 15_000 });
    assert.ok((await count('[data-kind="Pod"]')) >= 3);
    await kcm.kubectlOk(['delete', 'deployment', 'web', '--wait=false']);
    await page.waitForFunction(`document.querySelectorAll('.obj[data-kind="Pod"], [data-kind="Pod"][data-uid], [data-kind="ReplicaSet"], [data-kind="Deployment"]').length === 0`, undefined, { timeout: 60_000 });
  });
});

describe('kcm dashboard (the command)', () => {
  it('says in one line why it cannot start, and exits 1', () => {
    const r = spawnSync(process.execPath, [kcmBin, 'dashboard', '--kubeconfig', '/nonexistent/kubeconfig'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^Error: .*\/nonexistent\/kubeconfig.*\n$/);
  });

  it('serves any cluster of a kubeconfig: the printed URL signs in and the stream has the cluster; no controller manager is said plainly', async () => {
    const api = await startApiServerProcess();
    const child = spawn(process.execPath, [kcmBin, 'dashboard', '--kubeconfig', api.kubeconfigPath, '--port', '0', '--controller-manager-url', ''], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.resume();
    try {
      const login = await waitFor(() => /open (http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)/.exec(out)?.[1], 20_000, `the URL (stdout: ${out})`);
      assert.match(out, new RegExp(`^kcm dashboard for ${api.url.replace(/[.]/g, '\\.')}$`, 'm'));
      const signIn = await fetch(login, { redirect: 'manual' });
      assert.equal(signIn.status, 303);
      const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
      // A bearer token the API server accepts works too (the admin kubeconfig's).
      assert.equal((await fetch(login.replace(/token=.*$/, `token=${api.adminToken}`), { redirect: 'manual' })).status, 303);
      const ac = new AbortController();
      const res = await fetch(login.replace(/login\?.*$/, 'api/stream'), { headers: { Cookie: cookie }, signal: ac.signal });
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      const decoder = new TextDecoder();
      await waitFor(async () => {
        const { value } = await reader.read();
        text += decoder.decode(value);
        return /event: controllers\n/.test(text);
      }, 20_000, 'the snapshot and the controllers state');
      ac.abort();
      const snapshot = JSON.parse(/event: snapshot\ndata: (.*)\n/.exec(text)![1]!) as { cluster: string; namespaces: string[] };
      assert.equal(snapshot.cluster, api.url);
      assert.ok(snapshot.namespaces.includes('kube-system'));
      const controllers = JSON.parse(/event: controllers\ndata: (.*)\n/.exec(text)![1]!) as { ok: boolean; error: string };
      assert.equal(controllers.ok, false);
      assert.match(controllers.error, /no controller manager endpoint/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await api.stop();
    }
  });
});
