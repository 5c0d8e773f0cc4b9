/**
 * NodeAffinity: filter on spec.nodeSelector and required node affinity;
 * score by the weights of matching preferred terms (normalised to 0-100).
 */
import { defaultNormalizeScore, MAX_NODE_SCORE, unresolvable, type FilterPlugin, type ScorePlugin } from '../framework.js';
import { podMatchesNodeSelectorAndAffinity, preferredNodeAffinityScore } from '../node-selector.js';

export const ERR_REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";

export const nodeAffinityFilter: FilterPlugin = {
  name: 'NodeAffinity',
  filter(ctx, info) {
    if (!info.node) return unresolvable(ERR_REASON_NODE_AFFINITY);
    return podMatchesNodeSelectorAndAffinity(ctx.pod, info.node) ? undefined : unresolvable(ERR_REASON_NODE_AFFINITY);
  },
};

export const nodeAffinityScore: ScorePlugin = {
  name: 'NodeAffinity',
  preScore(ctx) {
    const preferred = ctx.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    return preferred.length === 0 ? 'skip' : undefined;
  },
  score(ctx, info) {
    if (!info.node) return 0;
    return preferredNodeAffinityScore(ctx.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, info.node);
  },
  normalize(_ctx, scores) {
    defaultNormalizeScore(MAX_NODE_SCORE, false, scores);
  },
};
