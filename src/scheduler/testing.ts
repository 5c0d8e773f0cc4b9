/** Builders for scheduler tests: plain Node and Pod objects and a cycle context over them. */
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { newSnapshot, noLookups, type ClusterLookups, type CycleContext } from './framework.js';
import { addPod, newNodeInfo, newPodInfo, type NodeInfo } from './node-info.js';

export interface NodeOpts {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  extra?: Record<string, string>;
}

export function makeNode(name: string, o: NodeOpts = {}): Node {
  const alloc = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110', ...(o.extra ?? {}) };
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: { allocatable: alloc, capacity: alloc },
  };
}

export interface PodOpts {
  namespace?: string;
  labels?: Record<string, string>;
  requests?: Record<string, string>;
  nodeName?: string;
  spec?: Partial<Pod['spec']>;
}

let uid = 0;
export function makePod(name: string, o: PodOpts = {}): Pod {
  return {
    metadata: { name, namespace: o.namespace ?? 'default', uid: `uid-${name}-${++uid}`, labels: o.labels ?? {} },
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      containers: [{ name: 'c', image: 'app:1', resources: o.requests ? { requests: o.requests } : {} }],
      ...(o.spec ?? {}),
    },
  };
}

/** NodeInfos for `nodes`, with each pod placed on its spec.nodeName. */
export function nodeInfos(nodes: Node[], pods: Pod[] = []): NodeInfo[] {
  const infos = nodes.map((n) => newNodeInfo(n));
  for (const p of pods) {
    const info = infos.find((i) => i.node?.metadata?.name === p.spec?.nodeName);
    if (!info) throw new Error(`no node ${p.spec?.nodeName}`);
    addPod(info, newPodInfo(p));
  }
  return infos;
}

export function cycle(pod: Pod, infos: NodeInfo[], lookups: ClusterLookups = noLookups): CycleContext {
  return { pod, podInfo: newPodInfo(pod), snapshot: newSnapshot(infos), lookups, state: new Map() };
}
