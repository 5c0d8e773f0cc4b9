/**
 * Matching rules between PersistentVolumes and PersistentVolumeClaims
 * (k8s.io/component-helpers/storage/volume pv_helpers.go and helpers.go, and
 * the binder's access-mode index in pkg/controller/volume/persistentvolume/index.go).
 * Shared by the PersistentVolume binder and the scheduler's volume plugins,
 * as component-helpers is shared upstream.
 */
import type { ObjectReference, PersistentVolume, PersistentVolumeClaim, Pod, TopologySelectorTerm } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { selectorFromLabelSelector } from './labels.js';
import { compare, parseQuantity, type Quantity } from './quantity.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** Set on a claim once the binder finished binding it; its absence means "not bound yet". */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** Set on a volume or claim when the binder (not the user) made the link. */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** Name of the provisioner that created a volume. */
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
/** Set on a claim to tell external provisioners which of them should act. */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** Node chosen by the scheduler for a WaitForFirstConsumer claim. */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** Deprecated class annotation, still honoured before spec.storageClassName. */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** Marks the default StorageClass. */
export const ANN_IS_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const ANN_BETA_IS_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
/** Set on volumes handed to a CSI driver by migration; the binder stands down for them. */
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';

/** In-tree provisioners handed to their CSI driver (CSI migration, on for all of these). */
export const CSI_MIGRATED: Readonly<Record<string, string>> = {
  'kubernetes.io/aws-ebs': 'ebs.csi.aws.com',
  'kubernetes.io/gce-pd': 'pd.csi.storage.gke.io',
  'kubernetes.io/azure-disk': 'disk.csi.azure.com',
  'kubernetes.io/azure-file': 'file.csi.azure.com',
  'kubernetes.io/cinder': 'cinder.csi.openstack.org',
  'kubernetes.io/vsphere-volume': 'csi.vsphere.vmware.com',
  'kubernetes.io/portworx-volume': 'pxd.portworx.com',
};

export function hasAnnotation(obj: { metadata?: { annotations?: Record<string, string> } }, key: string): boolean {
  return obj.metadata?.annotations?.[key] !== undefined;
}

/** The class a claim asks for: the beta annotation wins over spec.storageClassName; "" is "no class". */
export function claimClass(claim: PersistentVolumeClaim): string {
  const ann = claim.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return claim.spec?.storageClassName ?? '';
}

/** Whether the claim names a class at all (an explicit "" counts). */
export function claimHasClass(claim: PersistentVolumeClaim): boolean {
  return claim.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] !== undefined || (claim.spec?.storageClassName ?? null) !== null;
}

export function volumeClass(pv: PersistentVolume): string {
  const ann = pv.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return pv.spec?.storageClassName ?? '';
}

/** Volume and claim volumeMode differ (both default to Filesystem). */
export function volumeModeMismatch(claim: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  return (claim.spec?.volumeMode ?? 'Filesystem') !== (pv.spec?.volumeMode ?? 'Filesystem');
}

/** Every access mode the claim asks for is offered by the volume. */
export function accessModesSatisfied(claim: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  const offered = new Set(pv.spec?.accessModes ?? []);
  return (claim.spec?.accessModes ?? []).every((m) => offered.has(m));
}

/** The volume's claimRef names this claim (and its uid, once set). */
export function isVolumeBoundToClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (!ref) return false;
  if (ref.name !== claim.metadata?.name || ref.namespace !== claim.metadata?.namespace) return false;
  return !ref.uid || ref.uid === claim.metadata?.uid;
}

function storageOf(list: Record<string, string> | undefined): Quantity {
  return parseQuantity(list?.['storage'] ?? '0');
}

export function claimRequest(claim: PersistentVolumeClaim): Quantity {
  return storageOf(claim.spec?.resources?.requests as Record<string, string> | undefined);
}

export function volumeCapacity(pv: PersistentVolume): Quantity {
  return storageOf(pv.spec?.capacity as Record<string, string> | undefined);
}

/**
 * Why a volume the claim named explicitly cannot be bound to it
 * (checkVolumeSatisfyClaim), or undefined when it can.
 */
export function volumeUnsatisfiedReason(pv: PersistentVolume, claim: PersistentVolumeClaim): string | undefined {
  if (pv.metadata?.deletionTimestamp) return `the volume is marked for deletion "${pv.metadata?.name ?? ''}"`;
  if (compare(volumeCapacity(pv), claimRequest(claim)) < 0) return 'requested PV is too small';
  if (volumeClass(pv) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeModeMismatch(claim, pv)) return 'incompatible volumeMode';
  if (!accessModesSatisfied(claim, pv)) return 'incompatible accessMode';
  return undefined;
}

/**
 * The best volume for an unbound claim (findBestMatchForClaim):
 * - a volume pre-bound to this claim wins outright;
 * - otherwise an Available, unclaimed volume that offers every access mode
 *   asked, has at least the requested size, the same class and volumeMode,
 *   and matches the claim's selector;
 * - among those, volumes offering the fewest access modes are preferred,
 *   then the smallest.
 * With `delayBinding` (WaitForFirstConsumer) only a pre-bound volume is
 * returned: the scheduler binds the others. Throws on an invalid selector.
 */
export function findBestMatchForClaim<V extends PersistentVolume>(claim: PersistentVolumeClaim, volumes: readonly V[], delayBinding: boolean): V | undefined {
  const requested = claimRequest(claim);
  const requestedClass = claimClass(claim);
  const selector = claim.spec?.selector ? selectorFromLabelSelector(claim.spec.selector) : undefined;
  const candidates = volumes
    .filter((pv) => accessModesSatisfied(claim, pv))
    .sort((a, b) => (a.spec?.accessModes?.length ?? 0) - (b.spec?.accessModes?.length ?? 0) || compare(volumeCapacity(a), volumeCapacity(b)) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  let best: V | undefined;
  let bestModes = 0;
  for (const pv of candidates) {
    if (best && (pv.spec?.accessModes?.length ?? 0) > bestModes) break;
    if (pv.spec?.claimRef && !isVolumeBoundToClaim(pv, claim)) continue;
    if (compare(volumeCapacity(pv), requested) < 0) continue;
    if (volumeModeMismatch(claim, pv)) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    if (isVolumeBoundToClaim(pv, claim)) return pv;
    if (delayBinding) continue;
    if (pv.status?.phase !== 'Available') continue;
    if (selector && !selector.matches(pv.metadata?.labels ?? {})) continue;
    if (volumeClass(pv) !== requestedClass) continue;
    if (!best || compare(volumeCapacity(best), volumeCapacity(pv)) > 0) {
      best = pv;
      bestModes = pv.spec?.accessModes?.length ?? 0;
    }
  }
  return best;
}

/** A claimRef as reference.GetReference builds it. */
export function claimReference(claim: PersistentVolumeClaim): ObjectReference {
  return {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    namespace: claim.metadata?.namespace ?? '',
    name: claim.metadata?.name ?? '',
    uid: claim.metadata?.uid ?? '',
    resourceVersion: claim.metadata?.resourceVersion ?? '',
  };
}

/**
 * `pv` bound to `claim` (GetBindVolumeToClaim): claimRef set to the claim,
 * and bound-by-controller when the user had not pre-bound it. `dirty` is
 * false when nothing changed. Never mutates `pv`.
 */
export function bindVolumeToClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): { volume: PersistentVolume; dirty: boolean } {
  const byController = !isVolumeBoundToClaim(pv, claim);
  const next = deepCopy(pv);
  let dirty = false;
  const ref = pv.spec?.claimRef;
  if (!ref || ref.name !== claim.metadata?.name || ref.namespace !== claim.metadata?.namespace || ref.uid !== claim.metadata?.uid) {
    next.spec = { ...next.spec, claimRef: claimReference(claim) };
    dirty = true;
  }
  if (byController && !hasAnnotation(next, ANN_BOUND_BY_CONTROLLER)) {
    next.metadata = { ...next.metadata, annotations: { ...next.metadata?.annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' } };
    dirty = true;
  }
  return { volume: next, dirty };
}

/** The default StorageClass: the newest one marked default, ties broken by name (util.GetDefaultClass). */
export function defaultStorageClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const defaults = classes.filter((c) => c.metadata?.annotations?.[ANN_IS_DEFAULT_CLASS] === 'true' || c.metadata?.annotations?.[ANN_BETA_IS_DEFAULT_CLASS] === 'true');
  defaults.sort((a, b) => {
    const ta = a.metadata?.creationTimestamp ?? '';
    const tb = b.metadata?.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? 1 : -1;
    return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
  });
  return defaults[0];
}

/** Names of the claims a pod uses: persistentVolumeClaim volumes and generic ephemeral volumes (`<pod>-<volume>`). */
export function podClaimNames(pod: Pod): string[] {
  const out: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) out.push(v.persistentVolumeClaim.claimName);
    else if (v.ephemeral) out.push(`${pod.metadata?.name ?? ''}-${v.name}`);
  }
  return out;
}

/** The provisioner a class names when it cannot provision (local volumes). */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';

/** Bound as far as the scheduler is concerned: spec.volumeName set and the binder finished (bind-completed). */
export function isClaimFullyBound(claim: PersistentVolumeClaim): boolean {
  return !!claim.spec?.volumeName && hasAnnotation(claim, ANN_BIND_COMPLETED);
}

function requirementMatches(r: { key: string; operator: string; values?: string[] }, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return values.length > 0 && has && values.includes(v!);
    case 'NotIn':
      return values.length > 0 && (!has || !values.includes(v!));
    case 'Exists':
      return values.length === 0 && has;
    case 'DoesNotExist':
      return values.length === 0 && !has;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !has || !/^[+-]?[0-9]+$/.test(values[0]!) || !/^[+-]?[0-9]+$/.test(v!)) return false;
      const want = BigInt(values[0]!);
      const got = BigInt(v!);
      return r.operator === 'Gt' ? got > want : got < want;
    }
    default:
      return false;
  }
}

/**
 * CheckNodeAffinity: a volume without required node affinity fits every
 * node; otherwise one of its terms must match the node's labels (terms are
 * matched against labels only, so matchFields never match, as upstream).
 */
export function volumeNodeAffinityMatches(pv: PersistentVolume, nodeLabels: Readonly<Record<string, string>>): boolean {
  const required = pv.spec?.nodeAffinity?.required;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => {
    const exprs = t.matchExpressions ?? [];
    const fields = t.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return fields.length === 0 && exprs.every((r) => requirementMatches(r, nodeLabels));
  });
}

/** MatchTopologySelectorTerms (a class's allowedTopologies): no terms match everything; terms are ORed, their expressions ANDed. */
export function topologySelectorTermsMatch(terms: readonly TopologySelectorTerm[] | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!terms || terms.length === 0) return true;
  for (const t of terms) {
    const exprs = t.matchLabelExpressions ?? [];
    if (exprs.length === 0) continue;
    if (exprs.every((e) => Object.prototype.hasOwnProperty.call(labels, e.key) && (e.values ?? []).includes(labels[e.key]!))) return true;
  }
  return false;
}

/**
 * FindMatchingVolume on the scheduler's path (a node given, delayBinding):
 * a volume pre-bound to the claim wins if its node affinity fits the node
 * (else nothing matches); otherwise the smallest Available, unclaimed volume
 * of the claim's class, size, volumeMode, access modes and selector whose
 * node affinity fits. Volumes named in `excluded` are skipped. Throws on an
 * invalid selector.
 */
export function findMatchingVolumeForNode<V extends PersistentVolume>(
  claim: PersistentVolumeClaim,
  volumes: readonly V[],
  nodeLabels: Readonly<Record<string, string>>,
  excluded: ReadonlySet<string>,
): V | undefined {
  const requested = claimRequest(claim);
  const requestedClass = claimClass(claim);
  const selector = claim.spec?.selector ? selectorFromLabelSelector(claim.spec.selector) : undefined;
  let smallest: V | undefined;
  for (const pv of volumes) {
    if (excluded.has(pv.metadata?.name ?? '')) continue;
    if (pv.spec?.claimRef && !isVolumeBoundToClaim(pv, claim)) continue;
    if (compare(volumeCapacity(pv), requested) < 0) continue;
    if (volumeModeMismatch(claim, pv)) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    const affinityOk = volumeNodeAffinityMatches(pv, nodeLabels);
    if (isVolumeBoundToClaim(pv, claim)) return affinityOk ? pv : undefined;
    if (pv.status?.phase !== 'Available') continue;
    if (selector && !selector.matches(pv.metadata?.labels ?? {})) continue;
    if (volumeClass(pv) !== requestedClass) continue;
    if (!affinityOk) continue;
    if (!accessModesSatisfied(claim, pv)) continue;
    if (!smallest || compare(volumeCapacity(smallest), volumeCapacity(pv)) > 0) smallest = pv;
  }
  return smallest;
}
