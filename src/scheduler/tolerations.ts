/**
 * Taints and tolerations (k8s.io/api core/v1 toleration.go and
 * component-helpers scheduling/corev1).
 */
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';

/**
 * Toleration.ToleratesTaint: an empty effect matches every effect, an empty
 * key (only valid with Exists) matches every key; Equal (or no operator)
 * compares values, Exists ignores them.
 */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function tolerationsTolerateTaint(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

/** The first taint accepted by `filter` that no toleration tolerates (FindMatchingUntoleratedTaint). */
export function findUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  filter: (t: Taint) => boolean,
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!filter(taint)) continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return taint;
  }
  return undefined;
}

/** NoSchedule and NoExecute taints keep pods off a node at scheduling time. */
export function doNotScheduleTaint(t: Taint): boolean {
  return t.effect === 'NoSchedule' || t.effect === 'NoExecute';
}
