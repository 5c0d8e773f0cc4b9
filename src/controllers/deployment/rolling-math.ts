/**
 * The arithmetic of rolling updates and proportional scaling
 * (pkg/controller/deployment/util/deployment_util.go): surge and
 * unavailability fenceposts, the size of the new ReplicaSet, and the share of
 * a scaling that each ReplicaSet receives.
 */
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../api/intstr.js';
import { maxReplicasAnnotation, desiredReplicasAnnotation } from './annotations.js';
import { getReplicaCountForReplicaSets, specReplicas } from './replica-sets.js';
import type { DeploymentObject, ReplicaSetObject } from './types.js';

export function isRollingUpdate(d: DeploymentObject): boolean {
  return d.spec?.strategy?.type === 'RollingUpdate';
}

/**
 * maxSurge and maxUnavailable as absolute numbers for `desired` replicas:
 * surge rounds up, unavailable rounds down; when both come out 0,
 * unavailable becomes 1 (ResolveFenceposts). Throws on invalid values.
 */
export function resolveFenceposts(
  surgeValue: IntOrString | undefined,
  unavailableValue: IntOrString | undefined,
  desired: number,
): { surge: number; unavailable: number } {
  const surge = getScaledValueFromIntOrPercent(surgeValue ?? 0, desired, true);
  let unavailable = getScaledValueFromIntOrPercent(unavailableValue ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** Pods allowed above spec.replicas during a rolling update (0 for Recreate). */
export function maxSurge(d: DeploymentObject): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec?.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, d.spec?.replicas ?? 0).surge;
}

/** Pods allowed to be unavailable during a rolling update, at most spec.replicas (0 for Recreate or 0 replicas). */
export function maxUnavailable(d: DeploymentObject): number {
  const replicas = d.spec?.replicas ?? 0;
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec?.strategy?.rollingUpdate;
  const { unavailable } = resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas);
  return Math.min(unavailable, replicas);
}

/** spec.replicas - maxUnavailable for rolling updates, 0 otherwise. */
export function minAvailable(d: DeploymentObject): number {
  if (!isRollingUpdate(d)) return 0;
  return (d.spec?.replicas ?? 0) - maxUnavailable(d);
}

/**
 * The size the new ReplicaSet may grow to now (NewRSNewReplicas): for a
 * rolling update, as far as maxSurge allows without exceeding spec.replicas;
 * for Recreate, spec.replicas.
 */
export function newRSNewReplicas(d: DeploymentObject, allRSs: ReadonlyArray<ReplicaSetObject | undefined>, newRS: ReplicaSetObject): number {
  const replicas = d.spec?.replicas ?? 0;
  switch (d.spec?.strategy?.type) {
    case 'RollingUpdate': {
      const surge = getScaledValueFromIntOrPercent(d.spec?.strategy?.rollingUpdate?.maxSurge ?? 0, replicas, true);
      const currentPodCount = getReplicaCountForReplicaSets(allRSs);
      const maxTotalPods = replicas + surge;
      if (currentPodCount >= maxTotalPods) return specReplicas(newRS);
      const scaleUpCount = Math.min(maxTotalPods - currentPodCount, replicas - specReplicas(newRS));
      return specReplicas(newRS) + scaleUpCount;
    }
    case 'Recreate':
      return replicas;
    default:
      throw new Error(`deployment type ${d.spec?.strategy?.type ?? ''} isn't supported`);
  }
}

/**
 * The new ReplicaSet runs everything: its size and desired-replicas equal
 * spec.replicas and all are available (IsSaturated).
 */
export function isSaturated(d: DeploymentObject, rs: ReplicaSetObject | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicasAnnotation(rs);
  if (desired === undefined) return false;
  const replicas = d.spec?.replicas ?? 0;
  return specReplicas(rs) === replicas && desired === replicas && (rs.status?.availableReplicas ?? 0) === replicas;
}

/** Go's math.Round: halves away from zero. */
function roundHalfAwayFromZero(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * How many replicas `rs` gains (or loses, negative) when the Deployment's
 * maximum size changes: its size scaled by (spec.replicas + maxSurge) over
 * the max-replicas annotation it was sized for (getReplicaSetFraction).
 */
export function getReplicaSetFraction(rs: ReplicaSetObject, d: DeploymentObject): number {
  const replicas = d.spec?.replicas ?? 0;
  if (replicas === 0) return -specReplicas(rs);
  const deploymentMaxReplicas = replicas + maxSurge(d);
  let before = maxReplicasAnnotation(rs);
  if (before === undefined || before === 0) {
    // Someone edited the ReplicaSet by hand: fall back to the Deployment's current size.
    before = d.status?.replicas ?? 0;
    if (before === 0) return 0;
  }
  const newSize = (specReplicas(rs) * deploymentMaxReplicas) / before;
  return roundHalfAwayFromZero(newSize) - specReplicas(rs);
}

/**
 * The share of `toAdd` (positive: scale up, negative: down) that `rs`
 * receives when `added` has been handed out already; never more than what
 * is left (GetReplicaSetProportion).
 */
export function getReplicaSetProportion(rs: ReplicaSetObject | undefined, d: DeploymentObject, toAdd: number, added: number): number {
  if (!rs || specReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = getReplicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}
