/**
 * The Node and Lease objects a kubelet registers and keeps fresh
 * (pkg/kubelet/kubelet_node_status.go, pkg/kubelet/nodestatus/setters.go,
 * pkg/kubelet/nodelease).
 */
import { createHash } from 'node:crypto';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node, NodeCondition, NodeStatus, Taint } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../api/types.js';
import { compare } from '../api/quantity.js';
import { rfc3339, rfc3339Micro } from '../util/clock/clock.js';

/** Namespace of node heartbeat leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's default nodeLeaseDurationSeconds. */
export const LEASE_DURATION_SECONDS = 40;
/** The annotation that pauses a simulated node's heartbeats (value `paused`). */
export const HEARTBEAT_ANNOTATION = 'kcm.dev/heartbeat';
/**
 * What became of a simulated node's instance in the local cloud (`kcm nodes
 * delete-instance`): `deleted` or `shutdown`. Either stops its kubelet (as a
 * paused heartbeat); a deleted instance's Node is not registered again.
 */
export const INSTANCE_ANNOTATION = 'kcm.dev/instance';

/**
 * Puts a simulated node under pressure: a comma-separated subset of
 * `memory`, `disk`, `pid` (e.g. `kcm.dev/pressure: memory,disk`). Its
 * kubelet then reports MemoryPressure / DiskPressure / PIDPressure True with
 * the kubelet's reasons and events, and the node lifecycle controller taints
 * the node (node.kubernetes.io/memory-pressure:NoSchedule, ...). Removing a
 * value (or the annotation) relieves it.
 */
export const PRESSURE_ANNOTATION = 'kcm.dev/pressure';

export type PressureKind = 'memory' | 'disk' | 'pid';
const PRESSURE_KINDS: readonly PressureKind[] = ['memory', 'disk', 'pid'];

/** The pressures `kcm.dev/pressure` asks for (unknown words are ignored), sorted. */
export function pressureOf(node: { metadata?: { annotations?: Record<string, string> } } | undefined): PressureKind[] {
  const v = node?.metadata?.annotations?.[PRESSURE_ANNOTATION];
  if (!v) return [];
  const want = new Set(v.split(',').map((x) => x.trim().toLowerCase()));
  return PRESSURE_KINDS.filter((k) => want.has(k));
}

/** True when the node's instance is deleted or shut down in the local cloud. */
export function isInstanceDown(node: { metadata?: { annotations?: Record<string, string> } } | undefined): boolean {
  const v = node?.metadata?.annotations?.[INSTANCE_ANNOTATION];
  return v === 'deleted' || v === 'shutdown';
}

export interface NodeIdentity {
  name: string;
  /** Index among the simulated nodes (0-based). */
  index: number;
  internalIP: string;
  /** Pod range when the node has no spec.podCIDR. */
  defaultPodCIDR: string;
}

export interface NodeTemplate {
  capacity: Record<string, string>;
  /** Allocatable (defaults to capacity). */
  allocatable?: Record<string, string>;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  taints: Taint[];
  kubeletVersion: string;
  architecture: string;
  /** status.daemonEndpoints.kubeletEndpoint.Port (default 10250). */
  kubeletPort?: number;
}

/** InternalIP of simulated node `i`: 172.18.0.2, 172.18.0.3, ... */
export function nodeInternalIP(i: number): string {
  // 250 nodes per /24: .2 .. .251 of 172.18.0.0, then 172.18.1.0, ...
  return `172.18.${Math.floor(i / 250)}.${2 + (i % 250)}`;
}

/** The built-in pod CIDR of simulated node `i`. */
export function defaultPodCIDR(i: number): string {
  return `10.244.${i % 256}.0/24`;
}

function hex32(seed: string): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, 32);
}

/** A node to register (the kubelet's initialNode): labels, taints, annotations; no status. */
export function newNodeObject(id: NodeIdentity, t: NodeTemplate): Node & KubeObject & { metadata: { name: string } } {
  const node: Node & KubeObject & { metadata: { name: string } } = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: id.name,
      labels: {
        'beta.kubernetes.io/arch': t.architecture,
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': t.architecture,
        'kubernetes.io/hostname': id.name,
        'kubernetes.io/os': 'linux',
        ...t.labels,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        ...(t.annotations ?? {}),
      },
    },
    spec: {},
  };
  if (t.taints.length > 0) node.spec!.taints = t.taints.map((x) => ({ ...x }));
  return node;
}

/** The node conditions the kubelet reports when healthy (reasons and messages of nodestatus setters). */
export function healthyConditions(): Omit<NodeCondition, 'lastHeartbeatTime' | 'lastTransitionTime'>[] {
  return kubeletConditions([]);
}

/**
 * The node conditions the kubelet reports under `pressure` (nodestatus
 * MemoryPressureCondition, DiskPressureCondition, PIDPressureCondition:
 * the eviction manager's observations); Ready stays True, as on a real
 * kubelet under pressure.
 */
export function kubeletConditions(pressure: readonly PressureKind[]): Omit<NodeCondition, 'lastHeartbeatTime' | 'lastTransitionTime'>[] {
  const p = new Set(pressure);
  return [
    p.has('memory')
      ? { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' }
      : { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
    p.has('disk')
      ? { type: 'DiskPressure', status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' }
      : { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
    p.has('pid')
      ? { type: 'PIDPressure', status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' }
      : { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
    { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  ];
}

/**
 * An extended resource (v1helper.IsExtendedResourceName): a domain-prefixed
 * name outside kubernetes.io, not a quota `requests.` name.
 */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/')) return false;
  return !name.startsWith('requests.');
}

/**
 * Capacity and allocatable as the kubelet's MachineInfo setter keeps them:
 * its own resources, plus extended resources someone else advertised in
 * status.capacity (kept, and copied to allocatable); an extended resource
 * gone from capacity is removed from allocatable (null: the status is sent
 * as a merge patch).
 */
function nodeResources(t: NodeTemplate, previous: NodeStatus | undefined): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity: Record<string, string> = { ...t.capacity };
  const allocatable: Record<string, string | null> = { ...(t.allocatable ?? t.capacity) };
  for (const [k, v] of Object.entries(previous?.capacity ?? {})) {
    if (!isExtendedResourceName(k) || k in capacity) continue;
    capacity[k] = v;
    allocatable[k] = v;
  }
  for (const k of Object.keys(previous?.allocatable ?? {})) {
    if (isExtendedResourceName(k) && !(k in capacity)) allocatable[k] = null;
  }
  return { capacity, allocatable: allocatable as Record<string, string> };
}

/**
 * The node status to post at `now` (under `pressure`, see kubeletConditions).
 * Conditions keep their lastTransitionTime from `previous` when the status
 * did not change (nodestatus setters do the same).
 */
export function buildNodeStatus(id: NodeIdentity, t: NodeTemplate, previous: NodeStatus | undefined, now: number, pressure: readonly PressureKind[] = []): NodeStatus {
  const ts = rfc3339(now);
  const prev = new Map((previous?.conditions ?? []).map((c) => [c.type, c]));
  const conditions: NodeCondition[] = kubeletConditions(pressure).map((c) => {
    const p = prev.get(c.type);
    return { ...c, lastHeartbeatTime: ts, lastTransitionTime: p && p.status === c.status && p.lastTransitionTime ? p.lastTransitionTime : ts };
  });
  const { capacity, allocatable } = nodeResources(t, previous);
  return {
    capacity,
    allocatable,
    conditions,
    addresses: [
      { type: 'InternalIP', address: id.internalIP },
      { type: 'Hostname', address: id.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: t.kubeletPort ?? 10250 } },
    nodeInfo: {
      machineID: hex32(`machine/${id.name}`),
      systemUUID: hex32(`system/${id.name}`).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
      bootID: hex32(`boot/${id.name}/${previous ? 'same' : 'first'}`).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
      kernelVersion: '6.8.0-kcm',
      osImage: 'kcm simulated node',
      containerRuntimeVersion: 'kcm://0.1.0',
      kubeletVersion: t.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: t.architecture,
    },
  };
}

const CONDITION_EVENTS: Readonly<Record<string, [whenTrue: string, whenFalse: string]>> = {
  MemoryPressure: ['NodeHasInsufficientMemory', 'NodeHasSufficientMemory'],
  DiskPressure: ['NodeHasDiskPressure', 'NodeHasNoDiskPressure'],
  PIDPressure: ['NodeHasInsufficientPID', 'NodeHasSufficientPID'],
  Ready: ['NodeReady', 'NodeNotReady'],
};

/**
 * The kubelet's node status events for posting `next` over `previous`, in
 * condition order: a condition whose status changed (or is new) gives its
 * reason (`NodeHasSufficientMemory`, `NodeReady`, ...), recorded as
 * "Node <name> status is now: <reason>" (nodestatus setters).
 */
export function conditionEvents(previous: NodeStatus | undefined, next: NodeStatus): string[] {
  const prev = new Map((previous?.conditions ?? []).map((c) => [c.type, c.status]));
  const out: string[] = [];
  for (const c of next.conditions ?? []) {
    const names = CONDITION_EVENTS[c.type];
    if (!names || prev.get(c.type) === c.status) continue;
    out.push(c.status === 'True' ? names[0] : names[1]);
  }
  return out;
}

/**
 * True when the server's view of the node's conditions differs from what the
 * kubelet would report (e.g. the node lifecycle controller marked Ready
 * Unknown): the kubelet then posts at once instead of waiting for the report
 * interval.
 */
/**
 * Whether the capacity or allocatable the kubelet would post differ from the
 * server's (an extended resource advertised or removed by someone else): the
 * kubelet then posts at its next status check, not at the report interval.
 */
export function resourcesDiffer(server: NodeStatus | undefined, t: NodeTemplate): boolean {
  const want = nodeResources(t, server);
  const equal = (x: string, y: string | undefined) => {
    if (y === undefined) return false;
    try {
      return compare(x, y) === 0; // the API server may print a quantity canonically ("1000" as "1k")
    } catch {
      return x === y;
    }
  };
  const same = (a: Record<string, string | null>, b: Record<string, string> | undefined) =>
    Object.entries(a).every(([k, v]) => (v === null ? b?.[k] === undefined : equal(v, b?.[k])));
  return !same(want.capacity, server?.capacity) || !same(want.allocatable, server?.allocatable);
}

export function conditionsDiffer(server: NodeStatus | undefined, pressure: readonly PressureKind[] = []): boolean {
  const have = new Map((server?.conditions ?? []).map((c) => [c.type, c]));
  return kubeletConditions(pressure).some((c) => {
    const h = have.get(c.type);
    return !h || h.status !== c.status || h.reason !== c.reason;
  });
}

/** The node's heartbeat Lease (owned by the Node, so it goes when the node goes). */
export function newLeaseObject(node: { name: string; uid?: string }, now: number): Lease & KubeObject & { metadata: { name: string } } {
  const lease: Lease & KubeObject & { metadata: { name: string } } = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: node.name, namespace: NODE_LEASE_NAMESPACE },
    spec: { holderIdentity: node.name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: rfc3339Micro(now) },
  };
  if (node.uid) lease.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid }];
  return lease;
}

/** `key=value:Effect` or `key:Effect` (kubelet --register-with-taints syntax). */
export function parseTaint(s: string): Taint {
  const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(s.trim());
  if (!m) throw new Error(`invalid taint ${JSON.stringify(s)}: want key[=value]:NoSchedule|PreferNoSchedule|NoExecute`);
  const t: Taint = { key: m[1]!, effect: m[3]! };
  if (m[2]) t.value = m[2];
  return t;
}
