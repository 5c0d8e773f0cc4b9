/**
 * Resource-metric replica proposals from the resource metrics API
 * (metrics.k8s.io/v1beta1 PodMetrics, served by metrics-server), after
 * pkg/controller/podautoscaler/replica_calculator.go GetResourceReplicas:
 * utilization = sum(usage) / sum(requests) of the target's pods, ratio =
 * utilization / target; within the tolerance (0.1) the count stays,
 * otherwise ceil(ratio * pods with metrics).
 *
 * Simplification: upstream also treats pods without metrics as 0 % / 100 %
 * and ignores unready pods while scaling up; kcm does not (yet).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Client } from '../../client/interfaces.js';
import type { KubeObject } from '../../api/types.js';
import { milliValue } from '../../api/quantity.js';

export const POD_METRICS_GVR = Object.freeze({ group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods' });

interface PodMetrics extends KubeObject {
  containers?: Array<{ name: string; usage?: Record<string, string> }>;
}

/** Milli-units of a quantity (cpu in millicores, memory in milli-bytes). */
function milli(q: string | undefined): number {
  if (!q) return 0;
  return milliValue(q);
}

export class MetricsUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MetricsUnavailableError';
  }
}

/**
 * Reads per-pod usage of `resource` for pods matching `selector` in `namespace`.
 * Throws MetricsUnavailableError with upstream's wording when the API fails.
 */
export async function getResourceMetric(client: Client, resource: string, namespace: string, selector: string, container?: string): Promise<Map<string, number>> {
  let items: PodMetrics[];
  try {
    items = (await client.resource<PodMetrics>(POD_METRICS_GVR).namespace(namespace).list({ labelSelector: selector })).items;
  } catch (err) {
    throw new MetricsUnavailableError(`unable to get metrics for resource ${resource}: unable to fetch metrics from resource metrics API: ${(err as Error).message}`, { cause: err });
  }
  if (items.length === 0) throw new MetricsUnavailableError(`unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`);
  const out = new Map<string, number>();
  for (const pm of items) {
    let sum = 0;
    let found = false;
    for (const c of pm.containers ?? []) {
      if (container && c.name !== container) continue;
      const u = c.usage?.[resource];
      if (u === undefined) continue;
      found = true;
      sum += milli(u);
    }
    if (found) out.set(pm.metadata?.name ?? '', sum);
  }
  return out;
}

/** Sum of `resource` requests over the pod's containers; throws when one container has none (upstream's message). */
export function podRequests(pod: Pod, resource: string, container?: string): number {
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) {
    if (container && c.name !== container) continue;
    const r = c.resources?.requests?.[resource];
    if (r === undefined) throw new Error(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata?.name}`);
    sum += milli(String(r));
  }
  return sum;
}

export interface UtilizationProposal {
  replicas: number;
  utilization: number;
  rawAverage: number;
}

/** The replica proposal for a target utilization (percent). */
export function utilizationReplicas(current: number, target: number, usage: Map<string, number>, pods: Pod[], resource: string, tolerance: number, container?: string): UtilizationProposal {
  let usageSum = 0;
  let requestSum = 0;
  let n = 0;
  for (const p of pods) {
    const u = usage.get(p.metadata?.name ?? '');
    if (u === undefined || p.metadata?.deletionTimestamp || p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') continue;
    usageSum += u;
    requestSum += podRequests(p, resource, container);
    n++;
  }
  if (n === 0) throw new Error(`did not receive metrics for targeted pods (pods might be unready)`);
  if (requestSum === 0) throw new Error(`missing request for ${resource}`);
  const utilization = Math.trunc((usageSum * 100) / requestSum);
  const ratio = utilization / target;
  const rawAverage = Math.trunc(usageSum / n);
  if (Math.abs(1 - ratio) <= tolerance) return { replicas: current, utilization, rawAverage };
  return { replicas: Math.ceil(ratio * n), utilization, rawAverage };
}
