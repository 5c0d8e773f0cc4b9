/**
 * ReplicaSet bookkeeping of a Deployment (pkg/controller/deployment/util and
 * pkg/controller's ReplicaSet sorts): which ReplicaSet is the new one, which
 * are old, their replica counts and orders.
 */
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { parseTime } from '../../util/clock/clock.js';
import { POD_TEMPLATE_HASH_LABEL, type DeploymentObject, type ReplicaSetObject } from './types.js';

export function specReplicas(rs: { spec?: { replicas?: number } } | undefined): number {
  return rs?.spec?.replicas ?? 0;
}

/** ReplicaSets with spec.replicas > 0 (controller.FilterActiveReplicaSets). */
export function filterActiveReplicaSets(rss: ReadonlyArray<ReplicaSetObject | undefined>): ReplicaSetObject[] {
  return rss.filter((rs): rs is ReplicaSetObject => rs !== undefined && specReplicas(rs) > 0);
}

function created(rs: ReplicaSetObject): number {
  return parseTime(rs.metadata?.creationTimestamp) ?? 0;
}

/** Oldest first; ties by name (controller.ReplicaSetsByCreationTimestamp). */
export function compareByCreationTimestamp(a: ReplicaSetObject, b: ReplicaSetObject): number {
  const d = created(a) - created(b);
  if (d !== 0) return d;
  return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

/** Larger first; equal sizes older first (controller.ReplicaSetsBySizeOlder: scale-down order). */
export function compareBySizeOlder(a: ReplicaSetObject, b: ReplicaSetObject): number {
  const d = specReplicas(b) - specReplicas(a);
  return d !== 0 ? d : compareByCreationTimestamp(a, b);
}

/** Larger first; equal sizes newer first (controller.ReplicaSetsBySizeNewer: scale-up order). */
export function compareBySizeNewer(a: ReplicaSetObject, b: ReplicaSetObject): number {
  const d = specReplicas(b) - specReplicas(a);
  return d !== 0 ? d : compareByCreationTimestamp(b, a);
}

/** Sum of spec.replicas. */
export function getReplicaCountForReplicaSets(rss: ReadonlyArray<ReplicaSetObject | undefined>): number {
  return rss.reduce((n, rs) => n + (rs ? specReplicas(rs) : 0), 0);
}

/** Sum of status.replicas. */
export function getActualReplicaCountForReplicaSets(rss: ReadonlyArray<ReplicaSetObject | undefined>): number {
  return rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
}

/** Sum of status.readyReplicas. */
export function getReadyReplicaCountForReplicaSets(rss: ReadonlyArray<ReplicaSetObject | undefined>): number {
  return rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
}

/** Sum of status.availableReplicas. */
export function getAvailableReplicaCountForReplicaSets(rss: ReadonlyArray<ReplicaSetObject | undefined>): number {
  return rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
}

/**
 * A JSON value in the form apimachinery's semantic equality compares:
 * undefined members, empty arrays and empty maps count as absent.
 */
function semanticNormalize(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out = v.map(semanticNormalize);
    return out.length === 0 ? undefined : out;
  }
  if (v === null) return undefined; // a zero metav1.Time serialises as null: same as absent
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const n = semanticNormalize((v as Record<string, unknown>)[k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}

/**
 * `v` without null members (Go serialises zero timestamps such as a
 * template's `creationTimestamp` as null; semantically they are absent).
 * Used before hashing so that a template round-tripped through kubectl
 * hashes as the original.
 */
export function dropNulls<T>(v: T): T {
  if (Array.isArray(v)) return v.map(dropNulls) as T;
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = dropNulls(x);
    return out as T;
  }
  return v;
}

/** Deep equality where empty arrays / maps equal missing ones (apiequality.Semantic.DeepEqual, close enough for templates). */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(semanticNormalize(a) ?? null) === JSON.stringify(semanticNormalize(b) ?? null);
}

/**
 * Each template's comparison form (normalised, without the hash label),
 * computed once per template object: cached objects are replaced, never
 * changed, so every sync of every Deployment need not normalise them again.
 */
const ignoreHashForms = new WeakMap<object, string>();

function ignoreHashForm(t: PodTemplateSpec | undefined): string {
  if (!t) return 'null';
  let form = ignoreHashForms.get(t);
  if (form === undefined) {
    const labels = t.metadata?.labels;
    let c: PodTemplateSpec = t;
    if (labels && POD_TEMPLATE_HASH_LABEL in labels) {
      const { [POD_TEMPLATE_HASH_LABEL]: _hash, ...rest } = labels;
      c = { ...t, metadata: { ...t.metadata, labels: rest } };
    }
    form = JSON.stringify(semanticNormalize(c) ?? null);
    ignoreHashForms.set(t, form);
  }
  return form;
}

/** Two pod templates are equal apart from the pod-template-hash label (deploymentutil.EqualIgnoreHash). */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return ignoreHashForm(a) === ignoreHashForm(b);
}

/**
 * The ReplicaSet whose template equals the Deployment's (ignoring the hash
 * label); the oldest when several do (FindNewReplicaSet).
 */
export function findNewReplicaSet(d: DeploymentObject, rsList: readonly ReplicaSetObject[]): ReplicaSetObject | undefined {
  const sorted = [...rsList].sort(compareByCreationTimestamp);
  return sorted.find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

/**
 * Every ReplicaSet but the new one (`all`), and those of them that still
 * have replicas (`required`) (FindOldReplicaSets).
 */
export function findOldReplicaSets(
  d: DeploymentObject,
  rsList: readonly ReplicaSetObject[],
): { required: ReplicaSetObject[]; all: ReplicaSetObject[] } {
  const newRS = findNewReplicaSet(d, rsList);
  const all = rsList.filter((rs) => newRS === undefined || rs.metadata?.uid !== newRS.metadata?.uid);
  return { required: all.filter((rs) => specReplicas(rs) !== 0), all };
}

/**
 * The only active ReplicaSet; when none is active, the new one or else the
 * newest old one; undefined when several are active (FindActiveOrLatest).
 */
export function findActiveOrLatest(newRS: ReplicaSetObject | undefined, oldRSs: readonly ReplicaSetObject[]): ReplicaSetObject | undefined {
  if (newRS === undefined && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => compareByCreationTimestamp(b, a));
  const active = filterActiveReplicaSets([...newestFirst, newRS]);
  switch (active.length) {
    case 0:
      return newRS ?? newestFirst[0];
    case 1:
      return active[0];
    default:
      return undefined;
  }
}
