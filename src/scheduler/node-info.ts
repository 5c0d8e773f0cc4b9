/**
 * NodeInfo: one node with the pods assigned to it (bound or assumed) and the
 * aggregates the plugins read (framework.NodeInfo). PodInfo carries what is
 * parsed once per pod: requests and affinity terms.
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import {
  preferredAffinityTerms,
  preferredAntiAffinityTerms,
  requiredAffinityTerms,
  requiredAntiAffinityTerms,
  type AffinityTerm,
  type WeightedAffinityTerm,
} from './affinity-terms.js';
import type { Selector } from '../api/labels-selector.js';
import { DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, addResource, cloneResource, emptyResource, nodeAllocatable, podRequests, subtractResource, type Resource } from './resources.js';

export interface PodInfo {
  readonly pod: Pod;
  readonly requests: Resource;
  /** Requests with the scoring defaults for missing cpu / memory. */
  readonly nonZeroRequests: Resource;
  readonly requiredAffinityTerms: readonly AffinityTerm[];
  readonly requiredAntiAffinityTerms: readonly AffinityTerm[];
  readonly preferredAffinityTerms: readonly WeightedAffinityTerm[];
  readonly preferredAntiAffinityTerms: readonly WeightedAffinityTerm[];
  /** podHostPorts(pod), made once (a pod's ports cannot change). */
  readonly hostPorts: readonly HostPort[];
}

export function newPodInfo(pod: Pod): PodInfo {
  return {
    pod,
    requests: shared(podRequests(pod, false)),
    nonZeroRequests: shared(podRequests(pod, true)),
    requiredAffinityTerms: requiredAffinityTerms(pod),
    requiredAntiAffinityTerms: requiredAntiAffinityTerms(pod),
    preferredAffinityTerms: preferredAffinityTerms(pod),
    preferredAntiAffinityTerms: preferredAntiAffinityTerms(pod),
    hostPorts: hostPortsOf(pod),
  };
}

/** The requests most pods have (none; the scoring defaults for containers without any), one object each. */
const NO_REQUESTS: Resource = Object.freeze(emptyResource());
const DEFAULT_REQUESTS: Resource = Object.freeze({ ...emptyResource(), milliCPU: DEFAULT_MILLI_CPU_REQUEST, memory: DEFAULT_MEMORY_REQUEST });

/**
 * `r`, or the shared object of the same value: a PodInfo's requests are only read, and at 30,000 pods
 * the scheduler's and the kubelets' PodInfos held 120,000 Resources of about 270 bytes.
 */
function shared(r: Resource): Resource {
  if (r.scalar.size > 0 || r.ephemeralStorage !== 0) return r;
  if (r.milliCPU === 0 && r.memory === 0) return NO_REQUESTS;
  if (r.milliCPU === DEFAULT_MILLI_CPU_REQUEST && r.memory === DEFAULT_MEMORY_REQUEST) return DEFAULT_REQUESTS;
  return r;
}

export function podKey(pod: Pod): string {
  return pod.metadata?.uid || `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** One host port in use: `hostIP` defaults to 0.0.0.0, protocol to TCP. */
export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

/** The host ports a pod asks for (containers and sidecars with hostPort > 0). */
export function podHostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort });
    }
  }
  return out;
}

const NO_PORTS: readonly HostPort[] = Object.freeze([]);

/** podHostPorts, one shared empty list for the many pods without host ports (a PodInfo keeps it). */
function hostPortsOf(pod: Pod): readonly HostPort[] {
  const ports = podHostPorts(pod);
  return ports.length > 0 ? ports : NO_PORTS;
}

/** HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every IP of the same protocol and port. */
export function hostPortConflicts(used: readonly HostPort[], want: HostPort): boolean {
  for (const u of used) {
    if (u.port !== want.port || u.protocol !== want.protocol) continue;
    if (want.ip === '0.0.0.0' || u.ip === '0.0.0.0' || u.ip === want.ip) return true;
  }
  return false;
}

export interface NodeInfo {
  /** Undefined while pods are known on a node the cache has not seen (yet). */
  node: Node | undefined;
  readonly pods: Map<string, PodInfo>;
  readonly requested: Resource;
  readonly nonZeroRequested: Resource;
  allocatable: Resource;
  allowedPods: number;
  readonly usedPorts: HostPort[];
  /** Pods here with any (anti-)affinity; with required anti-affinity. */
  podsWithAffinity: number;
  podsWithRequiredAntiAffinity: number;
  /**
   * Matching-pod counts (namespace and selector as key) for the spreading
   * plugins, kept up to date as pods come and go: a count is made once per
   * node and selector, not once per scheduling cycle.
   */
  matchCounts?: Map<string, MatchCount> | undefined;
}

/** The pods of a node in `namespace` matching `selector`, terminating ones left out. */
export interface MatchCount {
  readonly selector: Selector;
  readonly namespace: string;
  n: number;
}

/** Whether the pod counts towards a MatchCount. */
export function countsTowards(pod: Pod, m: MatchCount): boolean {
  return !pod.metadata?.deletionTimestamp && (pod.metadata?.namespace ?? 'default') === m.namespace && m.selector.matches(pod.metadata?.labels ?? {});
}

function adjustCounts(info: NodeInfo, pod: Pod, delta: 1 | -1): void {
  if (info.matchCounts === undefined) return;
  for (const m of info.matchCounts.values()) if (countsTowards(pod, m)) m.n += delta;
}

export function newNodeInfo(node?: Node): NodeInfo {
  const info: NodeInfo = {
    node: undefined,
    pods: new Map(),
    requested: emptyResource(),
    nonZeroRequested: emptyResource(),
    allocatable: emptyResource(),
    allowedPods: 0,
    usedPorts: [],
    podsWithAffinity: 0,
    podsWithRequiredAntiAffinity: 0,
  };
  if (node) setNode(info, node);
  return info;
}

/** nodeAllocatable per Node object (informer objects are replaced, never changed; the result is only read). */
const allocatables = new WeakMap<Node, ReturnType<typeof nodeAllocatable>>();

export function setNode(info: NodeInfo, node: Node): void {
  info.node = node;
  let a = allocatables.get(node);
  if (a === undefined) allocatables.set(node, (a = nodeAllocatable(node as never)));
  info.allocatable = a.resource;
  info.allowedPods = a.allowedPods;
}

function hasAffinity(p: PodInfo): boolean {
  return (
    p.requiredAffinityTerms.length + p.requiredAntiAffinityTerms.length + p.preferredAffinityTerms.length + p.preferredAntiAffinityTerms.length > 0
  );
}

/** Adds (or replaces) a pod on the node. */
export function addPod(info: NodeInfo, p: PodInfo): void {
  const key = podKey(p.pod);
  if (info.pods.has(key)) removePod(info, p.pod);
  info.pods.set(key, p);
  adjustCounts(info, p.pod, 1);
  addResource(info.requested, p.requests);
  addResource(info.nonZeroRequested, p.nonZeroRequests);
  if (p.hostPorts.length > 0) info.usedPorts.push(...p.hostPorts);
  if (hasAffinity(p)) info.podsWithAffinity++;
  if (p.requiredAntiAffinityTerms.length > 0) info.podsWithRequiredAntiAffinity++;
}

/** Removes a pod; returns false when it was not there. */
export function removePod(info: NodeInfo, pod: Pod): boolean {
  const key = podKey(pod);
  const p = info.pods.get(key);
  if (!p) return false;
  info.pods.delete(key);
  adjustCounts(info, p.pod, -1);
  subtractResource(info.requested, p.requests);
  subtractResource(info.nonZeroRequested, p.nonZeroRequests);
  for (const hp of p.hostPorts) {
    const i = info.usedPorts.findIndex((u) => u.ip === hp.ip && u.protocol === hp.protocol && u.port === hp.port);
    if (i >= 0) info.usedPorts.splice(i, 1);
  }
  if (hasAffinity(p)) info.podsWithAffinity--;
  if (p.requiredAntiAffinityTerms.length > 0) info.podsWithRequiredAntiAffinity--;
  return true;
}

/** Same namespace, labels and terminating state: the pod counts for the same selectors. */
function countsAlike(a: Pod, b: Pod): boolean {
  if ((a.metadata?.namespace ?? '') !== (b.metadata?.namespace ?? '') || !a.metadata?.deletionTimestamp !== !b.metadata?.deletionTimestamp) return false;
  const x = a.metadata?.labels ?? {};
  const y = b.metadata?.labels ?? {};
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  for (const k of kx) if (x[k] !== y[k]) return false;
  return true;
}

/**
 * Replaces a pod already on the node by its newer version (addPod after removePod), leaving the
 * matching-pod counts alone when namespace, labels and terminating state are unchanged: a status
 * update (most updates of a running pod) changes no count.
 */
export function replacePod(info: NodeInfo, p: PodInfo): void {
  const prev = info.pods.get(podKey(p.pod));
  if (prev === undefined || !countsAlike(prev.pod, p.pod)) return addPod(info, p);
  const counts = info.matchCounts;
  info.matchCounts = undefined;
  addPod(info, p);
  info.matchCounts = counts;
}

/** An independent copy (pods shared, aggregates copied), for dry runs that add or remove pods. */
export function cloneNodeInfo(info: NodeInfo): NodeInfo {
  return {
    node: info.node,
    pods: new Map(info.pods),
    requested: cloneResource(info.requested),
    nonZeroRequested: cloneResource(info.nonZeroRequested),
    allocatable: info.allocatable,
    allowedPods: info.allowedPods,
    usedPorts: [...info.usedPorts],
    podsWithAffinity: info.podsWithAffinity,
    podsWithRequiredAntiAffinity: info.podsWithRequiredAntiAffinity,
  };
}

/** The pod's priority (spec.priority, set by the Priority admission plugin; 0 without). */
export function podPriority(pod: Pod): number {
  return pod.spec?.priority ?? 0;
}

/** A node's name, or '' for a node-less NodeInfo. */
export function nodeName(info: NodeInfo): string {
  return info.node?.metadata?.name ?? '';
}
