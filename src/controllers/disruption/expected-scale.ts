/**
 * How many pods a PodDisruptionBudget expects (disruption.go
 * getExpectedPodCount / getExpectedScale): with an integer minAvailable, the
 * number of matching pods; otherwise the sum of the scales of the pods'
 * controllers, each counted once: a Deployment through its ReplicaSet, a
 * bare ReplicaSet, a ReplicationController, a StatefulSet, or any other kind
 * through its scale subresource. Pods without a controller are reported as
 * unmanaged.
 */
import type { Pod, ReplicationController } from 'kubernetes-types/core/v1.js';
import type { Deployment, ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import { getControllerOf } from '../../api/meta.js';
import { getScaledValueFromIntOrPercent } from '../../api/intstr.js';
import { parseApiVersion, type GroupVersionResource, type OwnerReference } from '../../api/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';

export interface ControllerAndScale {
  uid: string;
  scale: number;
}

/** Looks up the scale subresource of `ref` in `namespace`; undefined when the kind has none or the object is not there. */
export type ScaleLookup = (ref: OwnerReference, namespace: string) => Promise<ControllerAndScale | undefined>;

export interface ScaleListers {
  replicaSets: Lister<Kube<ReplicaSet>>;
  deployments: Lister<Kube<Deployment>>;
  replicationControllers: Lister<Kube<ReplicationController>>;
  statefulSets: Lister<Kube<StatefulSet>>;
  /** The generic finder (scale subresource); last resort. */
  scale?: ScaleLookup;
}

function isKind(ref: OwnerReference, kind: string, groups: string[]): boolean {
  return ref.kind === kind && groups.includes(parseApiVersion(ref.apiVersion).group);
}

function replicas(n: number | undefined): number {
  return n ?? 1;
}

/** The controller and scale of `ref`, or undefined when no finder knows it. */
async function findController(l: ScaleListers, ref: OwnerReference, namespace: string): Promise<ControllerAndScale | undefined> {
  if (isKind(ref, 'ReplicaSet', ['apps', 'extensions'])) {
    const rs = l.replicaSets.namespace(namespace).get(ref.name);
    if (rs && rs.metadata?.uid === ref.uid) {
      const owner = getControllerOf(rs);
      if (!owner || owner.kind !== 'Deployment') return { uid: rs.metadata.uid, scale: replicas(rs.spec?.replicas) };
      // Controlled by a Deployment: the Deployment's scale counts.
      if (isKind(owner, 'Deployment', ['apps', 'extensions'])) {
        const d = l.deployments.namespace(namespace).get(owner.name);
        if (d && d.metadata?.uid === owner.uid) return { uid: d.metadata.uid, scale: replicas(d.spec?.replicas) };
      }
    }
  }
  if (isKind(ref, 'ReplicationController', [''])) {
    const rc = l.replicationControllers.namespace(namespace).get(ref.name);
    if (rc && rc.metadata?.uid === ref.uid) return { uid: rc.metadata.uid, scale: replicas(rc.spec?.replicas) };
  }
  if (isKind(ref, 'StatefulSet', ['apps'])) {
    const ss = l.statefulSets.namespace(namespace).get(ref.name);
    if (ss && ss.metadata?.uid === ref.uid) return { uid: ss.metadata.uid, scale: replicas(ss.spec?.replicas) };
  }
  return l.scale ? l.scale(ref, namespace) : undefined;
}

export interface ExpectedCount {
  expectedCount: number;
  desiredHealthy: number;
  unmanagedPods: string[];
}

/** Sum of the scales of the pods' controllers; throws when a managed pod's controller is not found. */
export async function getExpectedScale(l: ScaleListers, pods: readonly Pod[]): Promise<{ expectedCount: number; unmanagedPods: string[] }> {
  const scales = new Map<string, number>();
  const unmanagedPods: string[] = [];
  for (const pod of pods) {
    const ref = getControllerOf(pod as Kube<Pod>);
    if (!ref) {
      unmanagedPods.push(pod.metadata?.name ?? '');
      continue;
    }
    if (scales.has(ref.uid)) continue;
    const found = await findController(l, ref, pod.metadata?.namespace ?? '');
    if (!found) throw new Error(`found no controllers for pod "${pod.metadata?.name}"`);
    scales.set(found.uid, found.scale);
  }
  let expectedCount = 0;
  for (const n of scales.values()) expectedCount += n;
  return { expectedCount, unmanagedPods };
}

/** expectedCount, desiredHealthy and unmanaged pods of `pdb` over `pods`. */
export async function getExpectedPodCount(l: ScaleListers, pdb: PodDisruptionBudget, pods: readonly Pod[]): Promise<ExpectedCount> {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const { expectedCount, unmanagedPods } = await getExpectedScale(l, pods);
    const maxUnavailable = getScaledValueFromIntOrPercent(spec.maxUnavailable, expectedCount, true);
    return { expectedCount, desiredHealthy: Math.max(0, expectedCount - maxUnavailable), unmanagedPods };
  }
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanagedPods: [] };
    const { expectedCount, unmanagedPods } = await getExpectedScale(l, pods);
    return { expectedCount, desiredHealthy: getScaledValueFromIntOrPercent(spec.minAvailable, expectedCount, true), unmanagedPods };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
}

/** A ScaleLookup reading `<resource>/scale` through `get`, after mapping the owner's kind to its resource. */
export function newScaleLookup(
  mapKind: (group: string, version: string, kind: string) => Promise<GroupVersionResource | undefined>,
  getScale: (gvr: GroupVersionResource, namespace: string, name: string) => Promise<{ metadata?: { uid?: string }; spec?: { replicas?: number } } | undefined>,
): ScaleLookup {
  return async (ref, namespace) => {
    const { group, version } = parseApiVersion(ref.apiVersion);
    const gvr = await mapKind(group, version, ref.kind);
    if (!gvr) return undefined;
    const scale = await getScale(gvr, namespace, ref.name);
    if (!scale || scale.metadata?.uid !== ref.uid) return undefined;
    return { uid: ref.uid, scale: scale.spec?.replicas ?? 0 };
  };
}
