/**
 * The default profile: filter plugins in upstream's order and score plugins
 * with the default-scheduler weights (TaintToleration 3; NodeAffinity,
 * PodTopologySpread, InterPodAffinity 2; the rest 1).
 */
import type { FilterPlugin, WeightedScorePlugin } from './framework.js';
import {
  balancedAllocation,
  imageLocality,
  interPodAffinityFilter,
  interPodAffinityScore,
  nodeAffinityFilter,
  nodeAffinityScore,
  nodeNamePlugin,
  nodePorts,
  nodeResourcesFitFilter,
  nodeResourcesFitScore,
  nodeUnschedulable,
  podTopologySpreadFilter,
  podTopologySpreadScore,
  taintTolerationFilter,
  taintTolerationScore,
} from './plugins/index.js';

export interface Profile {
  readonly schedulerName: string;
  readonly filters: readonly FilterPlugin[];
  readonly scores: readonly WeightedScorePlugin[];
}

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export function defaultProfile(): Profile {
  return {
    schedulerName: DEFAULT_SCHEDULER_NAME,
    filters: [
      nodeUnschedulable,
      nodeNamePlugin,
      taintTolerationFilter,
      nodeAffinityFilter,
      nodePorts,
      nodeResourcesFitFilter,
      podTopologySpreadFilter,
      interPodAffinityFilter,
    ],
    scores: [
      { plugin: taintTolerationScore, weight: 3 },
      { plugin: nodeAffinityScore, weight: 2 },
      { plugin: nodeResourcesFitScore, weight: 1 },
      { plugin: podTopologySpreadScore, weight: 2 },
      { plugin: interPodAffinityScore, weight: 2 },
      { plugin: balancedAllocation, weight: 1 },
      { plugin: imageLocality, weight: 1 },
    ],
  };
}
