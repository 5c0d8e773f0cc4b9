/**
 * NodeResourcesFit: the pod's requests must fit the node's allocatable minus
 * what the node's pods (bound and assumed) already request, and the node must
 * allow one more pod. The score (LeastAllocated, cpu and memory weight 1)
 * favours nodes with the most room left after placing the pod.
 */
import { MAX_NODE_SCORE, unschedulable, type FilterPlugin, type ScorePlugin } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import { resourceAmount, type Resource } from '../resources.js';

export interface InsufficientResource {
  resource: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

/** Nothing short: one shared list, so that the filter's common case allocates nothing. */
const NONE: readonly InsufficientResource[] = Object.freeze([]);

/** The shortage of `name` on `node` for `want`, if any (no request, no shortage). */
function shortage(node: NodeInfo, name: string, want: number): InsufficientResource | undefined {
  if (want <= 0) return undefined;
  const cap = resourceAmount(node.allocatable, name);
  const used = resourceAmount(node.requested, name);
  return want > cap - used ? { resource: name, reason: `Insufficient ${name}`, requested: want, used, capacity: cap } : undefined;
}

/** `out` with `s` added, made at the first shortage. */
function appended(out: InsufficientResource[] | undefined, s: InsufficientResource | undefined): InsufficientResource[] | undefined {
  if (s) (out ??= []).push(s);
  return out;
}

/** fitsRequest: every shortage of `node` for a pod requesting `req`, in upstream's order. */
export function insufficientResources(req: Resource, node: NodeInfo): readonly InsufficientResource[] {
  let out: InsufficientResource[] | undefined;
  if (node.pods.size + 1 > node.allowedPods) out = [{ resource: 'pods', reason: 'Too many pods', requested: 1, used: node.pods.size, capacity: node.allowedPods }];
  out = appended(out, shortage(node, 'cpu', req.milliCPU));
  out = appended(out, shortage(node, 'memory', req.memory));
  out = appended(out, shortage(node, 'ephemeral-storage', req.ephemeralStorage));
  if (req.scalar.size > 0) for (const [name, v] of [...req.scalar.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out = appended(out, shortage(node, name, v));
  return out ?? NONE;
}

export const nodeResourcesFitFilter: FilterPlugin = {
  name: 'NodeResourcesFit',
  filter(ctx, info) {
    const missing = insufficientResources(ctx.podInfo.requests, info);
    return missing.length === 0 ? undefined : unschedulable(...missing.map((m) => m.reason));
  },
};

/** The resources the resource scorers weigh, as in the default profile. */
export const SCORED_RESOURCES: ReadonlyArray<{ name: string; weight: number }> = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

/** leastRequestedScore: (capacity - requested) * 100 / capacity, 0 when over capacity. */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** mostRequestedScore: requested * 100 / capacity (requests over capacity count as full). */
export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.trunc((Math.min(requested, capacity) * MAX_NODE_SCORE) / capacity);
}

/** NodeResourcesFitArgs.scoringStrategy (RequestedToCapacityRatio is not implemented). */
export interface ScoringStrategy {
  type: 'LeastAllocated' | 'MostAllocated';
  resources: ReadonlyArray<{ name: string; weight: number }>;
}

/**
 * The NodeResourcesFit score: LeastAllocated (the default) prefers room,
 * MostAllocated packs. Missing cpu/memory requests count as the defaults
 * (100m, 200Mi), so best-effort pods still spread.
 */
export function newNodeResourcesFitScore(strategy: ScoringStrategy = { type: 'LeastAllocated', resources: SCORED_RESOURCES }): ScorePlugin {
  const scorer = strategy.type === 'MostAllocated' ? mostRequestedScore : leastRequestedScore;
  return {
    name: 'NodeResourcesFit',
    score(ctx, info) {
      let total = 0;
      let weights = 0;
      for (const r of strategy.resources) {
        const alloc = resourceAmount(info.allocatable, r.name);
        if (alloc === 0) continue;
        const req = resourceAmount(info.nonZeroRequested, r.name) + resourceAmount(ctx.podInfo.nonZeroRequests, r.name);
        total += scorer(req, alloc) * r.weight;
        weights += r.weight;
      }
      return weights === 0 ? 0 : Math.trunc(total / weights);
    },
  };
}

export const nodeResourcesFitScore: ScorePlugin = newNodeResourcesFitScore();
