/**
 * The simulated resource usage of pods and nodes: what a simulated kubelet's
 * cAdvisor would measure, read by the resource metrics API that `kcm up`
 * serves (metrics.k8s.io, as metrics-server) and, later, by eviction
 * ranking.
 *
 * Default: each running container uses a steady fraction of its requests
 * (cpu 10 %, memory 50 %) with a deterministic noise of at most ±5 % that
 * changes from one sample (scrape) to the next; a container without a
 * request of a resource uses a small default (cpu 1m, memory 8Mi).
 *
 * Override: the annotation `kcm.dev/usage` on the pod, or else on its
 * controlling workload found through ownerReferences (Pod -> ReplicaSet ->
 * Deployment, StatefulSet, DaemonSet, Job, ReplicationController, CronJob),
 * with comma-separated `cpu=` and `memory=` terms. Each is a quantity (the
 * pod's total, shared by its running containers in proportion to their
 * requests, evenly when none has one) or a percentage of the requests
 * (`cpu=90%`: each container at 90 % of its request; containers without one
 * keep the default). Overridden values carry no noise; a resource the
 * annotation does not name keeps the default. The nearest annotation wins
 * as a whole (a pod's `cpu=` hides its Deployment's `memory=`). A
 * Deployment's ReplicaSets are skipped: the deployment controller copies the
 * Deployment's annotations onto them and keeps a copy after the Deployment
 * drops it.
 *
 *   kubectl annotate deploy web kcm.dev/usage=cpu=900m,memory=300Mi --overwrite
 *
 * A node uses the sum of its pods plus a system base (cpu 50m, memory 256Mi,
 * with noise).
 */
import type { Container, ContainerStatus, Pod } from 'kubernetes-types/core/v1.js';
import { canonicalQuantity, newQuantity, parseQuantity, quantityToString, valueBigInt } from '../api/quantity.js';

/** The annotation that sets a pod's (or a workload's pods') simulated usage. */
export const USAGE_ANNOTATION = 'kcm.dev/usage';
export const DEFAULT_CPU_REQUEST_FRACTION = 0.1;
export const DEFAULT_MEMORY_REQUEST_FRACTION = 0.5;
/** Usage of a container without a cpu request: 1m. */
export const DEFAULT_CPU_NANOCORES = 1_000_000;
/** Usage of a container without a memory request: 8Mi. */
export const DEFAULT_MEMORY_BYTES = 8 * 1024 * 1024;
/** The node's own usage (kubelet, runtime, system daemons) besides its pods. */
export const NODE_SYSTEM_CPU_NANOCORES = 50_000_000;
export const NODE_SYSTEM_MEMORY_BYTES = 256 * 1024 * 1024;
/** Largest relative deviation of the default usage from its steady value. */
export const USAGE_NOISE = 0.05;
/** Working sets are whole pages. */
const PAGE = 4096;

export type UsageTerm = { kind: 'absolute'; value: number } | { kind: 'percent'; percent: number };

export interface UsageOverride {
  /** Nanocores when absolute. */
  cpu?: UsageTerm;
  /** Bytes when absolute. */
  memory?: UsageTerm;
}

export class UsageAnnotationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageAnnotationError';
  }
}

/** Parses `cpu=500m,memory=200Mi` (either term optional; `cpu=80%` for a share of the requests). */
export function parseUsageAnnotation(value: string): UsageOverride {
  const out: UsageOverride = {};
  for (const raw of value.split(',')) {
    const term = raw.trim();
    if (!term) continue;
    const eq = term.indexOf('=');
    if (eq < 0) throw new UsageAnnotationError(`invalid ${USAGE_ANNOTATION} term ${JSON.stringify(term)}: want cpu=<quantity|percent> or memory=<quantity|percent>`);
    const key = term.slice(0, eq).trim();
    const v = term.slice(eq + 1).trim();
    if (key !== 'cpu' && key !== 'memory') throw new UsageAnnotationError(`invalid ${USAGE_ANNOTATION} resource ${JSON.stringify(key)}: want cpu or memory`);
    let t: UsageTerm;
    if (v.endsWith('%')) {
      const p = Number(v.slice(0, -1));
      if (!Number.isFinite(p) || p < 0 || v.length === 1) throw new UsageAnnotationError(`invalid ${USAGE_ANNOTATION} percentage ${JSON.stringify(v)}`);
      t = { kind: 'percent', percent: p };
    } else {
      let n: bigint;
      try {
        const q = parseQuantity(v);
        n = key === 'cpu' ? q.nanos : valueBigInt(q);
      } catch {
        throw new UsageAnnotationError(`invalid ${USAGE_ANNOTATION} quantity ${JSON.stringify(v)} for ${key}`);
      }
      if (n < 0n) throw new UsageAnnotationError(`invalid ${USAGE_ANNOTATION} quantity ${JSON.stringify(v)} for ${key}: negative`);
      t = { kind: 'absolute', value: Number(n) };
    }
    out[key] = t;
  }
  return out;
}

/** What owner lookups need of an object. */
export interface OwnerLike {
  metadata?: {
    annotations?: Record<string, string> | null;
    ownerReferences?: ReadonlyArray<{ kind: string; name: string; controller?: boolean | null }> | null;
  };
}

/** Finds `kind/name` in `namespace` (ReplicaSet, Deployment, ...), or undefined. */
export type OwnerLookup = (namespace: string, kind: string, name: string) => OwnerLike | undefined;

/**
 * The `kcm.dev/usage` value in force for `pod`: its own, else the nearest
 * controlling owner's (up to four levels: Pod -> ReplicaSet -> Deployment).
 */
export function effectiveUsageAnnotation(pod: Pod, lookup?: OwnerLookup): string | undefined {
  const own = pod.metadata?.annotations?.[USAGE_ANNOTATION];
  if (own !== undefined) return own;
  if (!lookup) return undefined;
  const ns = pod.metadata?.namespace ?? '';
  let cur: OwnerLike = pod as OwnerLike;
  for (let depth = 0; depth < 4; depth++) {
    const ref = cur.metadata?.ownerReferences?.find((r) => r.controller);
    if (!ref) return undefined;
    const owner = lookup(ns, ref.kind, ref.name);
    if (!owner) return undefined;
    // A Deployment's ReplicaSets carry copies of its annotations, kept after the Deployment loses one: not read.
    const copied = ref.kind === 'ReplicaSet' && !!owner.metadata?.ownerReferences?.some((r) => r.controller && r.kind === 'Deployment');
    const v = copied ? undefined : owner.metadata?.annotations?.[USAGE_ANNOTATION];
    if (v !== undefined) return v;
    cur = owner;
  }
  return undefined;
}

export interface ContainerUsage {
  name: string;
  cpuNanocores: number;
  memoryBytes: number;
}

/**
 * A deterministic value in [-1, 1] for `seed` and `sample` (the scrape's
 * index): the same inputs always give the same noise.
 */
export function noise(seed: string, sample: number): number {
  // FNV-1a over the UTF-16 code units, then murmur3's finalizer to spread the bits: a kubelet's
  // eviction manager samples every pod of its node every 10 s, and a SHA-256 per container and
  // resource was 1.5 % of the controller side's CPU at 1,000 nodes.
  const text = `${seed}#${sample}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return ((h >>> 0) / 0xffffffff) * 2 - 1;
}

function requestOf(c: Container, resource: 'cpu' | 'memory'): number | undefined {
  const q = c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource];
  if (q === undefined) return undefined;
  try {
    const p = parseQuantity(String(q));
    return resource === 'cpu' ? Number(p.nanos) : Number(valueBigInt(p));
  } catch {
    return undefined;
  }
}

function pageAlign(bytes: number): number {
  return Math.max(PAGE, Math.round(bytes / PAGE) * PAGE);
}

/** The running containers of `pod` (app containers and restartable init containers) with their specs. */
export function runningContainers(pod: Pod): { spec: Container; status: ContainerStatus }[] {
  const out: { spec: Container; status: ContainerStatus }[] = [];
  const statuses = new Map<string, ContainerStatus>();
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) statuses.set(s.name, s);
  const specs = [...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'), ...(pod.spec?.containers ?? [])];
  for (const spec of specs) {
    const status = statuses.get(spec.name);
    if (status?.state?.running) out.push({ spec, status });
  }
  return out;
}

export interface PodUsageOptions {
  /** The scrape's index (selects the noise); default 0. */
  sample?: number;
  /** The `kcm.dev/usage` value in force (see effectiveUsageAnnotation); undefined: the pod's own annotation. */
  annotation?: string;
}

/**
 * The simulated usage of each running container of `pod` (none when no
 * container runs). An invalid annotation is ignored (defaults apply).
 */
export function podUsage(pod: Pod, opts: PodUsageOptions = {}): ContainerUsage[] {
  const sample = opts.sample ?? 0;
  const text = opts.annotation ?? pod.metadata?.annotations?.[USAGE_ANNOTATION];
  let override: UsageOverride = {};
  if (text !== undefined) {
    try {
      override = parseUsageAnnotation(text);
    } catch {
      override = {};
    }
  }
  const running = runningContainers(pod);
  const seed = pod.metadata?.uid || `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  const compute = (resource: 'cpu' | 'memory'): number[] => {
    const fraction = resource === 'cpu' ? DEFAULT_CPU_REQUEST_FRACTION : DEFAULT_MEMORY_REQUEST_FRACTION;
    const fallback = resource === 'cpu' ? DEFAULT_CPU_NANOCORES : DEFAULT_MEMORY_BYTES;
    const requests = running.map((c) => requestOf(c.spec, resource));
    const defaults = running.map((c, i) => {
      const r = requests[i];
      const steady = r === undefined ? fallback : r * fraction;
      return steady * (1 + USAGE_NOISE * noise(`${seed}/${c.spec.name}/${resource}`, sample));
    });
    const t = override[resource];
    if (!t) return defaults;
    if (t.kind === 'percent') return running.map((_, i) => (requests[i] === undefined ? defaults[i]! : (requests[i]! * t.percent) / 100));
    const total = requests.reduce<number>((s, r) => s + (r ?? 0), 0);
    return running.map((_, i) => (total > 0 ? (t.value * (requests[i] ?? 0)) / total : t.value / running.length));
  };
  const cpu = compute('cpu');
  const memory = compute('memory');
  return running.map((c, i) => ({ name: c.spec.name, cpuNanocores: Math.max(0, Math.round(cpu[i]!)), memoryBytes: pageAlign(memory[i]!) }));
}

/** Total usage of a pod (for ranking, e.g. eviction): undefined when no container runs. */
export function podTotalUsage(pod: Pod, opts: PodUsageOptions = {}): { cpuNanocores: number; memoryBytes: number } | undefined {
  const cs = podUsage(pod, opts);
  if (cs.length === 0) return undefined;
  return { cpuNanocores: cs.reduce((s, c) => s + c.cpuNanocores, 0), memoryBytes: cs.reduce((s, c) => s + c.memoryBytes, 0) };
}

/** A node's usage: its pods' totals plus the system base (with noise for `sample`). */
export function nodeUsage(nodeName: string, pods: ReadonlyArray<{ cpuNanocores: number; memoryBytes: number }>, sample = 0): { cpuNanocores: number; memoryBytes: number } {
  const cpu = NODE_SYSTEM_CPU_NANOCORES * (1 + USAGE_NOISE * noise(`node/${nodeName}/cpu`, sample));
  const mem = NODE_SYSTEM_MEMORY_BYTES * (1 + USAGE_NOISE * noise(`node/${nodeName}/memory`, sample));
  return {
    cpuNanocores: Math.round(cpu) + pods.reduce((s, p) => s + p.cpuNanocores, 0),
    memoryBytes: pageAlign(mem) + pods.reduce((s, p) => s + p.memoryBytes, 0),
  };
}

/** Nanocores as metrics-server writes them (`1053784n`, canonical: `250m` when exact). */
export function formatCpu(nanocores: number): string {
  return canonicalQuantity(`${Math.round(nanocores)}n`);
}

/** Bytes as metrics-server writes them (BinarySI: `3508Ki`). */
export function formatMemory(bytes: number): string {
  return quantityToString(newQuantity(Math.round(bytes), 'BinarySI'));
}
