/**
 * `kcm controller-manager` as a user runs it: against a `kcm apiserver`
 * process, with kube-controller-manager's flags. Covers --help and flag
 * errors, --controllers, /healthz and /metrics (with the admin token; who
 * else may read them is anonymous-access.test.ts's), and leader election between
 * two processes (one leads; SIGKILL it and the other takes over; never two
 * actors at once, so no duplicate pods).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'undici';
import { controllerManagerFlags } from '../../src/controllermanager/options.js';
import { freePort, kcmBin, startApiServerProcess, waitFor, type KcmProcess } from './harness.js';

const runKcm = (args: string[]) => spawnSync(process.execPath, [kcmBin, ...args], { encoding: 'utf8', timeout: 20_000 });

interface Cm {
  child: ChildProcess;
  port: number;
  out(): string;
  err(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  get(path: string): Promise<{ code: number; body: string }>;
  stop(): Promise<void>;
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function startCm(api: KcmProcess, args: string[]): Promise<Cm> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--enable-source-maps', kcmBin, 'controller-manager', '--kubeconfig', api.kubeconfigPath, '--bind-address', '127.0.0.1', '--secure-port', String(port), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  // /metrics and /configz answer only callers the API server authenticates and authorizes: the admin token.
  const get = async (path: string) => {
    const r = await request(`https://127.0.0.1:${port}${path}`, { dispatcher: insecure, headers: { authorization: `Bearer ${api.adminToken}` } });
    return { code: r.statusCode, body: await r.body.text() };
  };
  await waitFor(async () => (await get('/healthz')).code === 200, 15_000, `controller manager /healthz (stderr: ${err.slice(-500)})`);
  return {
    child,
    port,
    out: () => out,
    err: () => err,
    exited,
    get,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const t = setTimeout(() => child.kill('SIGKILL'), 8000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(t);
    },
  };
}

const deployment = (name: string, replicas: number) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });

async function podNames(api: KcmProcess, app: string): Promise<string[]> {
  const r = await api.api('GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`);
  return ((r.json as { items: { metadata: { name: string; deletionTimestamp?: string } }[] }).items ?? []).filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
}

describe('kcm controller-manager command', () => {
  it('lists every flag in --help, grouped, and exits 0', () => {
    const r = runKcm(['controller-manager', '--help']);
    assert.equal(r.status, 0);
    for (const [name, def] of Object.entries(controllerManagerFlags)) {
      if ((def as { hidden?: boolean }).hidden) continue;
      assert.ok(r.stdout.includes(`--${name}`), `--help lacks --${name}`);
    }
    assert.match(r.stdout, /Leader election flags:/);
    assert.match(r.stdout, /--kube-api-qps float +.*\(default 20\)/);
    assert.match(r.stdout, /deployment-controller \(deployment\)/);
  });

  it('rejects a bad flag, a bad value and an unknown controller with one line and exit code 1', () => {
    const a = runKcm(['controller-manager', '--no-such-flag']);
    assert.deepEqual([a.status, a.stderr], [1, 'Error: unknown flag: --no-such-flag\n']);
    const b = runKcm(['controller-manager', '--leader-elect-lease-duration=soon']);
    assert.equal(b.status, 1);
    assert.match(b.stderr, /^Error: invalid argument "soon" for "--leader-elect-lease-duration" flag: time: invalid duration "soon"\n$/);
    const c = runKcm(['controller-manager', '--controllers=*,-bogus']);
    assert.deepEqual([c.status, c.stderr], [1, 'Error: "bogus" is not in the list of known controllers\n']);
  });

  describe('against an API server', () => {
    let api: KcmProcess;
    before(async () => {
      api = await startApiServerProcess();
    });
    after(async () => {
      await api?.stop();
      await insecure.close();
    });

    it('leaves Deployments alone with --controllers=*,-deployment and exposes workqueue_depth per controller', async () => {
      const cm = await startCm(api, ['--leader-elect=false', '--controllers=*,-deployment']);
      try {
        await api.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: deployment('untouched', 2) });
        // The replicaset controller runs: a bare ReplicaSet gets its pods.
        await api.kubectlOk(['apply', '--validate=false', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            metadata: { name: 'bare' },
            spec: { replicas: 1, selector: { matchLabels: { app: 'bare' } }, template: { metadata: { labels: { app: 'bare' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
          }),
        });
        await waitFor(async () => (await podNames(api, 'bare')).length === 1, 15_000, 'the bare ReplicaSet to get a pod');
        const rs = await api.api('GET', '/apis/apps/v1/namespaces/default/replicasets');
        const owned = (rs.json as { items: { metadata: { ownerReferences?: { name: string }[] } }[] }).items.filter((x) => x.metadata.ownerReferences?.some((o) => o.name === 'untouched'));
        assert.equal(owned.length, 0, 'no ReplicaSet for the Deployment');
        const d = await api.api('GET', '/apis/apps/v1/namespaces/default/deployments/untouched');
        assert.equal((d.json as { status?: { observedGeneration?: number } }).status?.observedGeneration, undefined);
        assert.deepEqual(await podNames(api, 'untouched'), []);

        const metrics = (await cm.get('/metrics')).body;
        assert.match(metrics, /^workqueue_depth\{name="replicaset"\} \d+$/m);
        assert.doesNotMatch(metrics, /workqueue_depth\{name="deployment"\}/);
        assert.match(metrics, /^rest_client_requests_total\{/m);
        assert.equal((await cm.get('/healthz/replicaset-controller')).code, 200);
        assert.equal((await cm.get('/healthz/deployment-controller')).code, 404);
        const configz = JSON.parse((await cm.get('/configz')).body);
        assert.deepEqual(configz.componentconfig.generic.controllers, ['*', '-deployment']);
        assert.match(cm.err(), /"no cloud provider \(--cloud-provider\), skipping" controller="service-lb-controller"/);
      } finally {
        await cm.stop();
        await api.kubectl(['delete', 'deployment', 'untouched', 'replicaset', 'bare', '--wait=false']);
      }
      assert.equal((await cm.exited).code, 0);
    });

    it('runs one leader among two processes, fails over on SIGKILL, and never duplicates pods', async () => {
      const le = ['--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=500ms', '--controllers=replicaset,deployment'];
      const a = await startCm(api, le);
      const b = await startCm(api, le);
      try {
        const holder = async () => {
          const r = await api.api('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager');
          return r.status === 200 ? ((r.json as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? '') : '';
        };
        await waitFor(holder, 10_000, 'a lease holder');
        const leaderOf = async () => {
          const [ma, mb] = await Promise.all([a.get('/metrics'), b.get('/metrics')]);
          const st = (m: string) => /leader_election_master_status\{name="kube-controller-manager"\} (\d)/.exec(m)?.[1];
          return [st(ma.body), st(mb.body)];
        };
        const statuses = await waitFor(async () => {
          const s = await leaderOf();
          return s.filter((x) => x === '1').length === 1 && s.includes('0') ? s : undefined;
        }, 10_000, 'exactly one leader in the metrics');
        const [leader, follower] = statuses[0] === '1' ? [a, b] : [b, a];

        await api.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: deployment('ha', 2) });
        await waitFor(async () => (await podNames(api, 'ha')).length === 2, 15_000, 'two pods from the leader');

        const before = await holder();
        leader.child.kill('SIGKILL');
        const killedAt = Date.now();
        await waitFor(async () => {
          const h = await holder();
          return h !== '' && h !== before;
        }, 3000 + 500 * 1.2 + 4000, 'the other process to take the lease');
        const tookMs = Date.now() - killedAt;
        assert.ok(tookMs < 3000 + 600 + 2500, `took over in ${tookMs} ms`);
        assert.match((await follower.get('/metrics')).body, /leader_election_master_status\{name="kube-controller-manager"\} 1/);

        await api.kubectlOk(['scale', 'deployment', 'ha', '--replicas=4']);
        await waitFor(async () => (await podNames(api, 'ha')).length === 4, 15_000, 'four pods from the new leader');
        // Give a wrongly acting second actor time to show itself.
        await new Promise((r) => setTimeout(r, 1500));
        assert.equal((await podNames(api, 'ha')).length, 4);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    it('exits non-zero with "leaderelection lost" when the lease is taken away', async () => {
      const cm = await startCm(api, ['--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=500ms', '--controllers=replicaset', '--leader-elect-resource-name=lost-test']);
      try {
        await waitFor(() => /successfully acquired lease/.test(cm.err()), 10_000, 'leadership');
        // Another actor overwrites the lease; our renewals then conflict until the deadline passes.
        const path = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/lost-test';
        await waitFor(async () => {
          const cur = (await api.api('GET', path)).json as { spec: Record<string, unknown> };
          const now = new Date().toISOString().replace('Z', '000Z');
          const r = await api.api('PUT', path, { ...cur, spec: { ...cur.spec, holderIdentity: 'someone-else', renewTime: now, acquireTime: now, leaseDurationSeconds: 3600 } });
          return r.status === 200;
        }, 5000, 'the lease to be taken');
        const exit = await Promise.race([cm.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
        assert.notEqual(exit, 'timeout');
        assert.equal((exit as { code: number }).code, 1);
        assert.match(cm.err(), /leaderelection lost/);
      } finally {
        await cm.stop();
      }
    });
  });
});
