/**
 * PodTopologySpread: DoNotSchedule constraints filter nodes whose domain
 * would exceed maxSkew over the least-loaded eligible domain; ScheduleAnyway
 * constraints (or, when the pod has none, the default system constraints:
 * zone maxSkew 5 and hostname maxSkew 3 over the pod's Services and
 * controllers) score nodes, fewer matching pods being better.
 */
import type { Node, Pod, TopologySpreadConstraint } from 'kubernetes-types/core/v1.js';
import { matchesNothing, nothing, selectorFromLabelSelector, type LabelSelectorValue, type Selector } from '../../api/labels.js';
import { MAX_NODE_SCORE, unresolvable, unschedulable, type CycleContext, type FilterPlugin, type NodeChangeLog, type ScorePlugin } from '../framework.js';
import { countsTowards, type MatchCount, type NodeInfo, type PodInfo } from '../node-info.js';
import { podHasNodeSelectorOrAffinity, podMatchesNodeSelectorAndAffinity } from '../node-selector.js';
import { doNotScheduleTaint, findUntoleratedTaint } from '../../api/taints.js';

export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + ' (missing required label)';

const HOSTNAME = 'kubernetes.io/hostname';

/** A constraint with its selector parsed and policies defaulted. */
export interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: Selector;
  minDomains: number;
  /** Honor (default): only nodes matching the pod's nodeSelector/affinity count. */
  nodeAffinityPolicy: 'Honor' | 'Ignore';
  /** Ignore (default): tainted nodes count too. */
  nodeTaintsPolicy: 'Honor' | 'Ignore';
}

/** The default system constraints (ScheduleAnyway) of the default profile. */
export const SYSTEM_DEFAULT_CONSTRAINTS = [
  { topologyKey: 'topology.kubernetes.io/zone', maxSkew: 5 },
  { topologyKey: HOSTNAME, maxSkew: 3 },
] as const;

function buildSelector(pod: Pod, c: TopologySpreadConstraint): LabelSelectorValue {
  let sel: LabelSelectorValue;
  try {
    sel = selectorFromLabelSelector(c.labelSelector);
  } catch {
    return nothing();
  }
  const labels = pod.metadata?.labels ?? {};
  const extra = [];
  // matchLabelKeys: the pod's own values of these keys narrow the selector.
  for (const k of c.matchLabelKeys ?? []) if (k in labels) extra.push({ key: k, operator: 'in' as const, values: [labels[k]!] });
  return extra.length > 0 ? sel.add(...extra) : sel;
}

export function podConstraints(pod: Pod, action: 'DoNotSchedule' | 'ScheduleAnyway'): Constraint[] {
  return (pod.spec?.topologySpreadConstraints ?? [])
    .filter((c) => c.whenUnsatisfiable === action)
    .map((c) => ({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector: buildSelector(pod, c),
      minDomains: c.minDomains ?? 1,
      nodeAffinityPolicy: c.nodeAffinityPolicy === 'Ignore' ? 'Ignore' : 'Honor',
      nodeTaintsPolicy: c.nodeTaintsPolicy === 'Honor' ? 'Honor' : 'Ignore',
    }));
}

/** The node's value of a label, undefined when it has none. */
function labelValue(node: Node, key: string): string | undefined {
  const labels = node.metadata?.labels;
  return labels !== undefined && Object.prototype.hasOwnProperty.call(labels, key) ? labels[key] : undefined;
}

function hasLabel(node: Node, key: string): boolean {
  return labelValue(node, key) !== undefined;
}

function nodeHasAllKeys(node: Node, cs: readonly Constraint[]): boolean {
  return cs.every((c) => hasLabel(node, c.topologyKey));
}

function matchesInclusionPolicies(pod: Pod, node: Node, c: Constraint): boolean {
  if (c.nodeAffinityPolicy === 'Honor' && !podMatchesNodeSelectorAndAffinity(pod, node)) return false;
  if (c.nodeTaintsPolicy === 'Honor' && findUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations, doNotScheduleTaint)) return false;
  return true;
}

/** The memo key of a selector: its canonical form, distinct for nothing(), which selects no pod. */
const selectorKeys = new WeakMap<Selector, string>();
function selectorKey(selector: Selector): string {
  let k = selectorKeys.get(selector);
  if (k === undefined) selectorKeys.set(selector, (k = matchesNothing(selector) ? '\u0001nothing' : selector.toString()));
  return k;
}

/** The key countMatchingPods memoizes a (selector, namespace) count under; computed once per cycle by callers that count on many nodes. */
export function matchMemoKey(selector: Selector, namespace: string): string {
  return `${namespace}\u0000${selectorKey(selector)}`;
}

/** Selectors counted per node at most; past it a node's counts start again (they are kept current on every pod change). */
const MAX_COUNTS_PER_NODE = 64;

/**
 * Pods on the node in the pod's namespace matching the selector, ignoring terminating ones. Counted once
 * per node and selector, then kept current by addPod and removePod (a ReplicaSet's pods share one
 * selector: each cycle reads the count of every node instead of walking their pods).
 */
export function countMatchingPods(info: NodeInfo, selector: Selector, namespace: string, key = matchMemoKey(selector, namespace)): number {
  const known = info.matchCounts?.get(key);
  if (known !== undefined) return known.n;
  const m: MatchCount = { selector, namespace, n: 0 };
  for (const p of info.pods.values()) if (countsTowards(p.pod, m)) m.n++;
  if (info.matchCounts === undefined || info.matchCounts.size >= MAX_COUNTS_PER_NODE) info.matchCounts = new Map();
  info.matchCounts.set(key, m);
  return m.n;
}

/** Matching pods per domain of one topology key over a node list, and what each node adds. */
interface DomainSums {
  seq: number;
  sums: Map<string, number>;
  perNode: Map<NodeInfo, { value: string; n: number }>;
}

/** The most sums a node list keeps (selectors times topology keys); past it they start again. */
const MAX_DOMAIN_SUMS = 256;

/**
 * Matching pods (countMatchingPods) per value of `c.topologyKey` over every node of `nodes`, for a
 * constraint no node is left out of by policy. Made once per node list, selector and key, then
 * brought up to date from the nodes changed since (`log`) instead of walking every node per pod.
 */
function domainSums(nodes: readonly NodeInfo[], log: NodeChangeLog, c: Constraint, ns: string, memoKey: string): Map<string, number> {
  const key = `${c.topologyKey}\u0000${memoKey}`;
  let d = log.memos.get(key) as DomainSums | undefined;
  const changed = d ? log.since(d.seq) : undefined;
  const count = (d: DomainSums, info: NodeInfo) => {
    const was = d.perNode.get(info);
    if (was) d.sums.set(was.value, d.sums.get(was.value)! - was.n);
    const value = info.node ? labelValue(info.node, c.topologyKey) : undefined;
    if (value === undefined) {
      d.perNode.delete(info);
      return;
    }
    const n = countMatchingPods(info, c.selector, ns, memoKey);
    d.perNode.set(info, { value, n });
    d.sums.set(value, (d.sums.get(value) ?? 0) + n);
  };
  if (d && changed) {
    for (const info of new Set(changed)) count(d, info);
  } else {
    if (log.memos.size >= MAX_DOMAIN_SUMS) log.memos.clear();
    d = { seq: 0, sums: new Map(), perNode: new Map() };
    for (const info of nodes) count(d, info);
    log.memos.set(key, d);
  }
  d.seq = log.seq;
  return d.sums;
}

function pairKey(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

// --- filter ---

interface FilterState {
  constraints: Constraint[];
  /** matching pods per topology pair */
  pairCounts: Map<string, number>;
  /** per constraint index: number of domains and the minimum count among them */
  domains: Array<{ count: number; min: number }>;
  /** per constraint index: the eligible domains (topology pairs) */
  domainPairs: Set<string>[];
}

const FILTER_KEY = 'PodTopologySpread/filter';

function computeFilterState(ctx: CycleContext): FilterState {
  const constraints = podConstraints(ctx.pod, 'DoNotSchedule');
  const pairCounts = new Map<string, number>();
  // Most pods have no hard constraint: nothing to count (upstream returns an empty state too).
  if (constraints.length === 0) return { constraints, pairCounts, domains: [], domainPairs: [] };
  const ns = ctx.pod.metadata?.namespace ?? 'default';
  const domainsPerConstraint = constraints.map(() => new Set<string>());
  for (const info of ctx.snapshot.nodes) {
    const node = info.node;
    if (!node || !nodeHasAllKeys(node, constraints)) continue;
    for (let i = 0; i < constraints.length; i++) {
      const c = constraints[i]!;
      if (!matchesInclusionPolicies(ctx.pod, node, c)) continue;
      const p = pairKey(c.topologyKey, node.metadata!.labels![c.topologyKey]!);
      domainsPerConstraint[i]!.add(p);
      pairCounts.set(p, (pairCounts.get(p) ?? 0) + countMatchingPods(info, c.selector, ns));
    }
  }
  return { constraints, pairCounts, domains: domainsOf(domainsPerConstraint, pairCounts), domainPairs: domainsPerConstraint };
}

function domainsOf(domainPairs: Set<string>[], pairCounts: Map<string, number>): Array<{ count: number; min: number }> {
  return domainPairs.map((set) => {
    let min = Number.MAX_SAFE_INTEGER;
    for (const p of set) min = Math.min(min, pairCounts.get(p) ?? 0);
    return { count: set.size, min };
  });
}

/**
 * The filter state with `p` added to (`by` 1) or removed from (`by` -1)
 * `node` (preFilterState.updateWithPod): counted when in the pod's namespace
 * on a node with every topology key, per constraint whose selector and
 * inclusion policies it meets. A new state (the old one may be shared).
 */
function updatedWithPod(ctx: CycleContext, s: FilterState, p: PodInfo, node: Node | undefined, by: 1 | -1): FilterState {
  if (!node || s.constraints.length === 0) return s;
  if ((p.pod.metadata?.namespace ?? 'default') !== (ctx.pod.metadata?.namespace ?? 'default')) return s;
  if (!nodeHasAllKeys(node, s.constraints) || p.pod.metadata?.deletionTimestamp) return s; // terminating pods are not counted
  const pairCounts = new Map(s.pairCounts);
  const labels = p.pod.metadata?.labels ?? {};
  s.constraints.forEach((c, i) => {
    if (!c.selector.matches(labels) || !matchesInclusionPolicies(ctx.pod, node, c)) return;
    const k = pairKey(c.topologyKey, node.metadata!.labels![c.topologyKey]!);
    if (!s.domainPairs[i]!.has(k)) return;
    pairCounts.set(k, (pairCounts.get(k) ?? 0) + by);
  });
  return { ...s, pairCounts, domains: domainsOf(s.domainPairs, pairCounts) };
}

function stateOf(ctx: CycleContext): FilterState {
  let s = ctx.state.get(FILTER_KEY) as FilterState | undefined;
  if (!s) ctx.state.set(FILTER_KEY, (s = computeFilterState(ctx)));
  return s;
}

export const podTopologySpreadFilter: FilterPlugin = {
  name: 'PodTopologySpread',
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
    if (s.constraints.length === 0) return undefined;
    const node = info.node;
    if (!node) return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
    const podLabels = ctx.pod.metadata?.labels ?? {};
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      if (!hasLabel(node, c.topologyKey)) return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
      const self = c.selector.matches(podLabels) ? 1 : 0;
      const d = s.domains[i]!;
      // With fewer eligible domains than minDomains, the global minimum counts as 0.
      const min = d.count < c.minDomains ? 0 : d.min;
      const matched = s.pairCounts.get(pairKey(c.topologyKey, node.metadata!.labels![c.topologyKey]!)) ?? 0;
      if (matched + self - min > c.maxSkew) return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
    }
    return undefined;
  },
};

// --- score ---

interface ScoreState {
  constraints: Constraint[];
  ignored: Set<string>;
  /** Per constraint (by index), matching pods per domain (the topology label's value); none for hostname. */
  domainCounts: Map<string, number>[];
  weights: number[];
  /** Per constraint, its countMatchingPods memo key. */
  memoKeys: string[];
}

const SCORE_KEY = 'PodTopologySpread/score';

function defaultConstraints(ctx: CycleContext): Constraint[] {
  const selectors = ctx.lookups.ownerSelectors(ctx.pod);
  if (selectors.length === 0) return [];
  const selector: Selector = {
    matches: (labels) => selectors.every((s) => s.matches(labels)),
    empty: () => false,
    toString: () => selectors.map((s) => s.toString()).join(','),
  };
  return SYSTEM_DEFAULT_CONSTRAINTS.map((c) => ({
    maxSkew: c.maxSkew,
    topologyKey: c.topologyKey,
    selector,
    minDomains: 1,
    nodeAffinityPolicy: 'Honor' as const,
    nodeTaintsPolicy: 'Ignore' as const,
  }));
}

export const podTopologySpreadScore: ScorePlugin = {
  name: 'PodTopologySpread',
  preScore(ctx, feasible) {
    const own = (ctx.pod.spec?.topologySpreadConstraints ?? []).length > 0;
    const constraints = own ? podConstraints(ctx.pod, 'ScheduleAnyway') : defaultConstraints(ctx);
    if (constraints.length === 0) return 'skip';
    // With the system defaults, nodes lacking a zone label are still scored.
    const requireAll = own;
    const ignored = new Set<string>();
    const domainCounts = constraints.map(() => new Map<string, number>());
    for (const info of feasible) {
      const node = info.node!;
      if (requireAll && !nodeHasAllKeys(node, constraints)) {
        ignored.add(node.metadata?.name ?? '');
        continue;
      }
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        const value = c.topologyKey === HOSTNAME ? undefined : labelValue(node, c.topologyKey);
        if (value !== undefined && !domainCounts[i]!.has(value)) domainCounts[i]!.set(value, 0);
      }
    }
    const weights = constraints.map((c, i) => Math.log((c.topologyKey === HOSTNAME ? feasible.length - ignored.size : domainCounts[i]!.size) + 2));
    const ns = ctx.pod.metadata?.namespace ?? 'default';
    const memoKeys = constraints.map((c) => matchMemoKey(c.selector, ns));
    // The pods of every node in a domain with a feasible node count (upstream walks all nodes too): per node,
    // a memoized count, and the inclusion policies only where the pod or the constraint makes them matter.
    const affinityMatters = podHasNodeSelectorOrAffinity(ctx.pod);
    constraints.forEach((c, i) => {
      if (c.topologyKey === HOSTNAME) return;
      const counts = domainCounts[i]!;
      if (counts.size === 0) return; // no feasible node has the key (nodes without zones): nothing to count
      const checkAffinity = c.nodeAffinityPolicy === 'Honor' && affinityMatters;
      const log = ctx.snapshot.changes;
      if (log && !requireAll && !checkAffinity && c.nodeTaintsPolicy !== 'Honor') {
        // Every node counts (no policy or missing key excludes one): the domains' sums kept over the node list.
        const sums = domainSums(ctx.snapshot.nodes, log, c, ns, memoKeys[i]!);
        for (const value of counts.keys()) counts.set(value, sums.get(value) ?? 0);
        return;
      }
      for (const info of ctx.snapshot.nodes) {
        const node = info.node;
        if (!node || (requireAll && !nodeHasAllKeys(node, constraints))) continue;
        const value = labelValue(node, c.topologyKey);
        if (value === undefined) continue;
        const cur = counts.get(value);
        if (cur === undefined) continue; // a domain with no feasible node does not matter
        if (checkAffinity && !podMatchesNodeSelectorAndAffinity(ctx.pod, node)) continue;
        if (c.nodeTaintsPolicy === 'Honor' && findUntoleratedTaint(node.spec?.taints, ctx.pod.spec?.tolerations, doNotScheduleTaint)) continue;
        counts.set(value, cur + countMatchingPods(info, c.selector, ns, memoKeys[i]));
      }
    });
    const state: ScoreState = { constraints, ignored, domainCounts, weights, memoKeys };
    ctx.state.set(SCORE_KEY, state);
    return undefined;
  },
  score(ctx, info) {
    const s = ctx.state.get(SCORE_KEY) as ScoreState | undefined;
    const node = info.node;
    if (!s || !node || s.ignored.has(node.metadata?.name ?? '')) return 0;
    const ns = ctx.pod.metadata?.namespace ?? 'default';
    let score = 0;
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const value = labelValue(node, c.topologyKey);
      if (value === undefined) continue;
      const cnt = c.topologyKey === HOSTNAME ? countMatchingPods(info, c.selector, ns, s.memoKeys[i]) : (s.domainCounts[i]!.get(value) ?? 0);
      score += cnt * s.weights[i]! + (c.maxSkew - 1);
    }
    return Math.round(score);
  },
  normalize(ctx, scores) {
    const s = ctx.state.get(SCORE_KEY) as ScoreState | undefined;
    if (!s) return;
    let min = Number.MAX_SAFE_INTEGER;
    let max = 0;
    for (const x of scores) {
      if (s.ignored.has(x.name)) continue;
      min = Math.min(min, x.score);
      max = Math.max(max, x.score);
    }
    for (const x of scores) {
      if (s.ignored.has(x.name)) x.score = 0;
      else if (max === 0) x.score = MAX_NODE_SCORE;
      else x.score = Math.trunc((MAX_NODE_SCORE * (max + min - x.score)) / max);
    }
  },
};
