/**
 * Revision and replica annotations of Deployments and their ReplicaSets
 * (pkg/controller/deployment/util/deployment_util.go). These are what
 * `kubectl rollout history` and `rollout undo` read.
 */
import type { Logger } from '../../util/log/logger.js';
import { atoiInt32, parseInt64 } from './go-int.js';
import { compareByCreationTimestamp } from './replica-sets.js';
import { maxSurge } from './rolling-math.js';
import {
  DEPRECATED_ROLLBACK_TO_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  LAST_APPLIED_CONFIG_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  MAX_REV_HISTORY_LENGTH_IN_CHARS,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  type DeploymentObject,
  type ReplicaSetObject,
} from './types.js';

const SKIPPED_ANNOTATIONS = new Set([
  LAST_APPLIED_CONFIG_ANNOTATION,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  DEPRECATED_ROLLBACK_TO_ANNOTATION,
]);

/** Annotations the controller manages itself and never copies from the Deployment. */
export function skipCopyAnnotation(key: string): boolean {
  return SKIPPED_ANNOTATIONS.has(key);
}

/**
 * The revision of an object (0 when missing), an int64 as upstream's
 * Revision: a bigint, since revisions may exceed 2^53. Throws when the
 * annotation is not an int64.
 */
export function revisionOf(obj: { metadata?: { annotations?: Record<string, string> } }): bigint {
  const v = obj.metadata?.annotations?.[REVISION_ANNOTATION];
  if (v === undefined) return 0n;
  const n = parseInt64(v);
  if (n === undefined) throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(v)}: ${/^[+-]?[0-9]+$/.test(v) ? 'value out of range' : 'invalid syntax'}`);
  return n;
}

/** revisionOf, or undefined (logged) when the annotation is not an int64. */
function tryRevision(rs: ReplicaSetObject | undefined, log?: Logger): bigint | undefined {
  if (!rs) return undefined;
  try {
    return revisionOf(rs);
  } catch (err) {
    log?.v(4).info({ replicaSet: rs.metadata?.name, err: (err as Error).message }, "couldn't parse revision for replica set, deployment controller will skip it when reconciling revisions");
    return undefined;
  }
}

/** The highest revision among the ReplicaSets (unparsable ones are logged and skipped) (MaxRevision). */
export function maxRevision(rss: ReadonlyArray<ReplicaSetObject | undefined>, log?: Logger): bigint {
  let max = 0n;
  for (const rs of rss) {
    const v = tryRevision(rs, log);
    if (v !== undefined && v > max) max = v;
  }
  return max;
}

/** The second highest revision among the ReplicaSets: the one before the current (LastRevision). */
export function lastRevision(rss: ReadonlyArray<ReplicaSetObject | undefined>, log?: Logger): bigint {
  let max = 0n;
  let secMax = 0n;
  for (const rs of rss) {
    const v = tryRevision(rs, log);
    if (v === undefined) continue;
    if (v >= max) {
      secMax = max;
      max = v;
    } else if (v > secMax) {
      secMax = v;
    }
  }
  return secMax;
}

/**
 * Orders ReplicaSets by revision, oldest first; creation time (then name)
 * breaks ties and decides when either revision is unparsable
 * (ReplicaSetsByRevision).
 */
export function compareByRevision(a: ReplicaSetObject, b: ReplicaSetObject): number {
  const ra = tryRevision(a);
  const rb = tryRevision(b);
  if (ra === undefined || rb === undefined || ra === rb) return compareByCreationTimestamp(a, b);
  return ra < rb ? -1 : 1;
}

/** Copies the Deployment's annotations (except the skipped ones) to the ReplicaSet; true when any changed. */
export function copyDeploymentAnnotationsToReplicaSet(d: DeploymentObject, rs: ReplicaSetObject): boolean {
  rs.metadata ??= {};
  const ann = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) {
    if (skipCopyAnnotation(k) || ann[k] === v) continue;
    ann[k] = v;
    changed = true;
  }
  return changed;
}

/** True when desired-replicas / max-replicas differ from the given values. */
export function replicasAnnotationsNeedUpdate(rs: ReplicaSetObject, desired: number, max: number): boolean {
  const ann = rs.metadata?.annotations ?? {};
  return ann[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || ann[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** Sets desired-replicas and max-replicas; true when either changed. */
export function setReplicasAnnotations(rs: ReplicaSetObject, desired: number, max: number): boolean {
  rs.metadata ??= {};
  const ann = (rs.metadata.annotations ??= {});
  let updated = false;
  if (ann[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    ann[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    updated = true;
  }
  if (ann[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    ann[MAX_REPLICAS_ANNOTATION] = String(max);
    updated = true;
  }
  return updated;
}

/** The desired-replicas annotation, or undefined when missing or invalid. */
export function desiredReplicasAnnotation(rs: ReplicaSetObject): number | undefined {
  return intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
}

/** The max-replicas annotation, or undefined when missing or invalid. */
export function maxReplicasAnnotation(rs: ReplicaSetObject): number | undefined {
  return intAnnotation(rs, MAX_REPLICAS_ANNOTATION);
}

/** getIntFromAnnotation: int32(strconv.Atoi(value)), undefined when missing or not an integer. */
function intAnnotation(rs: ReplicaSetObject, key: string): number | undefined {
  return atoiInt32(rs.metadata?.annotations?.[key]);
}

/**
 * Brings the new ReplicaSet's annotations up to date (SetNewReplicaSetAnnotations):
 * the Deployment's annotations, the revision raised to `newRevision` when
 * lower (keeping the former revision in revision-history: that is a rollback
 * to this ReplicaSet), and, for a ReplicaSet about to be created
 * (`exists` false), desired-replicas and max-replicas. True when changed.
 */
export function setNewReplicaSetAnnotations(
  d: DeploymentObject,
  rs: ReplicaSetObject,
  newRevision: string,
  exists: boolean,
  log?: Logger,
  revHistoryLimitInChars = MAX_REV_HISTORY_LENGTH_IN_CHARS,
): boolean {
  let changed = copyDeploymentAnnotationsToReplicaSet(d, rs);
  const ann = (rs.metadata!.annotations ??= {});
  const had = REVISION_ANNOTATION in ann;
  const oldRevision = ann[REVISION_ANNOTATION] ?? '';
  let oldRevisionInt = parseInt64(oldRevision);
  if (oldRevisionInt === undefined) {
    if (oldRevision !== '') {
      log?.info({ replicaSet: rs.metadata?.name, revision: oldRevision }, 'updating replica set revision: old revision is not an integer');
      return false;
    }
    oldRevisionInt = 0n;
  }
  const newRevisionInt = parseInt64(newRevision);
  if (newRevisionInt === undefined) return false;
  if (oldRevisionInt < newRevisionInt) {
    ann[REVISION_ANNOTATION] = newRevision;
    changed = true;
  }
  if (had && oldRevisionInt < newRevisionInt) {
    const history = ann[REVISION_HISTORY_ANNOTATION] ?? '';
    let old = history.split(',');
    if (old[0]!.length === 0) {
      ann[REVISION_HISTORY_ANNOTATION] = oldRevision;
    } else {
      let totalLen = history.length + oldRevision.length + 1;
      let start = 0;
      while (totalLen > revHistoryLimitInChars && start < old.length) {
        totalLen = totalLen - old[start]!.length - 1;
        start++;
      }
      if (totalLen <= revHistoryLimitInChars) {
        old = [...old.slice(start), oldRevision];
        ann[REVISION_HISTORY_ANNOTATION] = old.join(',');
      } else {
        log?.info({ revisionHistoryLimit: revHistoryLimitInChars }, 'not appending revision due to revision history length limit reached');
      }
    }
  }
  if (!exists) {
    const desired = d.spec?.replicas ?? 0;
    if (setReplicasAnnotations(rs, desired, desired + maxSurge(d))) changed = true;
  }
  return changed;
}

/** Sets the Deployment's revision annotation; true when it changed (SetDeploymentRevision). */
export function setDeploymentRevision(d: DeploymentObject, revision: string): boolean {
  d.metadata ??= {};
  const ann = (d.metadata.annotations ??= {});
  if (ann[REVISION_ANNOTATION] === revision) return false;
  ann[REVISION_ANNOTATION] = revision;
  return true;
}

/**
 * Gives the Deployment the annotations of the ReplicaSet it rolls back to,
 * keeping only its own controller-managed ones (SetDeploymentAnnotationsTo).
 */
export function setDeploymentAnnotationsTo(d: DeploymentObject, rollbackToRS: ReplicaSetObject): void {
  d.metadata ??= {};
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) if (skipCopyAnnotation(k)) kept[k] = v;
  for (const [k, v] of Object.entries(rollbackToRS.metadata?.annotations ?? {})) if (!skipCopyAnnotation(k)) kept[k] = v;
  d.metadata.annotations = kept;
}
