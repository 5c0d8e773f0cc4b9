/**
 * The real kube-controller-manager v1.20 and `kcm controller-manager` side by
 * side, each on a fresh real control plane (etcd, kube-apiserver,
 * kube-scheduler from ../shared/tools/build-real-k8s.sh) with 10 simulated
 * nodes (`kcm nodes`): 100 Deployments x 10 replicas created until all are
 * available (converge), then deleted with background propagation until no
 * pod is left (cascade). Per controller manager: wall time, its process's CPU
 * (user + system, from /proc), its peak RSS (VmHWM), and the requests the API
 * server served meanwhile (apiserver_request_total over every client: the
 * scheduler and the nodes do the same work in both runs, so the difference
 * is the controller manager's). At the default client limits (QPS 20/burst
 * 30) and raised ones (1000).
 *
 * Needs the real binaries in $KCM_REAL_BIN (default /tmp/k8sbin); prints a
 * line saying it skipped without them. Linux only (/proc).
 */
import { waitFor, type KcmProcess } from '../test/e2e/harness.js';
import { startRealCluster } from '../test/e2e/real-cluster.js';
import { deployment } from './deployment.bench.js';
import { cpuSeconds, peakRssMB, ratio, realBinaries } from './lib/proc.js';

const DEPLOYMENTS = 100;
const REPLICAS = 10; // as deployment.bench.ts's deployment()
const NODES = 10;
const TIMEOUT_MS = 15 * 60 * 1000;

/** apiserver_request_total summed over every label set. */
async function apiRequests(c: KcmProcess): Promise<number> {
  const r = await fetchText(c, '/metrics');
  let n = 0;
  for (const line of r.split('\n')) if (line.startsWith('apiserver_request_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

async function fetchText(c: KcmProcess, path: string): Promise<string> {
  const r = await c.api('GET', path);
  return typeof r.json === 'string' ? r.json : JSON.stringify(r.json);
}

async function available(c: KcmProcess): Promise<number> {
  const r = await c.api('GET', '/apis/apps/v1/namespaces/default/deployments');
  return ((r.json as { items?: Array<{ status?: { availableReplicas?: number } }> }).items ?? []).reduce((n, d) => n + (d.status?.availableReplicas ?? 0), 0);
}

interface Phase {
  seconds: number;
  cpu: number;
  requests: number;
}

interface Result {
  converge: Phase;
  cascade: Phase;
  rssMB: number;
}

async function scenario(cm: 'real' | 'kcm', qps: number, burst: number): Promise<Result> {
  const c = await startRealCluster({ controllerManager: cm, nodes: NODES, controllerManagerArgs: [`--kube-api-qps=${qps}`, `--kube-api-burst=${burst}`], readyTimeoutMs: 180_000 });
  const pid = c.child.pid!;
  try {
    const phase = async (body: () => Promise<void>): Promise<Phase> => {
      const [t0, c0, r0] = [performance.now(), cpuSeconds(pid), await apiRequests(c)];
      await body();
      return { seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds(pid) - c0, requests: (await apiRequests(c)) - r0 };
    };
    const converge = await phase(async () => {
      for (let i = 0; i < DEPLOYMENTS; i++) {
        const r = await c.api('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(i, { terminationGracePeriodSeconds: 0 }));
        if (r.status !== 201) throw new Error(`create deployment ${i}: ${r.status}`);
      }
      await waitFor(async () => (await available(c)) === DEPLOYMENTS * REPLICAS, TIMEOUT_MS, 'deployments available', 500);
    });
    const cascade = await phase(async () => {
      for (let i = 0; i < DEPLOYMENTS; i++) {
        const r = await c.api('DELETE', `/apis/apps/v1/namespaces/default/deployments/bench-${i}`, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
        if (r.status !== 200 && r.status !== 202) throw new Error(`delete deployment ${i}: ${r.status}`);
      }
      await waitFor(async () => ((await c.api('GET', '/api/v1/namespaces/default/pods')).json as { items?: unknown[] }).items?.length === 0, TIMEOUT_MS, 'every pod gone', 500);
    });
    return { converge, cascade, rssMB: peakRssMB(pid) };
  } finally {
    await c.stop();
  }
}

const fmt = (p: Phase) => `${p.seconds.toFixed(1)} s, CPU ${p.cpu.toFixed(1)} s, ${p.requests} API requests`;

export async function run(): Promise<string[]> {
  const { bin, missing } = realBinaries(['kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
  if (missing) return [missing];
  process.env.KCM_REAL_BIN = bin;
  const out: string[] = [];
  for (const [label, qps, burst] of [
    ['QPS 20/burst 30 (default)', 20, 30],
    ['QPS 1000', 1000, 1000],
  ] as const) {
    const real = await scenario('real', qps, burst);
    const kcm = await scenario('kcm', qps, burst);
    for (const p of ['converge', 'cascade'] as const) {
      out.push(`${p} of ${DEPLOYMENTS} Deployments x ${REPLICAS}, ${label}: real ${fmt(real[p])}; kcm ${fmt(kcm[p])}; kcm/real time ${ratio(kcm[p].seconds, real[p].seconds)}, CPU ${ratio(kcm[p].cpu, real[p].cpu)}, requests ${ratio(kcm[p].requests, real[p].requests)}`);
    }
    out.push(`controller manager peak RSS, ${label}: real ${real.rssMB.toFixed(0)} MB, kcm ${kcm.rssMB.toFixed(0)} MB; kcm/real ${ratio(kcm.rssMB, real.rssMB)}`);
  }
  return out;
}
