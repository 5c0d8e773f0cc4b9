/**
 * Workload throughput on `kcm up`: time for 100 Deployments of 10 replicas to
 * become fully available, and for one 1,000-replica ReplicaSet to have all
 * pods available, at kcm up's default controller-manager QPS and with the
 * limits raised (--kube-api-qps / --kube-api-burst 2000). Each scenario runs
 * on a fresh `kcm up` started through the e2e harness; polling is bounded.
 */
import { startKcm, waitFor, type KcmProcess } from '../test/e2e/harness.js';

const DEPLOYMENTS = 100;
const REPLICAS = 10;
const BIG_RS = 1000;
const TIMEOUT_MS = 15 * 60 * 1000;

function deployment(i: number): object {
  const name = `bench-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } },
    },
  };
}

async function count(kcm: KcmProcess, path: string, field: 'availableReplicas'): Promise<number> {
  const r = await kcm.api('GET', path);
  const items = (r.json as { items?: Array<{ status?: Record<string, number> }> }).items ?? [];
  return items.reduce((n, o) => n + (o.status?.[field] ?? 0), 0);
}

async function deployments(kcm: KcmProcess): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < DEPLOYMENTS; i++) {
    const r = await kcm.api('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(i));
    if (r.status !== 201) throw new Error(`create deployment ${i}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
  }
  await waitFor(async () => (await count(kcm, '/apis/apps/v1/namespaces/default/deployments', 'availableReplicas')) === DEPLOYMENTS * REPLICAS, TIMEOUT_MS, 'deployments available', 500);
  return performance.now() - start;
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

async function scenario(label: string, args: string[], body: (kcm: KcmProcess) => Promise<number>): Promise<string> {
  const kcm = await startKcm('up', ['--controller-manager-secure-port', '0', ...args], { readyTimeoutMs: 60_000 });
  try {
    const ms = await body(kcm);
    return `${label}: ${(ms / 1000).toFixed(1)} s`;
  } finally {
    await kcm.stop();
  }
}

export async function run(): Promise<string[]> {
  const raised = ['--kube-api-qps', '2000', '--kube-api-burst', '2000'];
  return [
    await scenario(`${DEPLOYMENTS} Deployments x ${REPLICAS} replicas available (default QPS)`, [], deployments),
    await scenario(`${DEPLOYMENTS} Deployments x ${REPLICAS} replicas available (QPS 2000)`, raised, deployments),
    await scenario(`ReplicaSet of ${BIG_RS} replicas available (default QPS)`, [], bigReplicaSet),
    await scenario(`ReplicaSet of ${BIG_RS} replicas available (QPS 2000)`, raised, bigReplicaSet),
  ];
}
