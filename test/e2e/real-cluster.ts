/**
 * A control plane of real parts for the e2e scenarios: etcd and the real
 * kube-apiserver (or `kcm apiserver`), the real kube-scheduler (v1.20, built
 * by ../shared/tools/build-real-k8s.sh into $KCM_REAL_BIN), a controller
 * manager (ours, `kcm controller-manager`, or the real
 * kube-controller-manager), and simulated kubelets (`kcm nodes`).
 *
 * Used when KCM_REAL_BIN is set (`npm run test:real`), so the same scenario
 * files that run against `kcm up` prove kcm's controllers on a real API
 * server; and by the conformance report (scripts/conformance.mjs), which
 * runs each scenario under both controller managers.
 *
 * Everything listens on loopback ports chosen at start, in a fresh
 * temporary directory; stop() ends every process and removes it.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminApi, freePort, kcmBin, kubectlOkWith, runKubectl, stopChild, waitFor, type KcmProcess, type KubectlOptions } from './harness.js';

export interface RealClusterOptions {
  /** Which controller manager runs: kcm's (default) or the real kube-controller-manager. */
  controllerManager?: 'kcm' | 'real';
  /** Which API server runs: the real kube-apiserver on etcd (default) or `kcm apiserver`. */
  apiServer?: 'real' | 'kcm';
  /** Extra controller-manager flags (both accept kube-controller-manager's). */
  controllerManagerArgs?: string[];
  /** Controller-manager flags whose value is the admin kubeconfig's path (e.g. --authentication-kubeconfig). */
  withKubeconfigFlags?: string[];
  /** Simulated nodes (default 3). */
  nodes?: number;
  /** Default 90 s. */
  readyTimeoutMs?: number;
  /** Directory with kube-apiserver, kube-scheduler, kube-controller-manager (default $KCM_REAL_BIN). */
  bin?: string;
  /** Only the API server (and etcd): no scheduler, controller manager or nodes (the API server benchmark). */
  apiServerOnly?: boolean;
}

/** A started control plane; `pids` names each process (etcd, kube-apiserver, kcm apiserver, ...). */
export interface RealCluster extends KcmProcess {
  pids(): Record<string, number>;
}

/** True when the real binaries are configured (KCM_REAL_BIN). */
export function realClusterConfigured(): boolean {
  return !!process.env.KCM_REAL_BIN;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** CA, API server serving certificate, service-account key pair, admin token. */
function writePki(dir: string): { ca: string; caKey: string; cert: string; key: string; saKey: string; saPub: string; token: string } {
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=kubernetes-ca']);
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver']);
  writeFileSync(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n',
  );
  openssl(dir, ['x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'apiserver.crt', '-days', '2', '-extfile', 'san.ext']);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const token = `admin-${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin-uid,system:masters\n`);
  return { ca: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'), cert: join(dir, 'apiserver.crt'), key: join(dir, 'apiserver.key'), saKey: join(dir, 'sa.key'), saPub: join(dir, 'sa.pub'), token };
}

interface Proc {
  name: string;
  child: ChildProcess;
  out: () => string;
}

function run(name: string, cmd: string, args: string[], dir: string): Proc {
  const child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } });
  let out = '';
  // Also to <dir>/<name>.log, for looking into a long run (the upstream conformance baseline) while it goes.
  const log = createWriteStream(join(dir, `${name.replace(/\s+/g, '-')}.log`));
  log.on('error', () => undefined);
  child.once('exit', () => log.end());
  const keep = (d: string) => {
    log.write(d);
    out += d;
    if (out.length > 400_000) out = out.slice(-200_000);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  return { name, child, out: () => out };
}

/**
 * Starts etcd, kube-apiserver, kube-scheduler, the chosen controller manager
 * and `kcm nodes`; resolves once the API server is ready, the nodes are
 * Ready and the default service account exists.
 */
export async function startRealCluster(opts: RealClusterOptions = {}): Promise<RealCluster> {
  const bin = opts.bin ?? process.env.KCM_REAL_BIN ?? '/tmp/k8sbin';
  const dir = mkdtempSync(join(tmpdir(), 'kcm-real-'));
  const procs: Proc[] = [];
  const readyTimeoutMs = opts.readyTimeoutMs ?? 90_000;
  const stopAll = async () => {
    for (const p of [...procs].reverse()) await stopChild(p.child, 5000);
  };
  const fail = async (why: string): Promise<never> => {
    const logs = procs.map((p) => `--- ${p.name}\n${p.out().slice(-3000)}`).join('\n');
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`real cluster: ${why}\n${logs}`);
  };
  let url: string;
  let caPem: string;
  let token: string;
  let pki: { ca: string; caKey: string; saKey: string };
  const kubeconfigPath = join(dir, 'kubeconfig');
  if (opts.apiServer === 'kcm') {
    // kcm apiserver makes its own PKI and admin kubeconfig in its data dir.
    const data = join(dir, 'kcm');
    const p = run('kcm apiserver', process.execPath, ['--enable-source-maps', kcmBin, 'apiserver', '--data-dir', data, '--secure-port', '0', '--service-cluster-ip-range=10.0.0.0/24'], dir);
    procs.push(p);
    try {
      url = await waitFor(() => /listening on (https:\/\/\S+)/.exec(p.out())?.[1], readyTimeoutMs, 'kcm apiserver to listen');
    } catch (e) {
      return fail((e as Error).message);
    }
    const pk = join(data, 'pki');
    caPem = readFileSync(join(pk, 'ca.crt'), 'utf8');
    token = readFileSync(join(pk, 'admin.token'), 'utf8').trim();
    pki = { ca: join(pk, 'ca.crt'), caKey: join(pk, 'ca.key'), saKey: join(pk, 'sa.key') };
  } else {
    const real = writePki(dir);
    pki = real;
    token = real.token;
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    procs.push(
      run('etcd', 'etcd', [
        '--name=default',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        '--log-level=warn',
      ], dir),
    );
    procs.push(
      run('kube-apiserver', join(bin, 'kube-apiserver'), [
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        '--insecure-port=0',
        `--tls-cert-file=${real.cert}`,
        `--tls-private-key-file=${real.key}`,
        `--client-ca-file=${real.ca}`,
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        '--authorization-mode=Node,RBAC',
        `--service-account-key-file=${real.saPub}`,
        `--service-account-signing-key-file=${real.saKey}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        `--cert-dir=${join(dir, 'certs')}`,
      ], dir),
    );
    url = `https://127.0.0.1:${apiPort}`;
    caPem = readFileSync(real.ca, 'utf8');
  }
  writeFileSync(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'real', cluster: { server: url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
      users: [{ name: 'admin', user: { token } }],
      contexts: [{ name: 'real', context: { cluster: 'real', user: 'admin', namespace: 'default' } }],
      'current-context': 'real',
    }),
  );
  const { api, dispatcher } = adminApi(url, caPem, token);
  try {
    await waitFor(async () => (await api('GET', '/readyz')).status === 200, readyTimeoutMs, 'the API server /readyz');
  } catch (e) {
    await dispatcher.close();
    return fail((e as Error).message);
  }
  const pids = () => Object.fromEntries(procs.map((p) => [p.name, p.child.pid ?? 0]));
  const stop = async (o: { keepDataDir?: boolean } = {}) => {
    await dispatcher.close().catch(() => undefined);
    await stopAll();
    if (!o.keepDataDir) rmSync(dir, { recursive: true, force: true });
  };
  const kubectl = (a: string[], o?: KubectlOptions) => runKubectl(kubeconfigPath, a, o);
  const common = { dataDir: dir, kubeconfigPath, url, caPem, adminToken: token, api, pids, stop };
  if (opts.apiServerOnly) {
    const server = procs[procs.length - 1]!;
    return {
      ...common,
      child: server.child,
      exited: new Promise((r) => server.child.once('exit', (code, signal) => r({ code, signal }))),
      stdout: () => server.out(),
      stderr: () => procs.map((p) => `--- ${p.name}\n${p.out().slice(-2000)}`).join('\n'),
      kubectl,
      kubectlOk: kubectlOkWith(kubectl),
    };
  }

  // kube-scheduler 1.20 waits for a policy/v1beta1 PodDisruptionBudget informer that kcm apiserver (as current
  // Kubernetes) does not serve, so on kcm apiserver the scheduler is kcm's.
  // No secure port (10259 by default, as kube-scheduler's): clusters run side by side.
  if (opts.apiServer === 'kcm') procs.push(run('kcm scheduler', process.execPath, ['--enable-source-maps', kcmBin, 'scheduler', `--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0'], dir));
  else procs.push(run('kube-scheduler', join(bin, 'kube-scheduler'), [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--port=0', '--secure-port=0'], dir));
  const cmFlags = [
    `--kubeconfig=${kubeconfigPath}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--allocate-node-cidrs=true',
    '--cluster-cidr=10.244.0.0/16',
    '--service-cluster-ip-range=10.0.0.0/24',
    `--root-ca-file=${pki.ca}`,
    `--service-account-private-key-file=${pki.saKey}`,
    `--cluster-signing-cert-file=${pki.ca}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    '--use-service-account-credentials=false',
    ...(opts.controllerManagerArgs ?? []),
    ...(opts.withKubeconfigFlags ?? []).map((f) => `${f}=${kubeconfigPath}`),
  ];
  if (opts.controllerManager === 'real') procs.push(run('kube-controller-manager', join(bin, 'kube-controller-manager'), ['--port=0', ...cmFlags], dir));
  else procs.push(run('kcm controller-manager', process.execPath, ['--enable-source-maps', kcmBin, 'controller-manager', ...cmFlags], dir));
  const cm = procs[procs.length - 1]!;
  const nodes = opts.nodes ?? 3;
  procs.push(run('kcm nodes', process.execPath, ['--enable-source-maps', kcmBin, 'nodes', `--kubeconfig=${kubeconfigPath}`, `--nodes=${nodes}`], dir));

  try {
    await waitFor(
      async () => {
        const dead = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
        if (dead) throw new Error(`${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode})`);
        const r = await kubectl(['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
        const ready = r.stdout.split('\n').filter((s) => s === 'True').length;
        if (ready < nodes) return false;
        return (await kubectl(['get', 'serviceaccount', 'default', '-n', 'default'])).code === 0;
      },
      readyTimeoutMs,
      'Ready nodes and the default service account',
      500,
    );
  } catch (e) {
    await dispatcher.close();
    return fail((e as Error).message);
  }

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => cm.child.once('exit', (code, signal) => r({ code, signal })));
  return {
    ...common,
    child: cm.child,
    exited,
    stdout: () => cm.out(),
    stderr: () => procs.map((p) => `--- ${p.name}\n${p.out().slice(-2000)}`).join('\n'),
    kubectl,
    kubectlOk: kubectlOkWith(kubectl),
  };
}
