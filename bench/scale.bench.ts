/**
 * How `kcm up` grows with the cluster: for each step (simulated nodes,
 * pods) a fresh `kcm up --nodes N` (API server in the main process, the
 * controller side in a child process), then Deployments of 1,000 replicas
 * (nginx, no requests) until P pods are available. Per step: time for the
 * nodes to be Ready, time from the first Deployment to every pod available,
 * peak RSS and CPU of each process and per pod, and, once settled (the
 * backlog of Events and status writes drained, up to 3 minutes), the API
 * requests per second the idle cluster costs (node heartbeats: Lease
 * renewals and status posts) with the API server's CPU meanwhile.
 *
 * KCM_BENCH_SCALE picks the steps, e.g. `10:1000,100:10000` (default
 * `10:1000,100:10000,1000:30000`). Linux only (/proc).
 */
import { countSchedulable, type NodeLike } from '../src/up/status.js';
import { readFileSync } from 'node:fs';
import { startKcm, waitFor, type KcmProcess } from '../test/e2e/harness.js';
import { deployment } from './deployment.bench.js';
import { cpuSeconds, peakRssMB } from './lib/proc.js';

const PER_DEPLOYMENT = 1000;
const IDLE_SECONDS = 30;
const TIMEOUT_MS = 20 * 60 * 1000;

function steps(): Array<[number, number]> {
  const spec = process.env.KCM_BENCH_SCALE ?? '10:1000,100:10000,1000:30000';
  return spec.split(',').map((s) => s.split(':').map(Number) as [number, number]);
}

function childPid(pid: number): number {
  const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  if (kids.length !== 1) throw new Error(`kcm up has ${kids.length} child processes, expected the controller side alone`);
  return kids[0]!;
}

async function items<T>(kcm: KcmProcess, path: string): Promise<T[]> {
  const r = await kcm.api('GET', path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
  return ((r.json as { items?: T[] }).items ?? []) as T[];
}

/** Nodes Ready and taking pods (no uninitialized or not-ready taint left): pods created before would not fit. */
async function readyNodes(kcm: KcmProcess): Promise<number> {
  return countSchedulable(await items<NodeLike>(kcm, '/api/v1/nodes'));
}

async function availablePods(kcm: KcmProcess): Promise<number> {
  const ds = await items<{ status?: { availableReplicas?: number } }>(kcm, '/apis/apps/v1/namespaces/default/deployments');
  return ds.reduce((n, d) => n + (d.status?.availableReplicas ?? 0), 0);
}

/** apiserver_request_total summed per resource (watches excluded: they are counted when they end). */
async function requestsByResource(kcm: KcmProcess): Promise<Map<string, number>> {
  const r = await kcm.api('GET', '/metrics');
  const text = typeof r.json === 'string' ? r.json : '';
  const by = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] || '(other)';
    by.set(resource, (by.get(resource) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return by;
}

/** A controller-side restart (lost Lease, crash) costs a re-list and shows in the times: reported with its cause. */
function restartsOf(kcm: KcmProcess): { restarts: number; causes: string[] } {
  const restarts = (kcm.stdout().match(/controller side restarted/g) ?? []).length;
  const causes = kcm
    .stderr()
    .split('\n')
    .filter((l) => /exited unexpectedly|leaderelection lost|failed to renew|controller side failed|lost the lease/i.test(l))
    .slice(0, 6);
  return { restarts, causes };
}

async function step(nodes: number, pods: number): Promise<string[]> {
  const t0 = performance.now();
  const kcm = await startKcm('up', ['--nodes', String(nodes)], { readyTimeoutMs: 300_000 });
  try {
    await waitFor(async () => (await readyNodes(kcm)) === nodes, 600_000, `${nodes} Ready nodes`, 1000);
    const nodesReadyS = (performance.now() - t0) / 1000;
    const apiPid = kcm.child.pid!;
    const sidePid = childPid(apiPid);
    const [api0, side0] = [cpuSeconds(apiPid), cpuSeconds(sidePid)];
    const t1 = performance.now();
    for (let i = 0, left = pods; left > 0; i++, left -= PER_DEPLOYMENT) {
      const r = await kcm.api('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(i, { terminationGracePeriodSeconds: 0 }, Math.min(PER_DEPLOYMENT, left)));
      if (r.status !== 201) throw new Error(`create deployment ${i}: ${r.status}`);
    }
    let available = 0;
    try {
      await waitFor(async () => (available = await availablePods(kcm)) === pods, TIMEOUT_MS, `${pods} available pods`, 2000);
    } catch (err) {
      // What a failed step needs to be understood: how far it got, and the controller side's restarts and their causes.
      const { restarts, causes } = restartsOf(kcm);
      throw new Error(`${(err as Error).message}: ${available} available; controller side restarted ${restarts} times${causes.length ? `: ${causes.join(' | ')}` : ''}`, { cause: err });
    }
    const availableS = (performance.now() - t1) / 1000;
    const [apiCpu, sideCpu] = [cpuSeconds(apiPid) - api0, cpuSeconds(sidePid) - side0];
    const [apiRss, sideRss] = [peakRssMB(apiPid), peakRssMB(sidePid)];
    // Idle: wait for the backlog (Events, status writes) to drain, then count what heartbeats cost.
    // Settled = a 5 s window with fewer requests than twice the nodes' Lease renewals (one per node every
    // 10 s), or 3 minutes.
    const settleStart = performance.now();
    for (let prev = await requestsByResource(kcm); performance.now() - settleStart < 180_000; ) {
      await new Promise((r) => setTimeout(r, 5000));
      const cur = await requestsByResource(kcm);
      let n = 0;
      for (const [k, v] of cur) n += v - (prev.get(k) ?? 0);
      prev = cur;
      if (n / 5 < Math.max(2, (2 * nodes) / 10)) break;
    }
    const settleS = (performance.now() - settleStart) / 1000;
    const [r0, c0] = [await requestsByResource(kcm), cpuSeconds(apiPid)];
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const [r1, c1] = [await requestsByResource(kcm), cpuSeconds(apiPid)];
    const rate = (res?: string) => {
      let n = 0;
      for (const [k, v] of r1) if (!res || k === res) n += v - (r0.get(k) ?? 0);
      return n / IDLE_SECONDS;
    };
    const perPodKB = ((apiRss + sideRss) * 1024) / pods;
    const { restarts, causes } = restartsOf(kcm);
    return [
      `${nodes} nodes, ${pods} pods: controller side restarted ${restarts} times${causes.length > 0 ? `: ${causes.join(' | ')}` : ''}`,
      `${nodes} nodes, ${pods} pods: nodes Ready ${nodesReadyS.toFixed(1)} s after start; all pods available ${availableS.toFixed(1)} s after the first Deployment`,
      `${nodes} nodes, ${pods} pods: peak RSS API server ${apiRss.toFixed(0)} MB, controller side ${sideRss.toFixed(0)} MB, ${(apiRss + sideRss).toFixed(0)} MB in all (${perPodKB.toFixed(0)} KB per pod); CPU to converge API server ${apiCpu.toFixed(1)} s, controller side ${sideCpu.toFixed(1)} s`,
      `${nodes} nodes, ${pods} pods, idle (settled ${settleS.toFixed(0)} s after convergence): ${rate().toFixed(1)} API requests/s (leases ${rate('leases').toFixed(1)}/s, nodes ${rate('nodes').toFixed(1)}/s), API server CPU ${((100 * (c1 - c0)) / IDLE_SECONDS).toFixed(1)} %`,
    ];
  } finally {
    await kcm.stop();
  }
}

export async function run(): Promise<string[]> {
  const out: string[] = [];
  for (const [nodes, pods] of steps()) out.push(...(await step(nodes, pods)));
  return out;
}
