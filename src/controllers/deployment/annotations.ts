/**
 * Revision and replica annotations of Deployments and their ReplicaSets
 * (pkg/controller/deployment/util/deployment_util.go). These are what
 * `kubectl rollout history` and `rollout undo` read.
 */
import type { Logger } from '../../util/log/logger.js';
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

/** Go strconv.ParseInt(s, 10, 64) for the values we meet; undefined when invalid. */
function parseInt64(s: string | undefined): number | undefined {
  if (s === undefined || !/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The revision of an object (0 when missing); throws when the annotation is not an integer. */
export function revisionOf(obj: { metadata?: { annotations?: Record<string, string> } }): number {
  const v = obj.metadata?.annotations?.[REVISION_ANNOTATION];
  if (v === undefined) return 0;
  const n = parseInt64(v);
  if (n === undefined) throw new Error(`invalid revision annotation ${JSON.stringify(v)}`);
  return n;
}

/** The highest revision among the ReplicaSets (unparsable ones are logged and skipped). */
export function maxRevision(rss: readonly ReplicaSetObject[], log?: Logger): number {
  let max = 0;
  for (const rs of rss) {
    try {
      max = Math.max(max, revisionOf(rs));
    } catch (err) {
      log?.v(4).info({ replicaSet: rs.metadata?.name, err: (err as Error).message }, "couldn't parse revision for replica set");
    }
  }
  return max;
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

function intAnnotation(rs: ReplicaSetObject, key: string): number | undefined {
  const n = parseInt64(rs.metadata?.annotations?.[key]);
  return n !== undefined && n >= -2147483648 && n <= 2147483647 ? n : undefined;
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
    oldRevisionInt = 0;
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
