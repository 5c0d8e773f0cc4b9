/**
 * The default profile: filter plugins in upstream's order and score plugins
 * with the default-scheduler weights (TaintToleration 3; NodeAffinity,
 * PodTopologySpread, InterPodAffinity 2; the rest 1); VolumeBinding also
 * reserves and pre-binds; DefaultPreemption is the PostFilter.
 */
import type { Client } from '../client/interfaces.js';
import type { Clock } from '../util/clock/clock.js';
import { DEFAULT_PREEMPTION_ARGS, type PreemptionArgs } from './preemption.js';
import type { FilterPlugin, PreBindPlugin, ReservePlugin, WeightedScorePlugin } from './framework.js';
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
  nodeVolumeLimits,
  newVolumeBinding,
  podTopologySpreadFilter,
  podTopologySpreadScore,
  taintTolerationFilter,
  taintTolerationScore,
  volumeRestrictions,
  volumeZone,
} from './plugins/index.js';

export interface Profile {
  readonly schedulerName: string;
  readonly filters: readonly FilterPlugin[];
  readonly scores: readonly WeightedScorePlugin[];
  /** Run in order once a node is chosen; unreserve in reverse when a later step fails. */
  readonly reserves?: readonly ReservePlugin[];
  /** Run in order in the binding cycle, before the Binding. */
  readonly preBinds?: readonly PreBindPlugin[];
  /** DefaultPreemption's arguments when that PostFilter plugin is enabled. */
  readonly preemption?: PreemptionArgs;
  /** The profile's percentageOfNodesToScore (the configuration's when unset). */
  readonly percentageOfNodesToScore?: number;
}

/** What stateful plugins (VolumeBinding) need from their scheduler. */
export interface ProfileHandle {
  client?: Client;
  clock?: Clock;
  /** VolumeBinding's bind timeout (default 600 s). */
  bindTimeoutMs?: number;
}

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export function defaultProfile(handle: ProfileHandle = {}): Profile {
  const volumeBinding = newVolumeBinding({ client: handle.client, clock: handle.clock, bindTimeoutMs: handle.bindTimeoutMs });
  return {
    schedulerName: DEFAULT_SCHEDULER_NAME,
    filters: [
      nodeUnschedulable,
      nodeNamePlugin,
      taintTolerationFilter,
      nodeAffinityFilter,
      nodePorts,
      nodeResourcesFitFilter,
      volumeRestrictions,
      nodeVolumeLimits,
      volumeBinding,
      volumeZone,
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
    reserves: [volumeBinding],
    preBinds: [volumeBinding],
    preemption: DEFAULT_PREEMPTION_ARGS,
  };
}
