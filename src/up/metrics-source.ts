/**
 * kcm up's resource metrics: a simulated metrics-server. Every
 * `--metric-resolution` (default 15 s, metrics-server's default) there is a
 * scrape: the usage model of src/nodes/usage.ts applied to the pods and
 * nodes in the API server's storage. Scrapes are taken lazily (the first
 * request after a resolution boundary takes the one for that boundary), so
 * an idle cluster costs nothing; what a request sees changed at most one
 * resolution ago, as with metrics-server.
 *
 * As metrics-server: a pod has metrics once all its running containers have
 * run for min(resolution, 10 s) at the scrape (two points, or a fresh
 * container's start as the first); the window is the resolution (shorter
 * for such fresh containers); only Running pods and Ready nodes appear; the
 * timestamp is the scrape's time. Pods on a node that is not Ready are
 * absent too (metrics-server cannot reach that kubelet).
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../api/types.js';
import type { MetricsObjectReader, NodeUsageSample, PodUsageSample, ResourceMetricsSource } from '../apiserver/metrics-api/types.js';
import { effectiveUsageAnnotation, formatCpu, formatMemory, nodeUsage, podTotalUsage, podUsage, runningContainers, type OwnerLike } from '../nodes/usage.js';
import { formatGoDuration } from '../nodes/restart-backoff.js';
import { parseTime, rfc3339, type Clock } from '../util/clock/clock.js';

export const DEFAULT_METRIC_RESOLUTION_MS = 15_000;
/** metrics-server's freshContainerMinMetricsResolution. */
const FRESH_CONTAINER_MIN_MS = 10_000;

export interface SimulatedMetricsOptions {
  clock: Clock;
  /** Scrape period (metrics-server --metric-resolution); default 15 s. */
  resolutionMs?: number;
}

interface Scrape {
  index: number;
  pods: Map<string, { uid: string | undefined; sample: PodUsageSample }>;
  nodes: Map<string, { uid: string | undefined; sample: NodeUsageSample }>;
}

/** The workload kinds a pod's usage annotation may come from, by kind. */
const OWNER_RESOURCES: Record<string, [group: string, resource: string]> = {
  ReplicaSet: ['apps', 'replicasets'],
  Deployment: ['apps', 'deployments'],
  StatefulSet: ['apps', 'statefulsets'],
  DaemonSet: ['apps', 'daemonsets'],
  Job: ['batch', 'jobs'],
  CronJob: ['batch', 'cronjobs'],
  ReplicationController: ['', 'replicationcontrollers'],
};

function key(o: { metadata?: { namespace?: string; name?: string } }): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

function isReady(n: Node): boolean {
  return (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Takes one scrape of everything in `reader` at `index * resolution`. */
export async function scrape(reader: MetricsObjectReader, index: number, resolutionMs: number): Promise<Scrape> {
  const at = index * resolutionMs;
  const timestamp = rfc3339(at);
  const [pods, nodes] = await Promise.all([reader.list('', 'pods'), reader.list('', 'nodes')]);
  const owners = new Map<string, Map<string, OwnerLike>>();
  const wanted = new Set<string>();
  for (const p of pods) for (const r of p.metadata?.ownerReferences ?? []) if (r.controller && OWNER_RESOURCES[r.kind]) wanted.add(r.kind);
  // A ReplicaSet's or Job's own owner (Deployment, CronJob) may carry the annotation too.
  if (wanted.has('ReplicaSet')) wanted.add('Deployment');
  if (wanted.has('Job')) wanted.add('CronJob');
  await Promise.all(
    [...wanted].map(async (kind) => {
      const [group, resource] = OWNER_RESOURCES[kind]!;
      const m = new Map<string, OwnerLike>();
      for (const o of await reader.list(group, resource)) m.set(key(o), o as OwnerLike);
      owners.set(kind, m);
    }),
  );
  const lookup = (ns: string, kind: string, name: string) => owners.get(kind)?.get(`${ns}/${name}`);
  const out: Scrape = { index, pods: new Map(), nodes: new Map() };
  const byNode = new Map<string, { cpuNanocores: number; memoryBytes: number }[]>();
  const freshMin = Math.min(resolutionMs, FRESH_CONTAINER_MIN_MS);
  // An unreachable kubelet is not scraped: its pods have no metrics either.
  const readyNodes = new Set(nodes.filter((n) => isReady(n as Node)).map((n) => n.metadata?.name ?? ''));
  for (const obj of pods) {
    const pod = obj as Pod;
    if (pod.status?.phase !== 'Running' || !readyNodes.has(pod.spec?.nodeName ?? '')) continue;
    const running = runningContainers(pod);
    if (running.length === 0) continue;
    const annotation = effectiveUsageAnnotation(pod, lookup);
    const opts = { sample: index, ...(annotation !== undefined ? { annotation } : { annotation: '' }) };
    const total = podTotalUsage(pod, opts);
    if (total && pod.spec?.nodeName) byNode.set(pod.spec.nodeName, [...(byNode.get(pod.spec.nodeName) ?? []), total]);
    let window = resolutionMs;
    let seen = true;
    for (const c of running) {
      const started = parseTime(c.status.state?.running?.startedAt) ?? 0;
      if (at - started < freshMin) seen = false;
      else window = Math.min(window, at - started);
    }
    if (!seen) continue;
    const containers = podUsage(pod, opts).map((c) => ({ name: c.name, usage: { cpu: formatCpu(c.cpuNanocores), memory: formatMemory(c.memoryBytes) } }));
    out.pods.set(key(pod), { uid: pod.metadata?.uid, sample: { timestamp, window: formatGoDuration(window), containers } });
  }
  for (const obj of nodes) {
    const node = obj as Node;
    if (!isReady(node)) continue;
    const name = node.metadata?.name ?? '';
    const u = nodeUsage(name, byNode.get(name) ?? [], index);
    out.nodes.set(name, { uid: node.metadata?.uid, sample: { timestamp, window: formatGoDuration(resolutionMs), usage: { cpu: formatCpu(u.cpuNanocores), memory: formatMemory(u.memoryBytes) } } });
  }
  return out;
}

/** The simulated metrics-server kcm up gives its API server. */
export function newSimulatedMetricsSource(opts: SimulatedMetricsOptions): ResourceMetricsSource {
  const res = opts.resolutionMs && opts.resolutionMs > 0 ? opts.resolutionMs : DEFAULT_METRIC_RESOLUTION_MS;
  let current: { index: number; scrape: Promise<Scrape> } | undefined;
  const latest = (reader: MetricsObjectReader): Promise<Scrape> => {
    const index = Math.floor(opts.clock.now() / res);
    if (!current || current.index !== index) {
      const p = scrape(reader, index, res);
      current = { index, scrape: p };
      // A failed scrape is retried by the next request.
      p.catch(() => {
        if (current?.scrape === p) current = undefined;
      });
    }
    return current.scrape;
  };
  const sameObject = (entry: { uid: string | undefined } | undefined, obj: KubeObject | Pod | Node) => !!entry && (!entry.uid || !obj.metadata?.uid || entry.uid === obj.metadata.uid);
  return {
    async podSamples(pods, reader) {
      const s = await latest(reader);
      return pods.map((p) => {
        const e = s.pods.get(key(p));
        return sameObject(e, p) ? e!.sample : undefined;
      });
    },
    async nodeSamples(nodes, reader) {
      const s = await latest(reader);
      return nodes.map((n) => {
        const e = s.nodes.get(n.metadata?.name ?? '');
        return sameObject(e, n) ? e!.sample : undefined;
      });
    },
  };
}
