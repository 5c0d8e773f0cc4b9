/**
 * Resource-metric replica proposals from the resource metrics API
 * (metrics.k8s.io/v1beta1 PodMetrics, served by metrics-server), after
 * pkg/controller/podautoscaler/replica_calculator.go GetResourceReplicas and
 * GetRawResourceReplicas (calcPlainMetricReplicas):
 *
 * - the target's pods are grouped (groupPods): deleted and Failed pods are
 *   ignored; Pending pods are unready; pods without metrics are missing;
 *   for cpu, a pod is unready when it has no Ready condition or start time,
 *   or, within the cpu initialization period (5 min) after its start, when
 *   it is not Ready or its sample is not one window newer than its last
 *   readiness transition, or, after that period, when it is not Ready and
 *   has never been (its transition within the initial readiness delay, 30 s,
 *   of its start);
 * - usage ratio = utilization / target (or average usage / target) over the
 *   ready pods with metrics; within the tolerance (0.1) nothing changes;
 * - with missing pods, a scale-down counts them at max(100 %, target) of
 *   their requests (the target amount for raw values), a scale-up at 0; a
 *   scale-up counts unready pods at 0; the ratio is computed again, and a
 *   proposal that lands within the tolerance or flips the direction keeps
 *   the current count.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Client } from '../../client/interfaces.js';
import type { KubeObject } from '../../api/types.js';
import { milliValue } from '../../api/quantity.js';
import { parseTime } from '../../util/clock/clock.js';

export const POD_METRICS_GVR = Object.freeze({ group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods' });
/** --horizontal-pod-autoscaler-cpu-initialization-period default. */
export const DEFAULT_CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** --horizontal-pod-autoscaler-initial-readiness-delay default. */
export const DEFAULT_INITIAL_READINESS_DELAY_MS = 30_000;

interface PodMetrics extends KubeObject {
  timestamp?: string;
  window?: string;
  containers?: Array<{ name: string; usage?: Record<string, string> }>;
}

/** One pod's sample: milli-units of the resource, when it was taken, over which window. */
export interface PodMetric {
  value: number;
  timestamp: number;
  windowMs: number;
}

export type PodMetricsInfo = Map<string, PodMetric>;

export class MetricsUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MetricsUnavailableError';
  }
}

/** Go duration strings as metrics-server writes windows (`15s`, `1m0s`, `500ms`, `10.5s`). */
export function parseWindow(s: string | undefined): number {
  if (!s) return 0;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g;
  let m: RegExpExecArray | null;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };
  while ((m = re.exec(s))) total += Number(m[1]) * unit[m[2]!]!;
  return total;
}

/**
 * Reads per-pod usage of `resource` for pods matching `selector` in
 * `namespace` (metrics client getPodMetrics / getContainerMetrics: a pod
 * missing the resource in a container, or without containers, has no
 * metric). Throws MetricsUnavailableError with upstream's wording.
 */
export async function getResourceMetric(client: Client, resource: string, namespace: string, selector: string, container?: string): Promise<PodMetricsInfo> {
  let items: PodMetrics[];
  try {
    items = (await client.resource<PodMetrics>(POD_METRICS_GVR).namespace(namespace).list({ labelSelector: selector })).items;
  } catch (err) {
    throw new MetricsUnavailableError(`unable to get metrics for resource ${resource}: unable to fetch metrics from resource metrics API: ${(err as Error).message}`, { cause: err });
  }
  if (items.length === 0) throw new MetricsUnavailableError(`unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`);
  const out: PodMetricsInfo = new Map();
  for (const pm of items) {
    const timestamp = parseTime(pm.timestamp) ?? 0;
    const windowMs = parseWindow(pm.window);
    const name = pm.metadata?.name ?? '';
    if (container) {
      const c = (pm.containers ?? []).find((x) => x.name === container);
      const u = c?.usage?.[resource];
      if (u !== undefined) out.set(name, { value: milliValue(u), timestamp, windowMs });
      continue;
    }
    let sum = 0;
    let missing = (pm.containers ?? []).length === 0;
    for (const c of pm.containers ?? []) {
      const u = c.usage?.[resource];
      if (u === undefined) {
        missing = true;
        break;
      }
      sum += milliValue(u);
    }
    if (!missing) out.set(name, { value: sum, timestamp, windowMs });
  }
  return out;
}

/**
 * Requests of `resource` per pod in milli-units (calculatePodRequestsFromContainers):
 * the containers and restartable init containers (sidecars), or only
 * `container`; throws upstream's message when one has no request or the
 * container is not there. (Pod-level requests, behind the PodLevelResources
 * feature gate upstream, are not used.)
 */
export function calculatePodRequests(pods: readonly Pod[], resource: string, container?: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
    let sum = 0;
    let found = false;
    for (const c of containers) {
      if (container && c.name !== container) continue;
      const r = c.resources?.requests?.[resource];
      if (r === undefined) throw new Error(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata?.name}`);
      sum += milliValue(String(r));
      if (container) {
        found = true;
        break;
      }
    }
    if (container && !found) throw new Error(`container ${container} not found in Pod ${pod.metadata?.name}`);
    out.set(pod.metadata?.name ?? '', sum);
  }
  return out;
}

export interface GroupedPods {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

export interface ReadinessTiming {
  now: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

/** replica_calculator.go groupPods. */
export function groupPods(pods: readonly Pod[], metrics: PodMetricsInfo, resource: string, t: ReadinessTiming): GroupedPods {
  const g: GroupedPods = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    if (pod.metadata?.deletionTimestamp || pod.status?.phase === 'Failed') {
      g.ignored.add(name);
      continue;
    }
    if (pod.status?.phase === 'Pending') {
      g.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      g.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const cond = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
      const start = parseTime(pod.status?.startTime);
      let unready: boolean;
      if (!cond || start === undefined) unready = true;
      else {
        const transition = parseTime(cond.lastTransitionTime) ?? 0;
        if (start + t.cpuInitializationPeriodMs > t.now) {
          unready = cond.status === 'False' || metric.timestamp < transition + metric.windowMs;
        } else {
          unready = cond.status === 'False' && start + t.initialReadinessDelayMs > transition;
        }
      }
      if (unready) {
        g.unready.add(name);
        continue;
      }
    }
    g.readyPodCount++;
  }
  return g;
}

/** metricsclient.GetResourceUtilizationRatio. */
export function resourceUtilizationRatio(metrics: PodMetricsInfo, requests: Map<string, number>, targetUtilization: number): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let n = 0;
  for (const [pod, m] of metrics) {
    const r = requests.get(pod);
    if (r === undefined) continue;
    metricsTotal += m.value;
    requestsTotal += r;
    n++;
  }
  if (requestsTotal === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / n) };
}

export interface UtilizationProposal {
  replicas: number;
  utilization: number;
  rawAverage: number;
}

function withinTolerance(ratio: number, tolerance: number): boolean {
  return Math.abs(1 - ratio) <= tolerance;
}

/** GetResourceReplicas: the replica proposal for a target utilization (percent). */
export function utilizationReplicas(
  current: number,
  target: number,
  input: PodMetricsInfo,
  pods: readonly Pod[],
  resource: string,
  tolerance: number,
  container: string | undefined,
  timing: ReadinessTiming,
): UtilizationProposal {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const metrics: PodMetricsInfo = new Map(input);
  const g = groupPods(pods, metrics, resource, timing);
  for (const n of [...g.ignored, ...g.unready]) metrics.delete(n);
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  const requests = calculatePodRequests(pods, resource, container);
  const first = resourceUtilizationRatio(metrics, requests, target);
  const { ratio, utilization, rawAverage } = first;
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (withinTolerance(ratio, tolerance)) return { replicas: current, utilization, rawAverage };
    return { replicas: Math.ceil(ratio * g.readyPodCount), utilization, rawAverage };
  }
  if (g.missing.size > 0) {
    if (ratio < 1) {
      const fallback = Math.max(100, target);
      for (const n of g.missing) metrics.set(n, { value: Math.trunc(((requests.get(n) ?? 0) * fallback) / 100), timestamp: 0, windowMs: 0 });
    } else if (ratio > 1) {
      for (const n of g.missing) metrics.set(n, { value: 0, timestamp: 0, windowMs: 0 });
    }
  }
  if (scaleUpWithUnready) for (const n of g.unready) metrics.set(n, { value: 0, timestamp: 0, windowMs: 0 });
  const next = resourceUtilizationRatio(metrics, requests, target).ratio;
  if (withinTolerance(next, tolerance) || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return { replicas: current, utilization, rawAverage };
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > current) || (next > 1 && replicas < current)) return { replicas: current, utilization, rawAverage };
  return { replicas, utilization, rawAverage };
}

/** GetRawResourceReplicas (calcPlainMetricReplicas): the proposal for a target average value (milli-units). */
export function averageValueReplicas(current: number, targetUsage: number, input: PodMetricsInfo, pods: readonly Pod[], resource: string, tolerance: number, timing: ReadinessTiming): { replicas: number; usage: number } {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const metrics: PodMetricsInfo = new Map(input);
  const g = groupPods(pods, metrics, resource, timing);
  for (const n of [...g.ignored, ...g.unready]) metrics.delete(n);
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  const ratioOf = (m: PodMetricsInfo) => {
    let sum = 0;
    for (const v of m.values()) sum += v.value;
    const usage = Math.trunc(sum / m.size);
    return { ratio: usage / targetUsage, usage };
  };
  const { ratio, usage } = ratioOf(metrics);
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (withinTolerance(ratio, tolerance)) return { replicas: current, usage };
    return { replicas: Math.ceil(ratio * g.readyPodCount), usage };
  }
  if (g.missing.size > 0 && ratio !== 1) {
    for (const n of g.missing) metrics.set(n, { value: ratio < 1 ? targetUsage : 0, timestamp: 0, windowMs: 0 });
  }
  if (scaleUpWithUnready) for (const n of g.unready) metrics.set(n, { value: 0, timestamp: 0, windowMs: 0 });
  const next = ratioOf(metrics).ratio;
  if (withinTolerance(next, tolerance) || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return { replicas: current, usage };
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > current) || (next > 1 && replicas < current)) return { replicas: current, usage };
  return { replicas, usage };
}
