/**
 * Proportional scaling (the RollingUpdate part of DeploymentController.scale):
 * when spec.replicas changes in the middle of a rollout, the difference is
 * spread over the active ReplicaSets in proportion to their sizes, so that
 * neither the old nor the new pods are favoured.
 */
import { getReplicaSetProportion, maxSurge } from './rolling-math.js';
import { compareBySizeNewer, compareBySizeOlder, filterActiveReplicaSets, getReplicaCountForReplicaSets, specReplicas } from './replica-sets.js';
import type { DeploymentObject, ReplicaSetObject } from './types.js';

export interface ScaleTarget {
  rs: ReplicaSetObject;
  size: number;
}

export interface ProportionalPlan {
  /** 'up', 'down', or '' when the total already fits. */
  operation: 'up' | 'down' | '';
  /** The active ReplicaSets in the order to write them, with their new sizes. */
  targets: ScaleTarget[];
}

/**
 * New sizes for the active ReplicaSets among `rss` so that together they hold
 * spec.replicas + maxSurge (0 when scaling to 0). Scaling up, larger and then
 * newer ReplicaSets come first; scaling down, larger and then older ones.
 * Rounding leftovers go to the first (largest) one, never below 0.
 */
export function proportionalScale(d: DeploymentObject, rss: ReadonlyArray<ReplicaSetObject | undefined>): ProportionalPlan {
  const active = filterActiveReplicaSets(rss);
  const replicas = d.spec?.replicas ?? 0;
  const allowedSize = replicas > 0 ? replicas + maxSurge(d) : 0;
  const toAdd = allowedSize - getReplicaCountForReplicaSets(active);
  let operation: ProportionalPlan['operation'] = '';
  if (toAdd > 0) {
    active.sort(compareBySizeNewer);
    operation = 'up';
  } else if (toAdd < 0) {
    active.sort(compareBySizeOlder);
    operation = 'down';
  }
  let added = 0;
  const sizes = active.map((rs) => {
    if (toAdd === 0) return specReplicas(rs);
    const proportion = getReplicaSetProportion(rs, d, toAdd, added);
    added += proportion;
    return specReplicas(rs) + proportion;
  });
  if (toAdd !== 0 && sizes.length > 0) {
    sizes[0] = Math.max(0, sizes[0]! + (toAdd - added));
  }
  return { operation, targets: active.map((rs, i) => ({ rs, size: sizes[i]! })) };
}
