/**
 * The toleration time of a pod and the NoExecute taints of a node (taint
 * matching itself is in api/taints.ts).
 */
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';

/**
 * The shortest tolerationSeconds among `tolerations` in ms; -1 (forever)
 * when none sets it; 0 for no tolerations or a non-positive value.
 */
export function getMinTolerationTimeMs(tolerations: readonly Toleration[]): number {
  if (!tolerations.length) return 0;
  let min = -1;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    const ms = Math.max(0, t.tolerationSeconds) * 1000;
    if (min < 0 || ms < min) min = ms;
  }
  return min;
}

/** The NoExecute taints among `taints`. */
export function getNoExecuteTaints(taints: readonly Taint[] | undefined): Taint[] {
  return (taints ?? []).filter((t) => t.effect === 'NoExecute');
}
