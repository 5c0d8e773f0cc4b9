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
}

/** Pods of a Deployment grouped by the UID of the ReplicaSet that controls them. */
export type PodMap = Map<string, Array<import('./types.js').PodObject>>;
