/**
 * Every port kcm opens, probed as an anonymous caller (and with a bad token,
 * a look-alike client certificate, and the credentials that should work):
 *
 * - `kcm apiserver` (6443 or --secure-port): the health and version paths,
 *   nothing else (401 under AlwaysAllow, 403 under RBAC as kube-apiserver);
 * - `kcm controller-manager` (10257) and `kcm scheduler` (10259): the
 *   health paths, nothing else (403 Forbidden Status as
 *   kube-controller-manager writes it); /metrics and /configz for callers the
 *   API server authenticates and authorizes, through TokenReview,
 *   SubjectAccessReview and the client CA it publishes;
 * - `kcm up`: the API server, the controller manager's port and the
 *   simulated kubelets' endpoint (loopback, kcm up's bearer token on every
 *   path), and no other listening socket (the scheduler's port stays closed);
 * - kcm/runtime's probe and metrics server: plain HTTP, unauthenticated by
 *   design (as controller-runtime's), off unless its address is given.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { newCA, newSignedCert, type KeyPair } from '../../src/util/cert/cert.js';
import { startEndpointServer } from '../../src/runtime/serving.js';
import { newLogger } from '../../src/util/log/logger.js';
import { Registry } from 'prom-client';
import { freePort, kcmBin, startApiServerProcess, startKcm, stopChild, waitFor, type KcmProcess } from './harness.js';

interface Probe {
  token?: string;
  cert?: KeyPair;
}

async function status(base: string, path: string, p: Probe = {}): Promise<{ code: number; body: string }> {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false, ...(p.cert ? { cert: p.cert.certPem, key: p.cert.keyPem } : {}) } });
  try {
    const r = await request(`${base}${path}`, { dispatcher, headers: { 'user-agent': 'kcm-e2e', ...(p.token ? { authorization: `Bearer ${p.token}` } : {}) } });
    return { code: r.statusCode, body: await r.body.text() };
  } finally {
    await dispatcher.close();
  }
}

/** Path -> status code for each path. */
async function codes(base: string, paths: string[], p: Probe = {}): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const path of paths) out[path] = (await status(base, path, p)).code;
  return out;
}

const forbidden = (user: string, path: string) =>
  `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \\"${user}\\" cannot get path \\"${path}\\"","reason":"Forbidden","details":{},"code":403}\n`;
const unauthorized = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n';

interface Component {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `kcm controller-manager` or `kcm scheduler` against `api`, serving on a free loopback port. */
async function startComponent(kind: 'controller-manager' | 'scheduler', kubeconfig: string, extra: string[] = []): Promise<Component> {
  const port = await freePort();
  const args = kind === 'controller-manager' ? ['--controllers=replicaset'] : [];
  const child = spawn(process.execPath, ['--enable-source-maps', kcmBin, kind, '--kubeconfig', kubeconfig, '--leader-elect=false', '--bind-address', '127.0.0.1', '--secure-port', String(port), ...args, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const url = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`kcm ${kind} exited ${child.exitCode}: ${err.slice(-1500)}`);
    return /serving on (https:\/\/\S+)/.exec(out)?.[1];
  }, 20_000, `kcm ${kind} serving (stderr: ${err.slice(-500)})`);
  return { url, child, stop: () => stopChild(child, 8000) };
}

/** A kubeconfig for `user` with a client certificate from the cluster CA. */
function kubeconfigFor(api: KcmProcess, cn: string, file: string): string {
  const ca = { certPem: api.caPem, keyPem: readFileSync(join(api.dataDir, 'pki', 'ca.key'), 'utf8') };
  const cert = newSignedCert(ca, { commonName: cn, usage: 'client' });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const path = join(api.dataDir, file);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${api.url}", certificate-authority-data: ${b64(api.caPem)}}}]
users: [{name: u, user: {client-certificate-data: ${b64(cert.certPem)}, client-key-data: ${b64(cert.keyPem)}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`,
  );
  return path;
}

function clusterCert(api: KcmProcess, cn: string, groups: string[]): KeyPair {
  return newSignedCert({ certPem: api.caPem, keyPem: readFileSync(join(api.dataDir, 'pki', 'ca.key'), 'utf8') }, { commonName: cn, organizations: groups, usage: 'client' });
}

const healthPaths = ['/healthz', '/livez', '/readyz'];
const componentPrivate = ['/metrics', '/configz', '/healthz/ping', '/debug/pprof/', '/'];
const apiPublic = ['/healthz', '/livez', '/readyz', '/version'];
const apiPrivate = ['/metrics', '/api', '/apis', '/api/v1/namespaces', '/api/v1/secrets', '/openapi/v2', '/healthz/etcd', '/'];

/** Checks one controller-manager or scheduler port. */
async function checkComponentPort(c: Component, api: KcmProcess, metric = /^rest_client_requests_total\{/m): Promise<void> {
  assert.deepEqual(await codes(c.url, healthPaths), Object.fromEntries(healthPaths.map((p) => [p, 200])));
  for (const p of componentPrivate) assert.deepEqual(await status(c.url, p), { code: 403, body: forbidden('system:anonymous', p) }, p);
  for (const p of ['/metrics', '/healthz']) assert.deepEqual(await status(c.url, p, { token: 'not-a-token' }), { code: 401, body: unauthorized }, p);
  // A client certificate from another CA that carries the cluster CA's name: refused after the handshake.
  const lookAlike = newSignedCert(newCA('kcm-ca'), { commonName: 'kcm-admin', organizations: ['system:masters'], usage: 'client' });
  assert.deepEqual(await status(c.url, '/metrics', { cert: lookAlike }), { code: 401, body: unauthorized });
  // What works: the admin token (TokenReview, then SubjectAccessReview) and a client certificate of the cluster CA,
  // looked up in kube-system/extension-apiserver-authentication.
  const m = await status(c.url, '/metrics', { token: api.adminToken });
  assert.equal(m.code, 200);
  assert.match(m.body, /^rest_client_requests_total\{/m);
  assert.match(m.body, metric);
  assert.equal((await status(c.url, '/configz', { token: api.adminToken })).code, 200);
  assert.equal((await status(c.url, '/metrics', { cert: clusterCert(api, 'ops', ['system:masters']) })).code, 200);
}

describe('anonymous access to every port kcm opens', () => {
  describe('kcm apiserver, controller-manager and scheduler under AlwaysAllow', () => {
    let api: KcmProcess;
    let cm: Component;
    let sched: Component;
    before(async () => {
      api = await startApiServerProcess();
      cm = await startComponent('controller-manager', api.kubeconfigPath);
      sched = await startComponent('scheduler', api.kubeconfigPath);
    });
    after(async () => {
      await Promise.all([cm?.stop(), sched?.stop()]);
      await api?.stop();
    });

    it('lets anonymous callers read only the health and version paths of the API server', async () => {
      assert.deepEqual(await codes(api.url, apiPublic), Object.fromEntries(apiPublic.map((p) => [p, 200])));
      assert.deepEqual(await codes(api.url, apiPrivate), Object.fromEntries(apiPrivate.map((p) => [p, 401])));
      const lookAlike = newSignedCert(newCA('kcm-ca'), { commonName: 'kcm-admin', organizations: ['system:masters'], usage: 'client' });
      assert.deepEqual(await status(api.url, '/api', { cert: lookAlike }), { code: 401, body: unauthorized });
    });

    it("lets anonymous callers read only the controller manager's health paths", async () => {
      await checkComponentPort(cm, api);
    });

    it("lets anonymous callers read only the scheduler's health paths", async () => {
      await checkComponentPort(sched, api, /^scheduler_pending_pods\{queue="active"\} \d+$/m);
    });
  });

  describe('the same under --authorization-mode=RBAC, the components running as system:kube-controller-manager and system:kube-scheduler', () => {
    let api: KcmProcess;
    let cm: Component;
    let sched: Component;
    before(async () => {
      api = await startApiServerProcess({}, ['--authorization-mode=RBAC']);
      cm = await startComponent('controller-manager', kubeconfigFor(api, 'system:kube-controller-manager', 'cm.kubeconfig'));
      sched = await startComponent('scheduler', kubeconfigFor(api, 'system:kube-scheduler', 'scheduler.kubeconfig'));
    });
    after(async () => {
      await Promise.all([cm?.stop(), sched?.stop()]);
      await api?.stop();
    });

    it('answers anonymous callers of the API server 403 outside system:public-info-viewer, as kube-apiserver', async () => {
      assert.deepEqual(await codes(api.url, apiPublic), Object.fromEntries(apiPublic.map((p) => [p, 200])));
      assert.deepEqual(await codes(api.url, apiPrivate), Object.fromEntries(apiPrivate.map((p) => [p, 403])));
      assert.deepEqual(await status(api.url, '/metrics'), {
        code: 403,
        body: '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \\"system:anonymous\\" cannot get path \\"/metrics\\"","reason":"Forbidden","details":{},"code":403}\n',
      });
      // Byte for byte kube-apiserver 1.20's answer.
      assert.deepEqual(await status(api.url, '/api/v1/namespaces'), {
        code: 403,
        body: '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces is forbidden: User \\"system:anonymous\\" cannot list resource \\"namespaces\\" in API group \\"\\" at the cluster scope","reason":"Forbidden","details":{"kind":"namespaces"},"code":403}\n',
      });
    });

    it('guards both component ports through the API server with their own identities', async () => {
      await checkComponentPort(cm, api);
      await checkComponentPort(sched, api, /^scheduler_pending_pods\{queue="active"\} \d+$/m);
      // system:monitoring may read /metrics (bootstrap ClusterRole), not /configz.
      const prom = clusterCert(api, 'prometheus', ['system:monitoring']);
      assert.equal((await status(cm.url, '/metrics', { cert: prom })).code, 200);
      assert.deepEqual(await status(cm.url, '/configz', { cert: prom }), { code: 403, body: forbidden('prometheus', '/configz') });
    });
  });

  describe('kcm up', () => {
    let kcm: KcmProcess;
    let cmUrl: string;
    before(async () => {
      const cmPort = await freePort();
      kcm = await startKcm('up', ['--controller-manager-secure-port', String(cmPort), '--nodes', '1']);
      cmUrl = await waitFor(() => /controller manager serving on (https:\/\/\S+)/.exec(kcm.stdout())?.[1], 30_000, 'the controller manager port');
    });
    after(async () => {
      await kcm?.stop();
    });

    it('opens the API server, controller manager, dashboard and kubelet endpoint ports only, each answering anonymous callers their health paths only', async () => {
      // The simulated kubelets' endpoint (logs, exec, port-forward) is advertised on the Node; it wants kcm up's bearer token for everything.
      const kubelet = await waitFor(async () => (await kcm.kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.annotations.kcm\\.dev/kubelet-endpoint}'])).stdout || undefined, 30_000, 'the kubelet endpoint');
      const dashboard = await waitFor(() => /^Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)login\?token=/m.exec(kcm.stdout())?.[1], 30_000, 'the dashboard line');
      const ports = listeningPorts(kcm.child.pid!);
      if (ports) assert.deepEqual(ports, [Number(new URL(kcm.url).port), Number(new URL(cmUrl).port), Number(new URL(dashboard).port), Number(new URL(kubelet).port)].sort((a, b) => a - b));
      // The dashboard: its health path for anyone; its page, stream and reads only after sign-in.
      assert.equal((await request(`${dashboard}healthz`)).statusCode, 200);
      for (const p of ['', 'app.js', 'api/stream', 'api/object?uid=x', 'api/timeline?uid=x', 'login?token=wrong']) assert.equal((await request(`${dashboard}${p}`)).statusCode, 401, p);
      for (const p of ['/healthz', '/pods', '/containerLogs/default/p/c', '/exec/default/p/c?command=ls']) {
        assert.equal((await request(`${kubelet}${p}`)).statusCode, 401, p);
        assert.equal((await request(`${kubelet}${p}`, { headers: { authorization: 'Bearer not-a-token' } })).statusCode, 401, p);
      }
      assert.deepEqual(await codes(kcm.url, apiPublic), Object.fromEntries(apiPublic.map((p) => [p, 200])));
      assert.deepEqual(await codes(kcm.url, apiPrivate), Object.fromEntries(apiPrivate.map((p) => [p, 401])));
      assert.deepEqual(await codes(cmUrl, healthPaths), Object.fromEntries(healthPaths.map((p) => [p, 200])));
      for (const p of componentPrivate) assert.deepEqual(await status(cmUrl, p), { code: 403, body: forbidden('system:anonymous', p) }, p);
      assert.equal((await status(cmUrl, '/metrics', { token: kcm.adminToken })).code, 200);
      assert.equal((await status(cmUrl, '/metrics', { token: 'not-a-token' })).code, 401);
    });
  });

  describe("kcm/runtime's probe and metrics server", () => {
    it('serves probes and metrics over plain HTTP to anyone, by design (as controller-runtime), only when asked to', async () => {
      assert.equal(await startEndpointServer({ address: '0', logger: newLogger('t') }), undefined);
      const srv = await startEndpointServer({ address: '127.0.0.1:0', healthz: () => [], readyz: () => [], registry: new Registry(), logger: newLogger('t') });
      try {
        for (const p of ['/healthz', '/readyz', '/metrics']) assert.equal((await request(`${srv!.url}${p}`)).statusCode, 200, p);
      } finally {
        await srv!.close();
      }
    });
  });
});

/** The TCP ports `pid` and its descendants listen on (Linux /proc); undefined where /proc is not available. */
function listeningPorts(pid: number): number[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const parent = new Map<number, number>();
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of parent) if (tree.has(pp) && !tree.has(p)) (tree.add(p), (grew = true));
  }
  const inodes = new Set<string>();
  for (const p of tree) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${p}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${p}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[3] === '0A' && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
