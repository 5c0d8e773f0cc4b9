/**
 * The kubelet's eviction manager (pkg/kubelet/eviction), over simulated
 * usage: which signal is under its threshold, whether a new pod is admitted
 * on a node under pressure, which pod goes first, and the texts kubelet
 * writes. Pure: the node simulator observes, decides and writes.
 *
 * Signals and their default hard thresholds (kubelet's defaults):
 *   memory.available  < 100Mi   -> MemoryPressure, reclaim memory
 *   nodefs.available  < 10%     -> DiskPressure,   reclaim ephemeral-storage
 *   pid.available     (forced only: kcm simulates no processes) -> PIDPressure
 * One pod is evicted per observation (kubelet's synchronize evicts at most one
 * pod per monitoring interval, 10 s), with grace period 0 (hard thresholds).
 */
import type { Pod, Toleration } from 'kubernetes-types/core/v1.js';
import { tolerationsTolerateTaint } from '../api/taints.js';
import { parseQuantity, quantityToString, newQuantity, value } from '../api/quantity.js';

export const EVICTION_REASON = 'Evicted';
/** Kubelet's default hard threshold `memory.available<100Mi`. */
export const MEMORY_AVAILABLE_THRESHOLD_BYTES = 100 * 1024 * 1024;
/** Kubelet's default hard threshold `nodefs.available<10%`. */
export const NODEFS_AVAILABLE_THRESHOLD_FRACTION = 0.1;
/** system-cluster-critical and above: never evicted, always admitted (kubelettypes.IsCriticalPod). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';
export type ReclaimResource = 'memory' | 'ephemeral-storage' | 'pids';

export const RESOURCE_OF: Readonly<Record<PressureCondition, ReclaimResource>> = {
  MemoryPressure: 'memory',
  DiskPressure: 'ephemeral-storage',
  PIDPressure: 'pids',
};

/** Usage of one container as the stats provider reports it (bytes). */
export interface ContainerUsage {
  name: string;
  memoryBytes: number;
  /** Root fs plus logs. */
  ephemeralBytes?: number;
}

/** What an observation found for one resource: `available` against `threshold`, both in bytes (or counts). */
export interface SignalObservation {
  resource: ReclaimResource;
  threshold: number;
  available: number;
}

/** A critical pod: system priority, or a static or mirror pod (kubelettypes.IsCriticalPod). */
export function isCriticalPod(pod: Pod): boolean {
  if ((pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY) return true;
  const ann = pod.metadata?.annotations ?? {};
  return ann['kubernetes.io/config.mirror'] !== undefined || (ann['kubernetes.io/config.source'] !== undefined && ann['kubernetes.io/config.source'] !== 'api');
}

/** "[MemoryPressure DiskPressure]": Go's %v of a slice. */
function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

export interface AdmitResult {
  admit: boolean;
  reason?: string;
  message?: string;
}

/**
 * The eviction manager's admit handler: under MemoryPressure alone, only
 * BestEffort pods are rejected (unless they tolerate the memory-pressure
 * taint); under any other pressure every pod is; critical pods always pass.
 */
export function admitUnderPressure(pod: Pod, conditions: readonly PressureCondition[]): AdmitResult {
  if (conditions.length === 0 || isCriticalPod(pod)) return { admit: true };
  if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
    if (pod.status?.qosClass !== 'BestEffort') return { admit: true };
    const tolerations: Toleration[] | undefined = pod.spec?.tolerations;
    if (tolerationsTolerateTaint(tolerations, { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' })) return { admit: true };
  }
  return { admit: false, reason: EVICTION_REASON, message: `The node had condition: ${goList(conditions)}. ` };
}

function requestBytes(pod: Pod, container: string, resource: ReclaimResource): number {
  const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === container);
  const q = c?.resources?.requests?.[resource];
  return q === undefined ? 0 : value(parseQuantity(String(q)));
}

function usageOf(u: ContainerUsage, resource: ReclaimResource): number {
  return resource === 'memory' ? u.memoryBytes : resource === 'ephemeral-storage' ? (u.ephemeralBytes ?? 0) : 0;
}

function podUsage(usage: readonly ContainerUsage[], resource: ReclaimResource): number {
  return usage.reduce((n, u) => n + usageOf(u, resource), 0);
}

function podRequests(pod: Pod, resource: ReclaimResource): number {
  return (pod.spec?.containers ?? []).reduce((n, c) => n + requestBytes(pod, c.name, resource), 0);
}

/**
 * Pods in the order the kubelet evicts them (rankMemoryPressure,
 * rankDiskPressureFunc, rankPIDPressure): those using more than they request
 * first, then lower priority first, then the larger consumption (above
 * requests for memory) first. Critical pods are left out.
 */
export function rankForEviction(pods: readonly Pod[], resource: ReclaimResource, usage: (pod: Pod) => readonly ContainerUsage[] | undefined): Pod[] {
  const keyed = pods
    .filter((p) => !isCriticalPod(p))
    .map((pod) => {
      const u = usage(pod);
      const used = u ? podUsage(u, resource) : 0;
      const req = podRequests(pod, resource);
      return { pod, exceeds: u !== undefined && resource !== 'pids' && used > req, priority: pod.spec?.priority ?? 0, consumption: resource === 'memory' ? used - req : used };
    });
  keyed.sort((a, b) => {
    if (a.exceeds !== b.exceeds) return a.exceeds ? -1 : 1;
    if (a.priority !== b.priority) return a.priority - b.priority;
    return b.consumption - a.consumption;
  });
  return keyed.map((k) => k.pod);
}

/** A byte count as resource.NewQuantity(n, BinarySI).String() prints it. */
function binary(n: number): string {
  return quantityToString(newQuantity(Math.max(0, Math.round(n)), 'BinarySI'));
}

/**
 * The eviction message and event annotations (evictionMessage):
 * `The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. Container app was using 300Mi, request is 64Mi, has larger consumption of memory. `
 */
export function evictionMessage(pod: Pod, obs: SignalObservation, usage: readonly ContainerUsage[] | undefined): { message: string; annotations: Record<string, string> } {
  const resource = obs.resource;
  let message = `The node was low on resource: ${resource}. `;
  // kcm simulates no processes: a (forced) pid signal has no quantities to print.
  if (resource !== 'pids') message += `Threshold quantity: ${binary(obs.threshold)}, available: ${binary(obs.available)}. `;
  const offenders: string[] = [];
  const offenderUsage: string[] = [];
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const u of usage ?? []) {
    if (resource === 'pids' || !containers.some((c) => c.name === u.name)) continue;
    const used = usageOf(u, resource);
    const req = requestBytes(pod, u.name, resource);
    if (used > req) {
      message += `Container ${u.name} was using ${binary(used)}, request is ${req === 0 ? '0' : binary(req)}, has larger consumption of ${resource}. `;
      offenders.push(u.name);
      offenderUsage.push(binary(used));
    }
  }
  return {
    message,
    annotations: { offending_containers: offenders.join(','), offending_containers_usage: offenderUsage.join(','), starved_resource: resource },
  };
}

/**
 * The memory signal of a node: capacity minus the working sets of its pods and
 * the system's own use, against kubelet's 100Mi threshold.
 */
export function observeMemory(capacityBytes: number, usedBytes: number): SignalObservation {
  return { resource: 'memory', threshold: MEMORY_AVAILABLE_THRESHOLD_BYTES, available: capacityBytes - usedBytes };
}

/** Whether an observation is under its threshold (the node condition is True). */
export function thresholdMet(obs: SignalObservation): boolean {
  return obs.available < obs.threshold;
}
