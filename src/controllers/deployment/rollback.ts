/**
 * Rollback through the `deprecated.deployment.rollback.to` annotation
 * (pkg/controller/deployment/rollback.go): what extensions/v1beta1's
 * spec.rollbackTo round-trips to. The Deployment gets the pod template and
 * annotations of the ReplicaSet at that revision (0: the previous one), and
 * the annotation is cleared in every case. Revisions are int64 (bigint).
 */
import { lastRevision, revisionOf, setDeploymentAnnotationsTo } from './annotations.js';
import { parseInt64 } from './go-int.js';
import { equalIgnoreHash } from './replica-sets.js';
import type { SyncContext } from './sync-context.js';
import { getAllReplicaSetsAndSyncRevision } from './sync.js';
import { DEPRECATED_ROLLBACK_TO_ANNOTATION, POD_TEMPLATE_HASH_LABEL, type DeploymentObject, type ReplicaSetObject } from './types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

// Event reasons (deployment_util.go).
export const ROLLBACK_REVISION_NOT_FOUND = 'DeploymentRollbackRevisionNotFound';
export const ROLLBACK_TEMPLATE_UNCHANGED = 'DeploymentRollbackTemplateUnchanged';
export const ROLLBACK_DONE = 'DeploymentRollback';

/** The revision to roll back to, or undefined when the annotation is missing, empty or not an int64 (getRollbackTo). */
export function getRollbackTo(d: DeploymentObject): bigint | undefined {
  const v = d.metadata?.annotations?.[DEPRECATED_ROLLBACK_TO_ANNOTATION];
  if (!v) return undefined;
  return parseInt64(v);
}

/** Rolls the Deployment back to the requested revision and clears the request (rollback). */
export async function rollback(sc: SyncContext, d: DeploymentObject, rsList: ReplicaSetObject[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(sc, d, rsList, true);
  const allRSs = [...oldRSs, newRS];
  let revision = getRollbackTo(d) ?? 0n;
  if (revision === 0n) {
    revision = lastRevision(allRSs, sc.log);
    if (revision === 0n) {
      sc.recorder.event(d, 'Warning', ROLLBACK_REVISION_NOT_FOUND, 'Unable to find last revision.');
      await updateDeploymentAndClearRollbackTo(sc, d);
      return;
    }
  }
  for (const rs of allRSs) {
    if (!rs) continue;
    let v: bigint;
    try {
      v = revisionOf(rs);
    } catch (err) {
      sc.log.v(4).info({ replicaSet: rs.metadata?.name, err: (err as Error).message }, "unable to extract revision from deployment's replica set");
      continue;
    }
    if (v !== revision) continue;
    sc.log.v(4).info({ replicaSet: rs.metadata?.name, revision: String(v) }, 'found replica set with desired revision');
    // The revision is raised by the next getAllReplicaSetsAndSyncRevision.
    const performed = await rollbackToTemplate(sc, d, rs);
    if (performed) sc.recorder.event(d, 'Normal', ROLLBACK_DONE, `Rolled back deployment "${d.metadata?.name ?? ''}" to revision ${String(revision)}`);
    return;
  }
  sc.recorder.event(d, 'Warning', ROLLBACK_REVISION_NOT_FOUND, 'Unable to find the revision to rollback to.');
  await updateDeploymentAndClearRollbackTo(sc, d);
}

/** Copies the ReplicaSet's template and annotations into the Deployment when they differ; clears the request either way. */
async function rollbackToTemplate(sc: SyncContext, d: DeploymentObject, rs: ReplicaSetObject): Promise<boolean> {
  let performed = false;
  if (!equalIgnoreHash(d.spec?.template, rs.spec?.template)) {
    sc.log.v(4).info({ deployment: `${d.metadata?.namespace}/${d.metadata?.name}` }, 'rolling back deployment to old template spec');
    setFromReplicaSetTemplate(d, rs);
    // Otherwise the Deployment's current annotations would be copied onto the ReplicaSet rolled back to.
    setDeploymentAnnotationsTo(d, rs);
    performed = true;
  } else {
    sc.log.v(4).info({ deployment: `${d.metadata?.namespace}/${d.metadata?.name}` }, 'rolling back to a revision that contains the same template as current deployment, skipping rollback');
    sc.recorder.event(d, 'Warning', ROLLBACK_TEMPLATE_UNCHANGED, `The rollback revision contains the same template as current deployment "${d.metadata?.name ?? ''}"`);
  }
  await updateDeploymentAndClearRollbackTo(sc, d);
  return performed;
}

/** The ReplicaSet's pod template without its pod-template-hash label (SetFromReplicaSetTemplate). */
function setFromReplicaSetTemplate(d: DeploymentObject, rs: ReplicaSetObject): void {
  const template = deepCopy(rs.spec?.template ?? {});
  template.metadata ??= {};
  if (template.metadata.labels) {
    const { [POD_TEMPLATE_HASH_LABEL]: _hash, ...rest } = template.metadata.labels;
    template.metadata.labels = rest;
  }
  d.spec!.template = template;
}

async function updateDeploymentAndClearRollbackTo(sc: SyncContext, d: DeploymentObject): Promise<void> {
  sc.log.v(4).info({ deployment: `${d.metadata?.namespace}/${d.metadata?.name}` }, 'cleans up rollbackTo of deployment');
  if (d.metadata?.annotations) delete d.metadata.annotations[DEPRECATED_ROLLBACK_TO_ANNOTATION];
  const updated = await sc.deployments.namespace(d.metadata?.namespace ?? '').update(d);
  if (updated.metadata?.resourceVersion) (d.metadata as { resourceVersion?: string }).resourceVersion = updated.metadata.resourceVersion;
}
