/**
 * Workload throughput on `kcm up`: time for 100 Deployments of 10 replicas to
 * become fully available, then for deleting them all by cascade (background
 * propagation: the garbage collector removes 100 ReplicaSets and 1,000 pods)
 * until no pod is left; and for one 1,000-replica ReplicaSet to have all pods
 * available. At kube-controller-manager's default client limits
 * (--kube-api-qps 20 / --kube-api-burst 30), at kcm up's defaults (200/400)
 * and with the limits raised (2000). Each scenario runs on a fresh `kcm up`
 * with 12 simulated nodes (110 pods each), started through the e2e harness;
 * polling is bounded.
 */
import { startKcm, waitFor, type KcmProcess } from '../test/e2e/harness.js';

const DEPLOYMENTS = 100;
const REPLICAS = 10;
const BIG_RS = 1000;
const TIMEOUT_MS = 15 * 60 * 1000;
/** Simulated nodes: 110 pods fit on each, so 1,000 replicas need at least 10 (kcm up's default 3 holds 330). */
const NODES = 12;

/** Deployment `bench-<i>` of `replicas` (default REPLICAS) nginx pods (`podSpec` adds to the pod spec). */
export function deployment(i: number, podSpec: Record<string, unknown> = {}, replicas = REPLICAS): object {
  const name = `bench-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { ...podSpec, containers: [{ name: 'app', image: 'nginx:1' }] } },
    },
  };
}

async function count(kcm: KcmProcess, path: string, field: 'availableReplicas'): Promise<number> {
  const r = await kcm.api('GET', path);
  const items = (r.json as { items?: Array<{ status?: Record<string, number> }> }).items ?? [];
  return items.reduce((n, o) => n + (o.status?.[field] ?? 0), 0);
}

async function deployments(kcm: KcmProcess): Promise<{ availableMs: number; cascadeMs: number }> {
  const start = performance.now();
  for (let i = 0; i < DEPLOYMENTS; i++) {
    const r = await kcm.api('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(i));
    if (r.status !== 201) throw new Error(`create deployment ${i}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
  }
  await waitFor(async () => (await count(kcm, '/apis/apps/v1/namespaces/default/deployments', 'availableReplicas')) === DEPLOYMENTS * REPLICAS, TIMEOUT_MS, 'deployments available', 500);
  const availableMs = performance.now() - start;
  const del = performance.now();
  for (let i = 0; i < DEPLOYMENTS; i++) {
    const r = await kcm.api('DELETE', `/apis/apps/v1/namespaces/default/deployments/bench-${i}`, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
    if (r.status !== 200 && r.status !== 202) throw new Error(`delete deployment ${i}: ${r.status}`);
  }
  await waitFor(async () => ((await kcm.api('GET', '/api/v1/namespaces/default/pods')).json as { items?: unknown[] }).items?.length === 0, TIMEOUT_MS, 'every pod gone', 500);
  return { availableMs, cascadeMs: performance.now() - del };
}

async function bigReplicaSet(kcm: KcmProcess): Promise<number> {
  const start = performance.now();
  const r = await kcm.api('POST', '/apis/apps/v1/namespaces/default/replicasets', {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'big' },
    spec: { replicas: BIG_RS, selector: { matchLabels: { app: 'big' } }, template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } } },
  });
  if (r.status !== 201) throw new Error(`create replicaset: ${r.status}`);
  await waitFor(async () => (await count(kcm, '/apis/apps/v1/namespaces/default/replicasets', 'availableReplicas')) === BIG_RS, TIMEOUT_MS, 'replica set available', 500);
  return performance.now() - start;
}

async function withKcm<T>(args: string[], body: (kcm: KcmProcess) => Promise<T>): Promise<T> {
  const kcm = await startKcm('up', ['--controller-manager-secure-port', '0', '--nodes', String(NODES), ...args], { readyTimeoutMs: 60_000 });
  try {
    return await body(kcm);
  } finally {
    await kcm.stop();
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function run(): Promise<string[]> {
  const limits: Array<[string, string[]]> = [
    ['QPS 20/burst 30, upstream default', ['--kube-api-qps', '20', '--kube-api-burst', '30']],
    ['QPS 200/burst 400, kcm up default', []],
    ['QPS 2000', ['--kube-api-qps', '2000', '--kube-api-burst', '2000']],
  ];
  const out: string[] = [];
  for (const [label, args] of limits) {
    const d = await withKcm(args, deployments);
    out.push(`${DEPLOYMENTS} Deployments x ${REPLICAS} replicas available (${label}): ${seconds(d.availableMs)}`);
    out.push(`cascade delete of those ${DEPLOYMENTS} Deployments until no pod is left (${label}): ${seconds(d.cascadeMs)}`);
    out.push(`ReplicaSet of ${BIG_RS} replicas available (${label}): ${seconds(await withKcm(args, bigReplicaSet))}`);
  }
  return out;
}
