/**
 * StatefulSet identity, storage and revision helpers
 * (pkg/controller/statefulset/stateful_set_utils.go).
 *
 * A pod belongs to set `web` when its name is `web-<ordinal>`; its identity
 * is that name, the `statefulset.kubernetes.io/pod-name` and
 * `apps.kubernetes.io/pod-index` labels, hostname = its name and subdomain =
 * the set's serviceName. Its storage is one PVC per volumeClaimTemplate,
 * named `<template>-<set>-<ordinal>`.
 */
import type { StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy } from 'kubernetes-types/apps/v1.js';
import type { PersistentVolumeClaim, Pod, PodTemplateSpec, Volume } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { GroupVersionKind } from '../../api/types.js';
import { getScaledValueFromIntOrPercent } from '../../api/intstr.js';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  newControllerRevision,
  templateFromRevision,
  templatePatch,
  type Revision,
} from '../../controller/history/controller-history.js';
import { getPodFromTemplate, newControllerRef } from '../../controller/index.js';
import { isPodAvailable, isPodReady } from '../../controller/pod-util.js';
import type { Kube } from '../../tools/cache/factory.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type Set = Kube<StatefulSet>;
export type KPod = Kube<Pod>;
export type Claim = Kube<PersistentVolumeClaim>;

export const STATEFUL_SET_KIND: GroupVersionKind = { group: 'apps', version: 'v1', kind: 'StatefulSet' };
export const STATEFUL_SET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
/** Pods carry their revision's name under this label (apps.StatefulSetRevisionLabel). */
export const STATEFUL_SET_REVISION_LABEL = CONTROLLER_REVISION_HASH_LABEL;
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

const ORDINAL_RE = /^(.*)-([0-9]+)$/;

/** The parent name and ordinal parsed from a pod name; ordinal -1 when it has none. */
export function getParentNameAndOrdinal(pod: Pod): { parent: string; ordinal: number } {
  const m = ORDINAL_RE.exec(pod.metadata?.name ?? '');
  if (!m) return { parent: '', ordinal: -1 };
  const ordinal = Number.parseInt(m[2]!, 10);
  if (!Number.isSafeInteger(ordinal) || ordinal > 0x7fffffff) return { parent: '', ordinal: -1 };
  return { parent: m[1]!, ordinal };
}

export function getOrdinal(pod: Pod): number {
  return getParentNameAndOrdinal(pod).ordinal;
}

export function getPodName(set: Set, ordinal: number): string {
  return `${set.metadata?.name ?? ''}-${ordinal}`;
}

export function getStartOrdinal(set: Set): number {
  return set.spec?.ordinals?.start ?? 0;
}

/** One past the highest ordinal the set wants. */
export function getEndOrdinal(set: Set): number {
  return getStartOrdinal(set) + (set.spec?.replicas ?? 1);
}

export function podInOrdinalRange(pod: Pod, set: Set): boolean {
  const o = getOrdinal(pod);
  return o >= getStartOrdinal(set) && o < getEndOrdinal(set);
}

/** `<template>-<set>-<ordinal>`. */
export function getPersistentVolumeClaimName(set: Set, claim: PersistentVolumeClaim, ordinal: number): string {
  return `${claim.metadata?.name ?? ''}-${set.metadata?.name ?? ''}-${ordinal}`;
}

/** The pod's name parses as `<set>-<ordinal>` for this set. */
export function isMemberOf(set: Set, pod: Pod): boolean {
  return getParentNameAndOrdinal(pod).parent === set.metadata?.name;
}

export function identityMatches(set: Set, pod: Pod): boolean {
  const { parent, ordinal } = getParentNameAndOrdinal(pod);
  return (
    ordinal >= 0 &&
    parent === set.metadata?.name &&
    pod.metadata?.name === getPodName(set, ordinal) &&
    pod.metadata?.namespace === set.metadata?.namespace &&
    pod.metadata?.labels?.[STATEFUL_SET_POD_NAME_LABEL] === pod.metadata?.name
  );
}

/** Every claim template has a volume in the pod pointing at the claim of this ordinal. */
export function storageMatches(set: Set, pod: Pod): boolean {
  const ordinal = getOrdinal(pod);
  if (ordinal < 0) return false;
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  for (const claim of set.spec?.volumeClaimTemplates ?? []) {
    const v = volumes.get(claim.metadata?.name ?? '');
    if (!v || v.persistentVolumeClaim?.claimName !== getPersistentVolumeClaimName(set, claim, ordinal)) return false;
  }
  return true;
}

/** The claims the pod of this ordinal needs, keyed by template name (getPersistentVolumeClaims). */
export function getPersistentVolumeClaims(set: Set, pod: Pod): Map<string, Claim> {
  const ordinal = getOrdinal(pod);
  const out = new Map<string, Claim>();
  const selectorLabels = set.spec?.selector?.matchLabels ?? {};
  for (const tmpl of set.spec?.volumeClaimTemplates ?? []) {
    const claim = deepCopy(tmpl) as Claim;
    const meta = (claim.metadata ??= {});
    const templateName = meta.name ?? '';
    meta.name = getPersistentVolumeClaimName(set, tmpl, ordinal);
    meta.namespace = set.metadata?.namespace ?? '';
    meta.labels = { ...(meta.labels ?? {}), ...selectorLabels };
    delete (claim as { status?: unknown }).status;
    claim.apiVersion = 'v1';
    claim.kind = 'PersistentVolumeClaim';
    out.set(templateName, claim);
  }
  return out;
}

/** Points the pod's volumes at its claims, replacing same-named volumes (updateStorage). */
export function updateStorage(set: Set, pod: Pod): void {
  const claims = getPersistentVolumeClaims(set, pod);
  if (claims.size === 0) return;
  const spec = (pod.spec ??= { containers: [] });
  const kept: Volume[] = (spec.volumes ?? []).filter((v) => !claims.has(v.name));
  for (const [name, claim] of claims) {
    kept.push({ name, persistentVolumeClaim: { claimName: claim.metadata!.name! } });
  }
  spec.volumes = kept;
}

/** Sets the pod's name-derived identity: labels, hostname and subdomain (updateIdentity). */
export function updateIdentity(set: Set, pod: Pod): void {
  const ordinal = getOrdinal(pod);
  const meta = (pod.metadata ??= {});
  meta.name = getPodName(set, ordinal);
  meta.namespace = set.metadata?.namespace ?? '';
  meta.labels = { ...(meta.labels ?? {}), [STATEFUL_SET_POD_NAME_LABEL]: meta.name, [POD_INDEX_LABEL]: String(ordinal) };
  const spec = (pod.spec ??= { containers: [] });
  spec.hostname = meta.name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
}

export function getPodRevision(pod: Pod): string {
  return pod.metadata?.labels?.[STATEFUL_SET_REVISION_LABEL] ?? '';
}

export function setPodRevision(pod: Pod, revision: string): void {
  const meta = (pod.metadata ??= {});
  meta.labels = { ...(meta.labels ?? {}), [STATEFUL_SET_REVISION_LABEL]: revision };
}

/** The pod of `ordinal` built from the set's template, with identity and storage. */
export function newStatefulSetPod(set: Set, ordinal: number): KPod {
  const pod = getPodFromTemplate(set.spec?.template ?? { spec: { containers: [] } }, set, newControllerRef(set, STATEFUL_SET_KIND)) as KPod;
  pod.metadata!.name = getPodName(set, ordinal);
  updateIdentity(set, pod);
  updateStorage(set, pod);
  return pod;
}

/**
 * The pod of `ordinal` at the revision it should have: ordinals below the
 * partition (or below currentReplicas without one) keep the current
 * revision under RollingUpdate; the rest get the update revision.
 */
export function newVersionedStatefulSetPod(
  currentSet: Set,
  updateSet: Set,
  currentRevision: string,
  updateRevision: string,
  ordinal: number,
): KPod {
  const ru = currentSet.spec?.updateStrategy?.rollingUpdate;
  const rolling = (currentSet.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  const partition = ru?.partition;
  const useCurrent =
    rolling &&
    ((partition === undefined && ordinal < (currentSet.status?.currentReplicas ?? 0)) || (partition !== undefined && ordinal < partition));
  const pod = newStatefulSetPod(useCurrent ? currentSet : updateSet, ordinal);
  setPodRevision(pod, useCurrent ? currentRevision : updateRevision);
  return pod;
}

export function isCreated(pod: Pod): boolean {
  return (pod.status?.phase ?? '') !== '';
}
export function isPending(pod: Pod): boolean {
  return pod.status?.phase === 'Pending';
}
export function isFailed(pod: Pod): boolean {
  return pod.status?.phase === 'Failed';
}
export function isSucceeded(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded';
}
export function isTerminating(pod: Pod): boolean {
  return !!pod.metadata?.deletionTimestamp;
}
export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  return pod.status?.phase === 'Running' && isPodAvailable(pod, minReadySeconds, now);
}
/** Running, Ready and not terminating. */
export function isHealthy(pod: Pod): boolean {
  return isRunningAndReady(pod) && !isTerminating(pod);
}

/** Parallel pod management: no ordering, no waiting for predecessors. */
export function allowsBurst(set: Set): boolean {
  return set.spec?.podManagementPolicy === 'Parallel';
}

/** maxUnavailable of a RollingUpdate scaled to the replicas (at least 1). */
export function getStatefulSetMaxUnavailable(set: Set): number {
  const replicas = set.spec?.replicas ?? 1;
  const v = getScaledValueFromIntOrPercent(set.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1, replicas, false);
  return Math.max(1, v);
}

export function getRetentionPolicy(set: Set): Required<StatefulSetPersistentVolumeClaimRetentionPolicy> {
  const p = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  return { whenDeleted: p.whenDeleted ?? 'Retain', whenScaled: p.whenScaled ?? 'Retain' };
}

function ownerRefTo(owner: { apiVersion: string; kind: string; name: string; uid: string }): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid };
}

/**
 * The claim's ownerReferences as the retention policy wants them
 * (updateClaimOwnerRefForSetAndPod): a reference to the set when whenDeleted
 * is Delete and the pod is in range; a reference to the pod when whenScaled
 * is Delete and the pod was scaled away. Returns whether anything changed.
 */
export function updateClaimOwnerRefForSetAndPod(claim: Claim, set: Set, pod: Pod): boolean {
  const policy = getRetentionPolicy(set);
  const setUid = set.metadata?.uid;
  const podUid = pod.metadata?.uid;
  const scaledDown = !podInOrdinalRange(pod, set);
  const wantSet = policy.whenDeleted === 'Delete' && !(policy.whenScaled === 'Delete' && scaledDown);
  const wantPod = policy.whenScaled === 'Delete' && scaledDown;
  const meta = (claim.metadata ??= {});
  let refs = [...(meta.ownerReferences ?? [])];
  let changed = false;
  const apply = (want: boolean, uid: string | undefined, ref: () => OwnerReference) => {
    if (!uid) return;
    const has = refs.some((r) => r.uid === uid);
    if (want && !has) {
      refs.push(ref());
      changed = true;
    } else if (!want && has) {
      refs = refs.filter((r) => r.uid !== uid);
      changed = true;
    }
  };
  apply(wantSet, setUid, () => ownerRefTo({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata?.name ?? '', uid: setUid! }));
  apply(wantPod, podUid, () => ownerRefTo({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid: podUid! }));
  if (changed) meta.ownerReferences = refs;
  return changed;
}

/** The claim's ownerReferences already agree with the retention policy for this pod. */
export function claimOwnerMatchesSetAndPod(claim: Claim, set: Set, pod: Pod): boolean {
  return !updateClaimOwnerRefForSetAndPod(deepCopy(claim), set, pod);
}

/** The claim references a pod other than `pod` (a pod of this name that no longer exists). */
export function claimHasStalePodRef(claim: Claim, pod: Pod): boolean {
  return (claim.metadata?.ownerReferences ?? []).some((r) => r.kind === 'Pod' && r.name === pod.metadata?.name && r.uid !== pod.metadata?.uid);
}

/** The revision snapshot of the set's template (newRevision): template labels, set annotations. */
export function newRevision(set: Set, revision: number, collisionCount: number): Revision {
  const cr = newControllerRevision(set, STATEFUL_SET_KIND, set.spec?.template?.metadata?.labels, templatePatch(set.spec?.template), revision, collisionCount);
  const annotations = set.metadata?.annotations;
  if (annotations && Object.keys(annotations).length > 0) cr.metadata!.annotations = { ...annotations };
  return cr;
}

/** A copy of the set with the template stored in `revision` (ApplyRevision). */
export function applyRevision(set: Set, revision: Revision): Set {
  const clone = deepCopy(set);
  clone.spec = { ...clone.spec!, template: templateFromRevision<PodTemplateSpec>(revision) };
  return clone;
}
