/**
 * What the deployment sync functions (sync.ts, rolling.ts, recreate.ts,
 * progress.ts) need from their controller.
 */
import type { ResourceInterface } from '../../client/interfaces.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { DeploymentObject, ReplicaSetObject } from './types.js';

export interface SyncContext {
  deployments: ResourceInterface<DeploymentObject>;
  replicaSets: ResourceInterface<ReplicaSetObject>;
  /** Shared cache state: read-only. */
  rsLister: Lister<ReplicaSetObject>;
  recorder: EventRecorder;
  clock: Clock;
  log: Logger;
  enqueueAfter(d: DeploymentObject, delayMs: number): void;
  enqueueRateLimited(d: DeploymentObject): void;
  /** ScalingReplicaSet's message: "Scaled up replica set web-1 from 0 to 3", or as before 1.22 "... to 3" (scalingMessage). */
  legacyScalingMessages?: boolean;
}

/**
 * The ScalingReplicaSet event's message. kube-controller-manager says "Scaled
 * up replica set web-1 from 0 to 3" since the previous size was added (after
 * 1.21; first as "to 3 from 0", in this order since 1.31), and "Scaled up
 * replica set web-1 to 3" through 1.21, which `legacy` gives (kcm on an older
 * API server talks as that release's controller manager did).
 */
export function scalingMessage(operation: string, rsName: string, oldScale: number, newScale: number, legacy = false): string {
  return legacy ? `Scaled ${operation} replica set ${rsName} to ${newScale}` : `Scaled ${operation} replica set ${rsName} from ${oldScale} to ${newScale}`;
}

/** Pods of a Deployment grouped by the UID of the ReplicaSet that controls them. */
export type PodMap = Map<string, Array<import('./types.js').PodObject>>;
