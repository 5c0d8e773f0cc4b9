/**
 * Taint/toleration matching (core/v1 helper ToleratesTaint,
 * GetMatchingTolerations) and the toleration time of a pod.
 */
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';

/** Whether `t` tolerates `taint` (Toleration.ToleratesTaint). */
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

/**
 * True with the tolerations used (the first matching one per taint) when
 * every taint is tolerated; false with none otherwise.
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
