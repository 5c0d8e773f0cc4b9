/**
 * One scheduling decision (schedulePod in schedule_one.go): filter every
 * node, score the feasible ones, pick the highest total (ties at random).
 * Pure: reads a snapshot, changes nothing.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ClusterLookups, CycleContext, NodeScore, Snapshot, Status } from './framework.js';
import { newPodInfo, nodeName, type NodeInfo, type PodInfo } from './node-info.js';
import type { Profile } from './profile.js';
import type { Random } from './random.js';

/** ErrNoNodesAvailable's message. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

export type ScheduleResult =
  /** `ctx` carries the plugins' cycle state on to reserve and preBind. */
  | { kind: 'scheduled'; node: string; feasibleNodes: number; evaluatedNodes: number; ctx: CycleContext }
  | { kind: 'unschedulable'; message: string; nodeStatuses: Map<string, Status> }
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

/**
 * The preemption outcome as DefaultPreemption words it when it finds no
 * victims (kcm does not preempt): nodes whose failure preemption cannot fix
 * are "not helpful", the rest found "no victims".
 */
export function preemptionMessage(pod: Pod, nodeStatuses: Map<string, Status>): string {
  if (pod.spec?.preemptionPolicy === 'Never') return 'preemption: not eligible due to preemptionPolicy=Never.';
  const statuses = new Map<string, Status>();
  for (const [name, s] of nodeStatuses) {
    statuses.set(name, {
      code: s.code,
      reasons: [s.code === 'UnschedulableAndUnresolvable' ? 'Preemption is not helpful for scheduling' : 'No preemption victims found for incoming pod'],
    });
  }
  return 'preemption: ' + fitErrorMessage({ numAllNodes: nodeStatuses.size, nodeStatuses: statuses });
}

export interface ScheduleOptions {
  profile: Profile;
  snapshot: Snapshot;
  lookups: ClusterLookups;
  random: Random;
}

function runFilters(ctx: CycleContext, profile: Profile, info: NodeInfo): Status | undefined {
  for (const f of profile.filters) {
    const s = f.filter(ctx, info);
    if (s) return { ...s, plugin: f.name };
  }
  return undefined;
}

/** Filters and scores; returns the chosen node or the FitError message (with preemption's part). */
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
      fit.postFilterMessage = preemptionMessage(pod, statuses);
      return { kind: 'unschedulable', message: fitErrorMessage(fit), nodeStatuses: statuses };
    }
  }

  const feasible: NodeInfo[] = [];
  for (const n of nodes) {
    const s = runFilters(ctx, profile, n);
    if (s?.code === 'Error') return { kind: 'error', message: `running ${JSON.stringify(s.plugin)} filter plugin: ${s.reasons.join(', ')}` };
    if (s) statuses.set(nodeName(n), s);
    else feasible.push(n);
  }
  if (feasible.length === 0) {
    const fit: FitError = { numAllNodes: nodes.length, nodeStatuses: statuses };
    fit.postFilterMessage = preemptionMessage(pod, statuses);
    return { kind: 'unschedulable', message: fitErrorMessage(fit), nodeStatuses: statuses };
  }
  if (feasible.length === 1) return { kind: 'scheduled', node: nodeName(feasible[0]!), feasibleNodes: 1, evaluatedNodes: nodes.length, ctx };

  const totals = prioritizeNodes(ctx, profile, feasible);
  return { kind: 'scheduled', node: selectHost(totals, opts.random), feasibleNodes: feasible.length, evaluatedNodes: nodes.length, ctx };
}

/** Weighted sum of every score plugin's normalised scores, per feasible node (in `feasible` order). */
export function prioritizeNodes(ctx: CycleContext, profile: Profile, feasible: readonly NodeInfo[]): NodeScore[] {
  const totals: NodeScore[] = feasible.map((n) => ({ name: nodeName(n), score: 0 }));
  for (const { plugin, weight } of profile.scores) {
    if (plugin.preScore?.(ctx, feasible) === 'skip') continue;
    const scores: NodeScore[] = feasible.map((n) => ({ name: nodeName(n), score: plugin.score(ctx, n) }));
    plugin.normalize?.(ctx, scores);
    scores.forEach((s, i) => (totals[i]!.score += s.score * weight));
  }
  return totals;
}

/** The highest score; among equals, each is equally likely (reservoir sampling, as selectHost). */
export function selectHost(scores: readonly NodeScore[], random: Random): string {
  let best = scores[0]!;
  let ties = 1;
  for (let i = 1; i < scores.length; i++) {
    const s = scores[i]!;
    if (s.score > best.score) {
      best = s;
      ties = 1;
    } else if (s.score === best.score) {
      ties++;
      if (random() * ties < 1) best = s;
    }
  }
  return best.name;
}
