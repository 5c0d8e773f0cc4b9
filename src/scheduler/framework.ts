/**
 * The plugin contracts (a subset of the scheduling framework) and the state
 * one scheduling cycle shares between them.
 *
 * A scheduling cycle: every filter plugin's preFilter once, then filter per
 * node; then, for the feasible nodes, each score plugin's preScore, score per
 * node and normalize; the weighted sum picks the node. Then each reserve
 * plugin's reserve (in order; on failure, unreserve of all in reverse) and the
 * pod is assumed on the node. The binding cycle (in the background): each
 * preBind plugin in order, then the Binding; a failure there runs every
 * unreserve and retries the pod.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSINode, StorageClass } from 'kubernetes-types/storage/v1.js';
import type { Labels, Selector } from '../api/labels.js';
import type { NodeInfo, PodInfo } from './node-info.js';

export const MAX_NODE_SCORE = 100;

/**
 * Unschedulable: another pod's removal (preemption) could help.
 * UnschedulableAndUnresolvable: nothing short of a cluster change helps.
 */
export type StatusCode = 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Error';

/** A failed filter (success is `undefined`). Each reason is counted in the FailedScheduling message. */
export interface Status {
  readonly code: StatusCode;
  readonly reasons: readonly string[];
  /** The plugin that failed; set by the framework. */
  plugin?: string;
}

export function unschedulable(...reasons: string[]): Status {
  return { code: 'Unschedulable', reasons };
}
export function unresolvable(...reasons: string[]): Status {
  return { code: 'UnschedulableAndUnresolvable', reasons };
}
/** An internal error (framework.AsStatus): the attempt fails with a SchedulerError instead of counting the node as unfit. */
export function errorStatus(message: string): Status {
  return { code: 'Error', reasons: [message] };
}

/** What the plugins see of the cluster during one cycle. */
export interface Snapshot {
  /** Every node the cache knows (with a Node object). */
  readonly nodes: readonly NodeInfo[];
  get(name: string): NodeInfo | undefined;
  /** Nodes with at least one pod having (anti-)affinity, and with required anti-affinity. */
  readonly havePodsWithAffinity: readonly NodeInfo[];
  readonly havePodsWithRequiredAntiAffinity: readonly NodeInfo[];
  /**
   * The NodeInfos of `nodes` changed in place (pods, node object) from cycle to cycle, when the
   * snapshot comes from a scheduler cache: sums over every node can be kept up to date from it.
   */
  readonly changes?: NodeChangeLog;
}

export function newSnapshot(nodes: readonly NodeInfo[], changes?: NodeChangeLog): Snapshot {
  const byName = new Map<string, NodeInfo>();
  for (const n of nodes) byName.set(n.node?.metadata?.name ?? '', n);
  return {
    nodes,
    get: (name) => byName.get(name),
    havePodsWithAffinity: nodes.filter((n) => n.podsWithAffinity > 0),
    havePodsWithRequiredAntiAffinity: nodes.filter((n) => n.podsWithRequiredAntiAffinity > 0),
    ...(changes ? { changes } : {}),
  };
}

/** Entries NodeChangeLog keeps; a sum last brought up to date before them is made again. */
const CHANGE_LOG_LENGTH = 4096;

/**
 * The NodeInfos of one node list in the order they changed, and the sums plugins keep over the list
 * (`memos`). A scheduler cache records every change of a NodeInfo's pods or node object here and
 * starts a new log when the node list itself changes. Upstream walks every node in each cycle
 * (in parallel); a sum over a thousand nodes kept this way costs only the nodes changed since.
 */
export class NodeChangeLog {
  private readonly log: NodeInfo[] = [];
  /** The sequence number of log[0]. */
  private base = 0;
  /** Per plugin key, a sum over the node list with the sequence number it is current to. */
  readonly memos = new Map<string, { seq: number }>();

  /** The sequence number of the next change. */
  get seq(): number {
    return this.base + this.log.length;
  }

  record(info: NodeInfo): void {
    this.log.push(info);
    if (this.log.length > CHANGE_LOG_LENGTH) {
      const drop = CHANGE_LOG_LENGTH / 2;
      this.log.splice(0, drop);
      this.base += drop;
    }
  }

  /** The NodeInfos changed from sequence number `seq` on (repeats included), or undefined when the log no longer goes back that far. */
  since(seq: number): readonly NodeInfo[] | undefined {
    return seq < this.base ? undefined : this.log.slice(seq - this.base);
  }
}

/** Services, controllers and namespaces the plugins may consult. */
export interface ClusterLookups {
  /** Labels of a namespace (for namespaceSelector in affinity terms); undefined when unknown. */
  namespaceLabels(ns: string): Labels | undefined;
  /**
   * Label selectors of the Services, ReplicationControllers, ReplicaSets and
   * StatefulSets selecting `pod` (used by default topology spreading).
   */
  ownerSelectors(pod: Pod): Selector[];
  /** A pod from the informer cache (the binding cycle checks that it still exists). */
  pod(namespace: string, name: string): Pod | undefined;
  /** A PersistentVolumeClaim from the informer cache (shared; read-only). */
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  persistentVolume(name: string): PersistentVolume | undefined;
  persistentVolumes(): readonly PersistentVolume[];
  storageClass(name: string): StorageClass | undefined;
  csiNode(name: string): CSINode | undefined;
}

export const noLookups: ClusterLookups = {
  namespaceLabels: () => undefined,
  ownerSelectors: () => [],
  pod: () => undefined,
  claim: () => undefined,
  persistentVolume: () => undefined,
  persistentVolumes: () => [],
  storageClass: () => undefined,
  csiNode: () => undefined,
};

/** Per-cycle state: each plugin stores what its preFilter / preScore computed. */
export interface CycleContext {
  readonly pod: Pod;
  readonly podInfo: PodInfo;
  readonly snapshot: Snapshot;
  readonly lookups: ClusterLookups;
  readonly state: Map<string, unknown>;
}

export interface FilterPlugin {
  readonly name: string;
  /** Returning a status rejects every node with it (no per-node filter runs). */
  preFilter?(ctx: CycleContext): Status | undefined;
  filter(ctx: CycleContext, node: NodeInfo): Status | undefined;
  /**
   * PreFilterExtensions: `podToAdd` / `podToRemove` is (as if) placed on or
   * removed from `node`; update this cycle's preFilter state to match. Used by
   * preemption's dry runs and by the pass with nominated pods. They must
   * replace their state in `ctx.state` rather than mutate it, so that a
   * shallow copy of the state (cloneCycle) is an independent copy.
   */
  addPod?(ctx: CycleContext, podToAdd: PodInfo, node: NodeInfo): void;
  removePod?(ctx: CycleContext, podToRemove: PodInfo, node: NodeInfo): void;
}

/** A copy of the cycle whose plugin state can change independently (CycleState.Clone). */
export function cloneCycle(ctx: CycleContext): CycleContext {
  return { ...ctx, state: new Map(ctx.state) };
}

/**
 * Reserve / Unreserve: reserve runs once the node is chosen, before the pod
 * is assumed; unreserve undoes it when a later step fails and must be
 * idempotent (it may run for a plugin whose reserve never ran).
 */
export interface ReservePlugin {
  readonly name: string;
  reserve(ctx: CycleContext, node: string): Status | undefined;
  unreserve(ctx: CycleContext, node: string): void;
}

/** PreBind: runs in the binding cycle before the Binding is created; may wait. A status fails the attempt. */
export interface PreBindPlugin {
  readonly name: string;
  preBind(ctx: CycleContext, node: string, signal: AbortSignal): Promise<Status | undefined>;
}

export interface NodeScore {
  readonly name: string;
  score: number;
}

export interface ScorePlugin {
  readonly name: string;
  /** Returning 'skip' leaves this plugin out of the cycle's scores. */
  preScore?(ctx: CycleContext, feasible: readonly NodeInfo[]): 'skip' | undefined;
  score(ctx: CycleContext, node: NodeInfo): number;
  /** Maps raw scores onto 0..MAX_NODE_SCORE, in place. */
  normalize?(ctx: CycleContext, scores: NodeScore[]): void;
}

/** A score plugin with its weight in the profile. */
export interface WeightedScorePlugin {
  readonly plugin: ScorePlugin;
  readonly weight: number;
}

/**
 * framework.DefaultNormalizeScore: scales to 0..max by the highest score;
 * `reverse` turns high into low. With all scores 0, reverse gives everyone max.
 */
export function defaultNormalizeScore(max: number, reverse: boolean, scores: NodeScore[]): void {
  let top = 0;
  for (const s of scores) top = Math.max(top, s.score);
  if (top === 0) {
    if (reverse) for (const s of scores) s.score = max;
    return;
  }
  for (const s of scores) {
    let v = Math.trunc((max * s.score) / top);
    if (reverse) v = max - v;
    s.score = v;
  }
}
