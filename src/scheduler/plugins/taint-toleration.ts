/**
 * TaintToleration: NoSchedule and NoExecute taints must be tolerated; the
 * score prefers nodes with fewer untolerated PreferNoSchedule taints.
 */
import type { Toleration } from 'kubernetes-types/core/v1.js';
import { defaultNormalizeScore, MAX_NODE_SCORE, unresolvable, type FilterPlugin, type ScorePlugin } from '../framework.js';
import { doNotScheduleTaint, findUntoleratedTaint, tolerationsTolerateTaint } from '../../api/taints.js';

export function untoleratedTaintReason(key: string, value: string | undefined): string {
  return `node(s) had untolerated taint {${key}: ${value ?? ''}}`;
}

export const taintTolerationFilter: FilterPlugin = {
  name: 'TaintToleration',
  filter(ctx, info) {
    const taint = findUntoleratedTaint(info.node?.spec?.taints, ctx.pod.spec?.tolerations, doNotScheduleTaint);
    return taint ? unresolvable(untoleratedTaintReason(taint.key, taint.value)) : undefined;
  },
};

const STATE_KEY = 'TaintToleration/preferNoScheduleTolerations';

export const taintTolerationScore: ScorePlugin = {
  name: 'TaintToleration',
  preScore(ctx) {
    // Only tolerations with an empty or PreferNoSchedule effect count here.
    const tolerations = (ctx.pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    ctx.state.set(STATE_KEY, tolerations);
    return undefined;
  },
  score(ctx, info) {
    const tolerations = (ctx.state.get(STATE_KEY) as Toleration[] | undefined) ?? [];
    let count = 0;
    for (const taint of info.node?.spec?.taints ?? []) {
      if (taint.effect !== 'PreferNoSchedule') continue;
      if (!tolerationsTolerateTaint(tolerations, taint)) count++;
    }
    return count;
  },
  normalize(_ctx, scores) {
    defaultNormalizeScore(MAX_NODE_SCORE, true, scores);
  },
};
