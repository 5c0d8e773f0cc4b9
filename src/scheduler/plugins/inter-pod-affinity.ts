/**
 * InterPodAffinity: required pod affinity / anti-affinity of the incoming
 * pod, the required anti-affinity of pods already placed, and a score from
 * preferred terms in both directions (plus existing pods' required affinity
 * at hardPodAffinityWeight 1).
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import type { Labels } from '../../api/labels.js';
import { matchesAllTerms, termMatches, type AffinityTerm, type WeightedAffinityTerm } from '../affinity-terms.js';
import { MAX_NODE_SCORE, unresolvable, unschedulable, type CycleContext, type FilterPlugin, type ScorePlugin } from '../framework.js';
import type { NodeInfo, PodInfo } from '../node-info.js';

export const ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";
export const ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";

/** Default InterPodAffinityArgs.hardPodAffinityWeight. */
export const HARD_POD_AFFINITY_WEIGHT = 1;

/** Counts per topology pair `key\0value`. */
type PairCounts = Map<string, number>;

function pair(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

function bump(m: PairCounts, node: Node | undefined, key: string, by: number): void {
  const labels = node?.metadata?.labels;
  if (!labels || !Object.prototype.hasOwnProperty.call(labels, key)) return;
  const p = pair(key, labels[key]!);
  m.set(p, (m.get(p) ?? 0) + by);
}

interface FilterState {
  existingAntiAffinityCounts: PairCounts;
  affinityCounts: PairCounts;
  antiAffinityCounts: PairCounts;
  nsLabels: Labels | undefined;
}

const FILTER_KEY = 'InterPodAffinity/filter';

function nsLabelsOf(ctx: CycleContext, pod: Pod): Labels | undefined {
  return ctx.lookups.namespaceLabels(pod.metadata?.namespace ?? 'default');
}

function computeFilterState(ctx: CycleContext): FilterState {
  const pod = ctx.pod;
  const nsLabels = nsLabelsOf(ctx, pod);
  const existingAntiAffinityCounts: PairCounts = new Map();
  // Existing pods whose required anti-affinity selects the incoming pod.
  for (const info of ctx.snapshot.havePodsWithRequiredAntiAffinity) {
    for (const p of info.pods.values()) {
      for (const t of p.requiredAntiAffinityTerms) {
        if (termMatches(t, pod, nsLabels)) bump(existingAntiAffinityCounts, info.node, t.topologyKey, 1);
      }
    }
  }
  const affinityCounts: PairCounts = new Map();
  const antiAffinityCounts: PairCounts = new Map();
  const aff = ctx.podInfo.requiredAffinityTerms;
  const anti = ctx.podInfo.requiredAntiAffinityTerms;
  if (aff.length > 0 || anti.length > 0) {
    for (const info of ctx.snapshot.nodes) {
      for (const p of info.pods.values()) {
        const podNs = nsLabelsOf(ctx, p.pod);
        // An existing pod counts for affinity only when it matches every term.
        if (matchesAllTerms(aff, p.pod, podNs)) for (const t of aff) bump(affinityCounts, info.node, t.topologyKey, 1);
        for (const t of anti) if (termMatches(t, p.pod, podNs)) bump(antiAffinityCounts, info.node, t.topologyKey, 1);
      }
    }
  }
  return { existingAntiAffinityCounts, affinityCounts, antiAffinityCounts, nsLabels };
}

function satisfiesAffinity(ctx: CycleContext, s: FilterState, node: Node): boolean {
  const terms = ctx.podInfo.requiredAffinityTerms;
  const labels = node.metadata?.labels ?? {};
  let podsExist = true;
  for (const t of terms) {
    if (!Object.prototype.hasOwnProperty.call(labels, t.topologyKey)) return false; // every topology label must exist
    if ((s.affinityCounts.get(pair(t.topologyKey, labels[t.topologyKey]!)) ?? 0) <= 0) podsExist = false;
  }
  if (podsExist) return true;
  // The first pod of a group with affinity to itself: allowed when no pod in
  // the cluster matches yet and the pod matches its own terms.
  return s.affinityCounts.size === 0 && matchesAllTerms(terms, ctx.pod, s.nsLabels);
}

function satisfiesAntiAffinity(ctx: CycleContext, s: FilterState, node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const t of ctx.podInfo.requiredAntiAffinityTerms) {
    if (!Object.prototype.hasOwnProperty.call(labels, t.topologyKey)) continue;
    if ((s.antiAffinityCounts.get(pair(t.topologyKey, labels[t.topologyKey]!)) ?? 0) > 0) return false;
  }
  return true;
}

function satisfiesExistingAntiAffinity(s: FilterState, node: Node): boolean {
  if (s.existingAntiAffinityCounts.size === 0) return true;
  for (const [k, v] of Object.entries(node.metadata?.labels ?? {})) {
    if ((s.existingAntiAffinityCounts.get(pair(k, v)) ?? 0) > 0) return false;
  }
  return true;
}

/**
 * The filter state with `p` added to (`by` 1) or removed from (`by` -1)
 * `node` (preFilterState.updateWithPod). A new state: the old one may be
 * shared with other copies of the cycle. Pairs that drop to zero are removed.
 */
function updatedWithPod(ctx: CycleContext, s: FilterState, p: PodInfo, node: Node | undefined, by: 1 | -1): FilterState {
  const labels = node?.metadata?.labels;
  if (!labels) return s;
  const next: FilterState = {
    existingAntiAffinityCounts: new Map(s.existingAntiAffinityCounts),
    affinityCounts: new Map(s.affinityCounts),
    antiAffinityCounts: new Map(s.antiAffinityCounts),
    nsLabels: s.nsLabels,
  };
  const change = (m: PairCounts, key: string) => {
    if (!Object.prototype.hasOwnProperty.call(labels, key)) return;
    const k = pair(key, labels[key]!);
    const v = (m.get(k) ?? 0) + by;
    if (v === 0) m.delete(k);
    else m.set(k, v);
  };
  for (const t of p.requiredAntiAffinityTerms) if (termMatches(t, ctx.pod, s.nsLabels)) change(next.existingAntiAffinityCounts, t.topologyKey);
  const podNs = nsLabelsOf(ctx, p.pod);
  const aff = ctx.podInfo.requiredAffinityTerms;
  if (aff.length > 0 && matchesAllTerms(aff, p.pod, podNs)) for (const t of aff) change(next.affinityCounts, t.topologyKey);
  for (const t of ctx.podInfo.requiredAntiAffinityTerms) if (termMatches(t, p.pod, podNs)) change(next.antiAffinityCounts, t.topologyKey);
  return next;
}

function stateOf(ctx: CycleContext): FilterState {
  let s = ctx.state.get(FILTER_KEY) as FilterState | undefined;
  if (!s) ctx.state.set(FILTER_KEY, (s = computeFilterState(ctx)));
  return s;
}

export const interPodAffinityFilter: FilterPlugin = {
  name: 'InterPodAffinity',
  preFilter(ctx) {
    ctx.state.set(FILTER_KEY, computeFilterState(ctx));
    return undefined;
  },
  addPod(ctx, p, info) {
    ctx.state.set(FILTER_KEY, updatedWithPod(ctx, stateOf(ctx), p, info.node, 1));
  },
  removePod(ctx, p, info) {
    ctx.state.set(FILTER_KEY, updatedWithPod(ctx, stateOf(ctx), p, info.node, -1));
  },
  filter(ctx, info) {
    const s = (ctx.state.get(FILTER_KEY) as FilterState | undefined) ?? computeFilterState(ctx);
    if (!info.node) return unresolvable(ERR_REASON_AFFINITY);
    if (!satisfiesAffinity(ctx, s, info.node)) return unresolvable(ERR_REASON_AFFINITY);
    if (!satisfiesAntiAffinity(ctx, s, info.node)) return unschedulable(ERR_REASON_ANTI_AFFINITY);
    if (!satisfiesExistingAntiAffinity(s, info.node)) return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY);
    return undefined;
  },
};

// --- scoring ---

/** topologyKey -> topologyValue -> score */
type TopologyScore = Map<string, Map<string, number>>;

function addScore(m: TopologyScore, term: AffinityTerm, weight: number, node: Node | undefined): void {
  const labels = node?.metadata?.labels;
  if (!labels || !Object.prototype.hasOwnProperty.call(labels, term.topologyKey)) return;
  let byValue = m.get(term.topologyKey);
  if (!byValue) m.set(term.topologyKey, (byValue = new Map()));
  const v = labels[term.topologyKey]!;
  byValue.set(v, (byValue.get(v) ?? 0) + weight);
}

function processTerms(m: TopologyScore, terms: readonly WeightedAffinityTerm[], pod: Pod, nsLabels: Labels | undefined, node: Node | undefined, mult: number) {
  for (const t of terms) if (termMatches(t, pod, nsLabels)) addScore(m, t, t.weight * mult, node);
}

const SCORE_KEY = 'InterPodAffinity/score';

export const interPodAffinityScore: ScorePlugin = {
  name: 'InterPodAffinity',
  preScore(ctx) {
    const pi = ctx.podInfo;
    const hasPreferred = pi.preferredAffinityTerms.length > 0 || pi.preferredAntiAffinityTerms.length > 0;
    const candidates = hasPreferred ? ctx.snapshot.nodes : ctx.snapshot.havePodsWithAffinity;
    if (candidates.length === 0) return 'skip';
    const nsLabels = nsLabelsOf(ctx, ctx.pod);
    const scores: TopologyScore = new Map();
    for (const info of candidates) {
      const node = info.node;
      if (!node || Object.keys(node.metadata?.labels ?? {}).length === 0) continue;
      for (const existing of info.pods.values()) {
        // Incoming pod's preferred terms against the existing pod (namespaces already resolved).
        const exNs = nsLabelsOf(ctx, existing.pod);
        processTerms(scores, pi.preferredAffinityTerms, existing.pod, exNs, node, 1);
        processTerms(scores, pi.preferredAntiAffinityTerms, existing.pod, exNs, node, -1);
        // Existing pod's terms against the incoming pod.
        for (const t of existing.requiredAffinityTerms) {
          if (termMatches(t, ctx.pod, nsLabels)) addScore(scores, t, HARD_POD_AFFINITY_WEIGHT, node);
        }
        processTerms(scores, existing.preferredAffinityTerms, ctx.pod, nsLabels, node, 1);
        processTerms(scores, existing.preferredAntiAffinityTerms, ctx.pod, nsLabels, node, -1);
      }
    }
    ctx.state.set(SCORE_KEY, scores);
    return undefined;
  },
  score(ctx, info: NodeInfo) {
    const scores = ctx.state.get(SCORE_KEY) as TopologyScore | undefined;
    if (!scores) return 0;
    let total = 0;
    for (const [k, v] of Object.entries(info.node?.metadata?.labels ?? {})) total += scores.get(k)?.get(v) ?? 0;
    return total;
  },
  normalize(_ctx, scores) {
    if (scores.length === 0) return;
    let min = Infinity;
    let max = -Infinity;
    for (const s of scores) {
      min = Math.min(min, s.score);
      max = Math.max(max, s.score);
    }
    const diff = max - min;
    for (const s of scores) s.score = diff > 0 ? Math.trunc((MAX_NODE_SCORE * (s.score - min)) / diff) : 0;
  },
};
