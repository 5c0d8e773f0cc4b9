/**
 * DefaultPreemption (the PostFilter plugin of the default profile): when a
 * pod fits nowhere, find the nodes where evicting pods of lower priority
 * makes it fit, pick the best one and name the victims. Pure: the scheduler
 * carries the outcome out (DisruptionTarget condition, deletion, Preempted
 * events, nominatedNodeName).
 *
 * As upstream (pkg/scheduler/framework/preemption):
 * - a pod with preemptionPolicy Never, or whose nominated node still has a
 *   lower-priority pod terminating because of an earlier preemption, does not
 *   preempt (again);
 * - only nodes whose filters failed with Unschedulable are tried (not
 *   UnschedulableAndUnresolvable);
 * - on each, every lower-priority pod is removed; if the pod then fits, the
 *   victims are reprieved one by one, most important first, those whose
 *   PodDisruptionBudget would be violated before the others, keeping each
 *   whose return still lets the pod fit;
 * - a dry run over the nodes from a random offset stops once enough
 *   candidates are found (10% of the nodes, at least 100) with one that
 *   violates no budget;
 * - the candidate chosen has the fewest budget violations, then the lowest
 *   highest victim priority, the lowest sum of priorities, the fewest
 *   victims, the latest start among its most important victims; then the
 *   first.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import { selectorFromLabelSelector } from '../api/labels.js';
import { addPodForFilters, filtersWithNominatedPods, fitErrorMessage, removePodForFilters } from './algorithm.js';
import { cloneCycle, type ClusterLookups, type CycleContext, type Snapshot, type Status } from './framework.js';
import { cloneNodeInfo, newPodInfo, nodeName, podPriority, type NodeInfo, type PodInfo } from './node-info.js';
import type { PodNominator } from './nominator.js';
import type { Profile } from './profile.js';
import type { Random } from './random.js';

export const PREEMPTION_PLUGIN = 'DefaultPreemption';

/** DefaultPreemptionArgs. */
export interface PreemptionArgs {
  minCandidateNodesPercentage: number;
  minCandidateNodesAbsolute: number;
}

export const DEFAULT_PREEMPTION_ARGS: PreemptionArgs = { minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 100 };

/** The DisruptionTarget condition's reason on a victim. */
export const PREEMPTION_BY_SCHEDULER = 'PreemptionByScheduler';

export const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_VICTIMS = 'No preemption victims found for incoming pod';

/** A node where the pod fits once the victims (most important first) are gone. */
export interface Candidate {
  readonly node: string;
  readonly victims: readonly Pod[];
  readonly numPDBViolations: number;
}

export type PreemptionResult =
  /** Preempt the candidate's victims and nominate its node. */
  | { kind: 'nominate'; candidate: Candidate }
  /**
   * No preemption. `message` is the PostFilter part of FailedScheduling
   * ("preemption: ..."); `clearNomination` when the pod's nominatedNodeName
   * must go (no candidate at all), otherwise it is kept.
   */
  | { kind: 'none'; message: string; clearNomination: boolean };

export interface PreemptionOptions {
  profile: Profile;
  snapshot: Snapshot;
  lookups: ClusterLookups;
  random: Random;
  nominator?: PodNominator;
  pdbs: readonly PodDisruptionBudget[];
  args?: PreemptionArgs;
  /** For pods without status.startTime (GetPodStartTime uses now). */
  now?: number;
  /** The failed scheduling cycle (its preFilter state); computed again over the snapshot when absent. */
  ctx?: CycleContext;
}

/** A cycle for the preemptor when the scheduling cycle's is not at hand: its preFilter state computed over the snapshot. */
function newCycle(pod: Pod, opts: PreemptionOptions): CycleContext {
  const ctx: CycleContext = { pod, podInfo: newPodInfo(pod), snapshot: opts.snapshot, lookups: opts.lookups, state: new Map() };
  for (const f of opts.profile.filters) f.preFilter?.(ctx);
  return ctx;
}

/** DisruptionTarget with reason PreemptionByScheduler, on a pod being deleted. */
function terminatingByPreemption(pod: Pod): boolean {
  if (!pod.metadata?.deletionTimestamp) return false;
  return (pod.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === PREEMPTION_BY_SCHEDULER);
}

/** PodEligibleToPreemptOthers: undefined when eligible, else why not. */
export function ineligibleReason(pod: Pod, snapshot: Snapshot, nominatedNodeStatus: Status | undefined): string | undefined {
  if (pod.spec?.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
  const nominated = pod.status?.nominatedNodeName;
  if (!nominated) return undefined;
  // The nominated node no longer suits the pod at all: try elsewhere.
  if (nominatedNodeStatus?.code === 'UnschedulableAndUnresolvable') return undefined;
  const info = snapshot.get(nominated);
  if (!info) return undefined;
  const prio = podPriority(pod);
  for (const p of info.pods.values()) {
    if (podPriority(p.pod) < prio && terminatingByPreemption(p.pod)) return 'not eligible due to a terminating pod on the nominated node.';
  }
  return undefined;
}

function startTime(pod: Pod, now: number): number {
  const t = pod.status?.startTime ? Date.parse(pod.status.startTime) : NaN;
  return Number.isNaN(t) ? now : t;
}

/** MoreImportantPod: higher priority, then started earlier. */
export function moreImportant(a: Pod, b: Pod, now: number): boolean {
  const pa = podPriority(a);
  const pb = podPriority(b);
  if (pa !== pb) return pa > pb;
  return startTime(a, now) < startTime(b, now);
}

/**
 * filterPodsWithPDBViolation: walking the pods in order, each takes one of
 * the disruptions its budgets allow (pods the budget already counts as
 * disrupted take none); a pod that takes one past zero would violate it.
 */
export function splitByPDBViolation(pods: readonly Pod[], pdbs: readonly PodDisruptionBudget[]): { violating: Pod[]; nonViolating: Pod[] } {
  const allowed = pdbs.map((b) => b.status?.disruptionsAllowed ?? 0);
  const selectors = pdbs.map((b) => {
    try {
      return selectorFromLabelSelector(b.spec?.selector);
    } catch {
      return undefined;
    }
  });
  const violating: Pod[] = [];
  const nonViolating: Pod[] = [];
  for (const pod of pods) {
    const labels = pod.metadata?.labels ?? {};
    let violated = false;
    if (Object.keys(labels).length > 0) {
      pdbs.forEach((b, i) => {
        if ((b.metadata?.namespace ?? 'default') !== (pod.metadata?.namespace ?? 'default')) return;
        const sel = selectors[i];
        if (!sel || sel.empty() || !sel.matches(labels)) return;
        if (b.status?.disruptedPods && Object.prototype.hasOwnProperty.call(b.status.disruptedPods, pod.metadata?.name ?? '')) return;
        allowed[i]!--;
        if (allowed[i]! < 0) violated = true;
      });
    }
    (violated ? violating : nonViolating).push(pod);
  }
  return { violating, nonViolating };
}

type VictimsOutcome = { victims: Pod[]; numPDBViolations: number } | { status: Status };

/**
 * SelectVictimsOnNode: the fewest victims (of lower priority) whose removal
 * lets the pod fit on this copy of the node; or why none does.
 */
export function selectVictimsOnNode(ctx: CycleContext, opts: PreemptionOptions, info: NodeInfo): VictimsOutcome {
  const { profile } = opts;
  const prio = podPriority(ctx.pod);
  const potential: PodInfo[] = [];
  for (const p of [...info.pods.values()]) {
    if (podPriority(p.pod) < prio) {
      potential.push(p);
      removePodForFilters(ctx, profile, info, p);
    }
  }
  if (potential.length === 0) return { status: { code: 'UnschedulableAndUnresolvable', reasons: [NO_VICTIMS] } };
  const fits = filtersWithNominatedPods(ctx, profile, info, opts.nominator);
  if (fits) return { status: fits };

  const now = opts.now ?? Date.now();
  const byPod = new Map(potential.map((p) => [p.pod, p]));
  const ordered = potential.map((p) => p.pod).sort((a, b) => (moreImportant(a, b, now) ? -1 : moreImportant(b, a, now) ? 1 : 0));
  const { violating, nonViolating } = splitByPDBViolation(ordered, opts.pdbs);
  const victims: Pod[] = [];
  let numPDBViolations = 0;
  const reprieve = (pod: Pod): boolean => {
    const p = byPod.get(pod)!;
    addPodForFilters(ctx, profile, info, p);
    if (!filtersWithNominatedPods(ctx, profile, info, opts.nominator)) return true;
    removePodForFilters(ctx, profile, info, p);
    victims.push(pod);
    return false;
  };
  for (const pod of violating) if (!reprieve(pod)) numPDBViolations++;
  for (const pod of nonViolating) reprieve(pod);
  return { victims, numPDBViolations };
}

function hasLowerPriorityPod(info: NodeInfo, prio: number): boolean {
  for (const p of info.pods.values()) if (podPriority(p.pod) < prio) return true;
  return false;
}

function numCandidates(numNodes: number, args: PreemptionArgs): number {
  let n = Math.trunc((numNodes * args.minCandidateNodesPercentage) / 100);
  if (n < args.minCandidateNodesAbsolute) n = args.minCandidateNodesAbsolute;
  return Math.min(n, numNodes);
}

/** DryRunPreemption over the nodes where preemption might help; also each failed node's status. */
export function findCandidates(pod: Pod, nodeStatuses: Map<string, Status>, opts: PreemptionOptions): { candidates: Candidate[]; statuses: Map<string, Status> } {
  const statuses = new Map<string, Status>();
  const potential = opts.snapshot.nodes.filter((n) => nodeStatuses.get(nodeName(n))?.code === 'Unschedulable');
  if (potential.length === 0) return { candidates: [], statuses };
  const args = opts.args ?? DEFAULT_PREEMPTION_ARGS;
  const want = numCandidates(potential.length, args);
  const offset = Math.floor(opts.random() * potential.length) % potential.length;
  const base = opts.ctx ?? newCycle(pod, opts);
  const nonViolating: Candidate[] = [];
  const violating: Candidate[] = [];
  const prio = podPriority(pod);
  for (let i = 0; i < potential.length; i++) {
    const node = potential[(offset + i) % potential.length]!;
    // No pod of lower priority: nothing to preempt (selectVictimsOnNode's answer), known without copying the node.
    if (!hasLowerPriorityPod(node, prio)) {
      statuses.set(nodeName(node), { code: 'UnschedulableAndUnresolvable', reasons: [NO_VICTIMS] });
      continue;
    }
    const info = cloneNodeInfo(node);
    const name = nodeName(info);
    const out = selectVictimsOnNode(cloneCycle(base), opts, info);
    if ('status' in out) {
      statuses.set(name, out.status);
      continue;
    }
    (out.numPDBViolations === 0 ? nonViolating : violating).push({ node: name, victims: out.victims, numPDBViolations: out.numPDBViolations });
    if (nonViolating.length > 0 && nonViolating.length + violating.length >= want) break;
  }
  return { candidates: [...nonViolating.slice(0, want), ...violating.slice(0, want)], statuses };
}

/** pickOneNodeForPreemption with the default score functions, each breaking the previous one's ties. */
export function selectCandidate(candidates: readonly Candidate[], now: number = Date.now()): Candidate | undefined {
  if (candidates.length <= 1) return candidates[0];
  const earliestStartOfMostImportant = (c: Candidate) => {
    const top = podPriority(c.victims[0]!);
    let earliest = Infinity;
    for (const v of c.victims) if (podPriority(v) === top) earliest = Math.min(earliest, startTime(v, now));
    return earliest;
  };
  const scores: Array<(c: Candidate) => number> = [
    (c) => -c.numPDBViolations,
    (c) => -podPriority(c.victims[0]!),
    (c) => -c.victims.reduce((sum, v) => sum + podPriority(v) + 2 ** 31, 0),
    (c) => -c.victims.length,
    (c) => earliestStartOfMostImportant(c),
  ];
  let left = [...candidates];
  for (const score of scores) {
    let best = -Infinity;
    let kept: Candidate[] = [];
    for (const c of left) {
      const s = score(c);
      if (s > best) {
        best = s;
        kept = [c];
      } else if (s === best) kept.push(c);
    }
    if (kept.length === 1) return kept[0];
    left = kept;
  }
  return left[0];
}

/** The whole PostFilter: eligibility, dry run, choice. */
export function preempt(pod: Pod, nodeStatuses: Map<string, Status>, opts: PreemptionOptions): PreemptionResult {
  const why = ineligibleReason(pod, opts.snapshot, nodeStatuses.get(pod.status?.nominatedNodeName ?? ''));
  if (why) return { kind: 'none', message: `preemption: ${why}`, clearNomination: false };
  const { candidates, statuses } = findCandidates(pod, nodeStatuses, opts);
  if (candidates.length === 0) {
    for (const n of opts.snapshot.nodes) {
      const name = nodeName(n);
      if (!statuses.has(name)) statuses.set(name, { code: 'UnschedulableAndUnresolvable', reasons: [NOT_HELPFUL] });
    }
    return { kind: 'none', message: 'preemption: ' + fitErrorMessage({ numAllNodes: opts.snapshot.nodes.length, nodeStatuses: statuses }), clearNomination: true };
  }
  const best = selectCandidate(candidates, opts.now);
  if (!best) return { kind: 'none', message: 'preemption: no candidate node for preemption', clearNomination: false };
  return { kind: 'nominate', candidate: best };
}

/** The lower-priority pods nominated to `node`: their nomination is cleared when the preemptor takes it. */
export function lowerPriorityNominatedPods(nominator: PodNominator | undefined, pod: Pod, node: string): Pod[] {
  if (!nominator) return [];
  const prio = podPriority(pod);
  return nominator
    .podsForNode(node)
    .map((p) => p.pod)
    .filter((p) => podPriority(p) < prio);
}
