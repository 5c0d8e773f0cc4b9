/**
 * One scheduling decision (schedulePod in schedule_one.go): filter every
 * node, score the feasible ones, pick the highest total (ties at random).
 * Pure: reads a snapshot, changes nothing.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { cloneCycle, type ClusterLookups, type CycleContext, type NodeScore, type Snapshot, type Status } from './framework.js';
import { addPod, cloneNodeInfo, newPodInfo, nodeName, podKey, podPriority, removePod, type NodeInfo, type PodInfo } from './node-info.js';
import type { PodNominator } from './nominator.js';
import type { Profile } from './profile.js';
import type { Random } from './random.js';

/** ErrNoNodesAvailable's message. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

export type ScheduleResult =
  /** `ctx` carries the plugins' cycle state on to reserve and preBind. */
  | { kind: 'scheduled'; node: string; feasibleNodes: number; evaluatedNodes: number; processedNodes: number; ctx: CycleContext }
  /** `ctx` (when the filters ran) carries the preFilter state on to preemption. */
  | { kind: 'unschedulable'; message: string; nodeStatuses: Map<string, Status>; fit?: FitError; ctx?: CycleContext }
  /** A plugin failed with an internal error (an Error status): a SchedulerError, not a FitError. */
  | { kind: 'error'; message: string };

/** A pod that fits no node, with each node's failing status (framework.FitError). */
export interface FitError {
  numAllNodes: number;
  nodeStatuses: Map<string, Status>;
  /** A status from a preFilter that rejected every node, when that happened. */
  preFilterMessage?: string;
  /** The preemption (PostFilter) outcome, without its trailing separator. */
  postFilterMessage?: string;
}

/**
 * FitError.Error(): "0/N nodes are available: <count> <reason>, .... <postfilter>."
 * Reasons are counted over nodes and sorted as strings (count included).
 */
export function fitErrorMessage(e: FitError): string {
  let msg = `0/${e.numAllNodes} nodes are available:`;
  if (e.preFilterMessage) msg += ` ${e.preFilterMessage}.`;
  else {
    const counts = new Map<string, number>();
    for (const s of e.nodeStatuses.values()) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
    const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort(compareStrings);
    if (parts.length > 0) msg += ` ${parts.join(', ')}.`;
  }
  if (e.postFilterMessage) msg += ` ${e.postFilterMessage}.`;
  return msg;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface ScheduleOptions {
  profile: Profile;
  snapshot: Snapshot;
  lookups: ClusterLookups;
  random: Random;
  /** Pods nominated to nodes by preemption, counted where they have at least the pod's priority. */
  nominator?: PodNominator;
  /**
   * percentageOfNodesToScore (0: adaptive, 50% less 1% per 125 nodes, at
   * least 5%); stop filtering once that many feasible nodes were found, but
   * never below 100 nodes.
   */
  percentageOfNodesToScore?: number;
  /** Where filtering starts in the node list (nextStartNodeIndex); the scheduler rotates it. */
  startIndex?: number;
}

/** The status of the first filter that rejects the pod on the node (RunFilterPlugins). */
export function runFilters(ctx: CycleContext, profile: Profile, info: NodeInfo): Status | undefined {
  for (const f of profile.filters) {
    const s = f.filter(ctx, info);
    if (s) return { ...s, plugin: f.name };
  }
  return undefined;
}

/** Places `p` on a copy's node and tells the plugins (PreFilterExtensions.AddPod). */
export function addPodForFilters(ctx: CycleContext, profile: Profile, info: NodeInfo, p: PodInfo): void {
  addPod(info, p);
  for (const f of profile.filters) f.addPod?.(ctx, p, info);
}

/** Removes `p` from a copy's node and tells the plugins (PreFilterExtensions.RemovePod). */
export function removePodForFilters(ctx: CycleContext, profile: Profile, info: NodeInfo, p: PodInfo): void {
  if (removePod(info, p.pod)) for (const f of profile.filters) f.removePod?.(ctx, p, info);
}

/**
 * RunFilterPluginsWithNominatedPods: the pods nominated to this node with at
 * least the pod's priority are added to a copy of the node first (they will
 * run there); if the pod fits with them, it must also fit without them (a
 * nominated pod's anti-affinity could be what lets it in).
 */
export function filtersWithNominatedPods(ctx: CycleContext, profile: Profile, info: NodeInfo, nominator: PodNominator | undefined): Status | undefined {
  // Called for every node a pod is filtered against: nothing is allocated or computed when none is nominated there.
  const candidates = nominator?.podsForNode(nodeName(info));
  if (candidates === undefined || candidates.length === 0) return runFilters(ctx, profile, info);
  const prio = podPriority(ctx.pod);
  const self = podKey(ctx.pod);
  const nominated = candidates.filter((p) => podKey(p.pod) !== self && podPriority(p.pod) >= prio);
  if (nominated.length === 0) return runFilters(ctx, profile, info);
  const withCtx = cloneCycle(ctx);
  const withInfo = cloneNodeInfo(info);
  for (const p of nominated) addPodForFilters(withCtx, profile, withInfo, p);
  const s = runFilters(withCtx, profile, withInfo);
  if (s) return s;
  return runFilters(ctx, profile, info);
}

const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/** numFeasibleNodesToFind: how many feasible nodes are enough to stop filtering. */
export function numFeasibleNodesToFind(percentage: number, numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let pct = percentage;
  if (pct <= 0) pct = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(numAllNodes / 125));
  if (pct >= 100) return numAllNodes;
  const n = Math.trunc((numAllNodes * pct) / 100);
  return Math.max(n, MIN_FEASIBLE_NODES_TO_FIND);
}

/**
 * Filters and scores; returns the chosen node, or the FitError (its message
 * without a PostFilter part: the scheduler runs preemption and adds it).
 */
export function schedulePod(pod: Pod, opts: ScheduleOptions, podInfo: PodInfo = newPodInfo(pod)): ScheduleResult {
  const { profile, snapshot } = opts;
  const nodes = snapshot.nodes;
  if (nodes.length === 0) return { kind: 'unschedulable', message: NO_NODES_AVAILABLE, nodeStatuses: new Map() };
  const ctx: CycleContext = { pod, podInfo, snapshot, lookups: opts.lookups, state: new Map() };

  const statuses = new Map<string, Status>();
  for (const f of profile.filters) {
    const s = f.preFilter?.(ctx);
    if (s?.code === 'Error') return { kind: 'error', message: `running PreFilter plugin ${JSON.stringify(f.name)}: ${s.reasons.join(', ')}` };
    if (s) {
      for (const n of nodes) statuses.set(nodeName(n), { ...s, plugin: f.name });
      const fit: FitError = { numAllNodes: nodes.length, nodeStatuses: statuses, preFilterMessage: s.reasons.join(', ') };
      return { kind: 'unschedulable', message: fitErrorMessage(fit), nodeStatuses: statuses, fit, ctx };
    }
  }

  // The node preemption nominated is likely the only one that fits: try it first (evaluateNominatedNode).
  const nominated = pod.status?.nominatedNodeName ? snapshot.get(pod.status.nominatedNodeName) : undefined;
  if (nominated) {
    const s = filtersWithNominatedPods(ctx, profile, nominated, opts.nominator);
    if (s?.code === 'Error') return { kind: 'error', message: `running ${JSON.stringify(s.plugin)} filter plugin: ${s.reasons.join(', ')}` };
    if (!s) return { kind: 'scheduled', node: nodeName(nominated), feasibleNodes: 1, evaluatedNodes: 1, processedNodes: 0, ctx };
  }

  const toFind = numFeasibleNodesToFind(opts.percentageOfNodesToScore ?? 0, nodes.length);
  const start = (opts.startIndex ?? 0) % nodes.length;
  const feasible: NodeInfo[] = [];
  let processed = 0;
  for (; processed < nodes.length && feasible.length < toFind; processed++) {
    const n = nodes[(start + processed) % nodes.length]!;
    const s = filtersWithNominatedPods(ctx, profile, n, opts.nominator);
    if (s?.code === 'Error') return { kind: 'error', message: `running ${JSON.stringify(s.plugin)} filter plugin: ${s.reasons.join(', ')}` };
    if (s) statuses.set(nodeName(n), s);
    else feasible.push(n);
  }
  if (feasible.length === 0) {
    const fit: FitError = { numAllNodes: nodes.length, nodeStatuses: statuses };
    return { kind: 'unschedulable', message: fitErrorMessage(fit), nodeStatuses: statuses, fit, ctx };
  }
  if (feasible.length === 1) return { kind: 'scheduled', node: nodeName(feasible[0]!), feasibleNodes: 1, evaluatedNodes: processed, processedNodes: processed, ctx };

  const totals = totalScores(ctx, profile, feasible);
  const chosen = feasible[bestIndex(feasible.length, (i) => totals[i]!, opts.random)]!;
  return { kind: 'scheduled', node: nodeName(chosen), feasibleNodes: feasible.length, evaluatedNodes: processed, processedNodes: processed, ctx };
}

/**
 * The plugins' scores, refilled for each plugin (normalize rewrites them in
 * place) and reused from one cycle to the next: never handed out beyond a
 * plugin's normalize. A cycle scores hundreds of nodes; two fresh lists of
 * score objects per pod were a tenth of the scheduler's allocations.
 */
const scratch: { name: string; score: number }[] = [];

/** prioritizeNodes: the weighted sum of every score plugin's normalised scores, by index in `feasible`, with no object per node. */
function totalScores(ctx: CycleContext, profile: Profile, feasible: readonly NodeInfo[]): Float64Array {
  const n = feasible.length;
  const totals = new Float64Array(n);
  while (scratch.length < n) scratch.push({ name: '', score: 0 });
  scratch.length = n;
  for (let i = 0; i < n; i++) scratch[i]!.name = nodeName(feasible[i]!);
  for (const { plugin, weight } of profile.scores) {
    if (plugin.preScore?.(ctx, feasible) === 'skip') continue;
    for (let i = 0; i < n; i++) scratch[i]!.score = plugin.score(ctx, feasible[i]!);
    plugin.normalize?.(ctx, scratch);
    for (let i = 0; i < n; i++) totals[i] += scratch[i]!.score * weight;
  }
  return totals;
}

/** The highest score; among equals, each is equally likely (reservoir sampling, as selectHost). */
export function selectHost(scores: readonly NodeScore[], random: Random): string {
  return scores[bestIndex(scores.length, (i) => scores[i]!.score, random)]!.name;
}

/** selectHost over `count` scores read by index. */
function bestIndex(count: number, scoreAt: (i: number) => number, random: Random): number {
  let best = 0;
  let bestScore = scoreAt(0);
  let ties = 1;
  for (let i = 1; i < count; i++) {
    const score = scoreAt(i);
    if (score > bestScore) {
      best = i;
      bestScore = score;
      ties = 1;
    } else if (score === bestScore) {
      ties++;
      if (random() * ties < 1) best = i;
    }
  }
  return best;
}
