/**
 * Deployment conditions and rollout progress
 * (pkg/controller/deployment/util/deployment_util.go).
 */
import type { DeploymentStatus } from 'kubernetes-types/apps/v1.js';
import type { ReplicaSetCondition } from 'kubernetes-types/apps/v1.js';
import { parseTime, rfc3339 } from '../../util/clock/clock.js';
import {
  DEPLOYMENT_PROGRESSING,
  INT32_MAX,
  NEW_RS_AVAILABLE_REASON,
  TIMED_OUT_REASON,
  type DeploymentCondition,
  type DeploymentObject,
} from './types.js';

/** A condition stamped `now` (both lastUpdateTime and lastTransitionTime). */
export function newDeploymentCondition(type: string, status: string, reason: string, message: string, now: number): DeploymentCondition {
  const t = rfc3339(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getDeploymentCondition(status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * Sets `condition` in `status` (mutating it). Nothing changes when a
 * condition of that type already has the same status and reason; with the
 * same status, lastTransitionTime is kept (SetDeploymentCondition).
 */
export function setDeploymentCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getDeploymentCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

/** A ReplicaSet condition as a Deployment condition (ReplicaSetToDeploymentCondition). */
export function replicaSetToDeploymentCondition(c: ReplicaSetCondition): DeploymentCondition {
  const out: DeploymentCondition = { type: c.type, status: c.status };
  if (c.lastTransitionTime) {
    out.lastTransitionTime = c.lastTransitionTime;
    out.lastUpdateTime = c.lastTransitionTime;
  }
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  return out;
}

/** progressDeadlineSeconds is set and not MaxInt32. */
export function hasProgressDeadline(d: DeploymentObject): boolean {
  const s = d.spec?.progressDeadlineSeconds;
  return s !== undefined && s !== null && s !== INT32_MAX;
}

/** revisionHistoryLimit is set and not MaxInt32. */
export function hasRevisionHistoryLimit(d: DeploymentObject): boolean {
  const l = d.spec?.revisionHistoryLimit;
  return l !== undefined && l !== null && l !== INT32_MAX;
}

/** Every replica is updated and available and the status is current (DeploymentComplete). */
export function deploymentComplete(d: DeploymentObject, status: DeploymentStatus): boolean {
  const replicas = d.spec?.replicas ?? 0;
  return (
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/**
 * Something moved since the stored status: more updated, ready or available
 * replicas, or fewer old ones (DeploymentProgressing).
 */
export function deploymentProgressing(d: DeploymentObject, status: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/**
 * The Progressing condition of `status` was last updated more than
 * progressDeadlineSeconds before `now` (DeploymentTimedOut). A completed
 * rollout never times out; a timed-out one stays timed out.
 */
export function deploymentTimedOut(d: DeploymentObject, status: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const cond = getDeploymentCondition(status, DEPLOYMENT_PROGRESSING);
  if (!cond) return false;
  if (cond.reason === NEW_RS_AVAILABLE_REASON) return false;
  if (cond.reason === TIMED_OUT_REASON) return true;
  const from = parseTime(cond.lastUpdateTime);
  if (from === undefined) return false;
  return from + d.spec!.progressDeadlineSeconds! * 1000 < now;
}
