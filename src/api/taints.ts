/**
 * Taints and tolerations (k8s.io/api core/v1 toleration.go and taint.go,
 * component-helpers scheduling/corev1): the one place every layer (scheduler,
 * controllers, simulated nodes) matches tolerations against taints.
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

/** Some toleration tolerates `taint` (TolerationsTolerateTaint). */
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

/**
 * True with the tolerations used (the first matching one per taint) when
 * every taint is tolerated; false with none otherwise (GetMatchingTolerations).
 */
export function getMatchingTolerations(taints: readonly Taint[], tolerations: readonly Toleration[] | undefined): [boolean, Toleration[]] {
  if (!taints.length) return [true, []];
  if (!tolerations?.length) return [false, []];
  const used: Toleration[] = [];
  for (const taint of taints) {
    const t = tolerations.find((x) => toleratesTaint(x, taint));
    if (!t) return [false, []];
    used.push(t);
  }
  return [true, used];
}

/** Same key and effect (Taint.MatchTaint). */
export function matchTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** Some taint of `taints` has the key and effect of `t` (TaintExists). */
export function taintExists(taints: readonly Taint[] | undefined, t: Taint): boolean {
  return (taints ?? []).some((x) => matchTaint(x, t));
}
