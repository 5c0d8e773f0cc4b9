/**
 * The default profile: filter plugins in upstream's order and score plugins
 * with the default-scheduler weights (TaintToleration 3; NodeAffinity,
 * PodTopologySpread, InterPodAffinity 2; the rest 1); VolumeBinding also
 * reserves and pre-binds; DefaultPreemption is the PostFilter. The plugin
 * sets are config.ts's defaults (a KubeSchedulerConfiguration's profiles
 * change them).
 */
import type { Client } from '../client/interfaces.js';
import type { Clock } from '../util/clock/clock.js';
import type { PreemptionArgs } from './preemption.js';
import type { FilterPlugin, PreBindPlugin, ReservePlugin, WeightedScorePlugin } from './framework.js';
import { profileWithDefaults } from './config.js';

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
  return profileWithDefaults(DEFAULT_SCHEDULER_NAME, handle);
}
