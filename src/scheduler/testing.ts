/** Builders for scheduler tests: plain Node and Pod objects and a cycle context over them. */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, Taint } from 'kubernetes-types/core/v1.js';
import type { CSINode, StorageClass } from 'kubernetes-types/storage/v1.js';
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

/** A cycle context; `lookups` fills in what the test needs over noLookups. */
export function cycle(pod: Pod, infos: NodeInfo[], lookups: Partial<ClusterLookups> = {}): CycleContext {
  return { pod, podInfo: newPodInfo(pod), snapshot: newSnapshot(infos), lookups: { ...noLookups, ...lookups }, state: new Map() };
}

/** Mutable storage objects behind ClusterLookups (change them between calls to simulate informer updates). */
export interface StorageFixture {
  pods: Pod[];
  claims: PersistentVolumeClaim[];
  volumes: PersistentVolume[];
  classes: StorageClass[];
  csiNodes: CSINode[];
}

export function storageLookups(f: Partial<StorageFixture>): { fixture: StorageFixture; lookups: Partial<ClusterLookups> } {
  const fixture: StorageFixture = { pods: [], claims: [], volumes: [], classes: [], csiNodes: [], ...f };
  const named = <T extends { metadata?: { name?: string; namespace?: string } }>(xs: T[], name: string, ns?: string) =>
    xs.find((x) => x.metadata?.name === name && (ns === undefined || (x.metadata?.namespace ?? 'default') === ns));
  return {
    fixture,
    lookups: {
      pod: (ns, name) => named(fixture.pods, name, ns),
      claim: (ns, name) => named(fixture.claims, name, ns),
      persistentVolume: (name) => named(fixture.volumes, name),
      persistentVolumes: () => fixture.volumes,
      storageClass: (name) => named(fixture.classes, name),
      csiNode: (name) => named(fixture.csiNodes, name),
    },
  };
}

/** A claim: `class` sets spec.storageClassName; `volume` binds it (spec.volumeName, bind-completed, phase Bound). */
export function makeClaim(name: string, o: { class?: string; size?: string; accessModes?: string[]; volume?: string; namespace?: string; annotations?: Record<string, string> } = {}): PersistentVolumeClaim {
  const bound = o.volume !== undefined;
  return {
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: `uid-claim-${name}`,
      resourceVersion: '1',
      annotations: { ...(bound ? { 'pv.kubernetes.io/bind-completed': 'yes' } : {}), ...(o.annotations ?? {}) },
    },
    spec: {
      accessModes: o.accessModes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: o.size ?? '1Gi' } },
      ...(o.class !== undefined ? { storageClassName: o.class } : {}),
      ...(bound ? { volumeName: o.volume } : {}),
    },
    status: { phase: bound ? 'Bound' : 'Pending' },
  };
}

/** An Available volume; `hosts` sets a required node affinity on kubernetes.io/hostname. */
export function makeVolume(name: string, o: { class?: string; size?: string; accessModes?: string[]; hosts?: string[]; labels?: Record<string, string>; csi?: { driver: string; handle: string }; claim?: PersistentVolumeClaim } = {}): PersistentVolume {
  return {
    metadata: { name, labels: o.labels ?? {}, resourceVersion: '1' },
    spec: {
      capacity: { storage: o.size ?? '1Gi' },
      accessModes: o.accessModes ?? ['ReadWriteOnce'],
      ...(o.class !== undefined ? { storageClassName: o.class } : {}),
      ...(o.hosts
        ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: o.hosts }] }] } } }
        : {}),
      ...(o.csi ? { csi: { driver: o.csi.driver, volumeHandle: o.csi.handle } } : {}),
      ...(o.claim
        ? { claimRef: { kind: 'PersistentVolumeClaim', namespace: o.claim.metadata?.namespace, name: o.claim.metadata?.name, uid: o.claim.metadata?.uid } }
        : {}),
    },
    status: { phase: o.claim ? 'Bound' : 'Available' },
  };
}

export function makeStorageClass(name: string, o: { mode?: 'Immediate' | 'WaitForFirstConsumer'; provisioner?: string; zones?: string[] } = {}): StorageClass {
  return {
    metadata: { name },
    provisioner: o.provisioner ?? 'example.com/csi',
    volumeBindingMode: o.mode ?? 'Immediate',
    ...(o.zones ? { allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: o.zones }] }] } : {}),
  };
}

/** Pod volumes for claims: one persistentVolumeClaim volume per name. */
export function claimVolumes(...claims: string[]): NonNullable<Pod['spec']>['volumes'] {
  return claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } }));
}
