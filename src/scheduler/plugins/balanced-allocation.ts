/**
 * NodeResourcesBalancedAllocation: favours nodes whose cpu and memory would
 * be used in similar fractions after placing the pod: (1 - std) * 100.
 * Best-effort pods (no cpu or memory request) are not scored by it.
 */
import { MAX_NODE_SCORE, type ScorePlugin } from '../framework.js';
import { resourceAmount } from '../resources.js';
import { SCORED_RESOURCES } from './node-resources-fit.js';

/** balancedResourceScorer over requested/allocatable fractions (each capped at 1). */
export function balancedScore(requested: readonly number[], allocatable: readonly number[]): number {
  const fractions: number[] = [];
  for (let i = 0; i < requested.length; i++) {
    if (allocatable[i] === 0) continue;
    fractions.push(Math.min(1, requested[i]! / allocatable[i]!));
  }
  let std = 0;
  if (fractions.length === 2) std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  else if (fractions.length > 2) {
    const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
    std = Math.sqrt(fractions.reduce((a, f) => a + (f - mean) * (f - mean), 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

export const balancedAllocation: ScorePlugin = {
  name: 'NodeResourcesBalancedAllocation',
  preScore(ctx) {
    const best = SCORED_RESOURCES.every((r) => resourceAmount(ctx.podInfo.requests, r.name) === 0);
    return best ? 'skip' : undefined;
  },
  score(ctx, info) {
    const requested: number[] = [];
    const allocatable: number[] = [];
    for (const r of SCORED_RESOURCES) {
      const alloc = resourceAmount(info.allocatable, r.name);
      allocatable.push(alloc);
      requested.push(alloc === 0 ? 0 : resourceAmount(info.requested, r.name) + resourceAmount(ctx.podInfo.requests, r.name));
    }
    return balancedScore(requested, allocatable);
  },
};
