/**
 * Pod orderings of pkg/controller/controller_utils.go. Sorting with these puts
 * the pods to delete first (ActivePods, ActivePodsWithRanks) or the best pod
 * to read logs from first (ByLogging).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parseTime } from '../util/clock/clock.js';
import { isPodActive, isPodReady, maxContainerRestarts, podReadyTime } from './pod-util.js';

/** Annotation whose integer value orders scale-down: lower cost is deleted first. */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * The pod-deletion-cost of a pod: 0 when unset or invalid (a leading `+`,
 * leading zeros, non-digits or out of int32 range are invalid).
 */
export function podDeletionCost(pod: Pod): number {
  const value = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
  if (value === undefined) return 0;
  // Go: the first character is '-', or the value is "0", or it starts with 1-9; then ParseInt.
  if (!/^(-[0-9]+|0|[1-9][0-9]*)$/.test(value)) return 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX) return 0;
  return n === 0 ? 0 : n;
}

/** Pending < Unknown < Running; other phases count as Pending (Go's zero value). */
function phaseOrdinal(pod: Pod): number {
  switch (pod.status?.phase) {
    case 'Unknown':
      return 1;
    case 'Running':
      return 2;
    default:
      return 0;
  }
}

/** t1 after t2, where a missing time counts as after any time. */
function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

/** floor(log2(age in ns)) of t1 minus that of t2; an age <= 0 ranks -1. */
export function logarithmicRankDiff(t1: number, t2: number, now: number): number {
  const rank = (t: number) => {
    const ns = (now - t) * 1e6;
    return ns > 0 ? Math.floor(Math.log2(ns)) : -1;
  };
  return rank(t1) - rank(t2);
}

function creationTime(pod: Pod): number | undefined {
  return parseTime(pod.metadata?.creationTimestamp);
}

export interface RankingOptions {
  /** Feature LogarithmicScaleDown (on by default upstream): compare ages in power-of-two buckets, ties by UID. */
  logarithmicScaleDown?: boolean;
  /** Feature PodDeletionCost (on by default upstream). */
  podDeletionCost?: boolean;
}

/** A pod with its rank: the number of related active pods on its node. */
export interface RankedPod<P extends Pod = Pod> {
  pod: P;
  rank: number;
}

/**
 * ActivePodsWithRanks.Less: true when `a` should be deleted before `b`.
 *  1. unassigned < assigned
 *  2. Pending < Unknown < Running
 *  3. not ready < ready
 *  4. lower pod-deletion-cost < higher
 *  5. higher rank (more pods doubled up on the node) < lower
 *  6. both ready: ready more recently < ready longer (log buckets by default)
 *  7. more container restarts < fewer
 *  8. newer creation < older (log buckets by default), ties by UID
 * `now` is epoch ms (the ordering's reference time for log buckets).
 */
export function activePodsWithRanksLess(a: RankedPod, b: RankedPod, now: number, opts: RankingOptions = {}): boolean {
  const logScale = opts.logarithmicScaleDown ?? true;
  const useCost = opts.podDeletionCost ?? true;
  const pa = a.pod;
  const pb = b.pod;
  const na = pa.spec?.nodeName ?? '';
  const nb = pb.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const oa = phaseOrdinal(pa);
  const ob = phaseOrdinal(pb);
  if (oa !== ob) return oa < ob;
  const ra = isPodReady(pa);
  const rb = isPodReady(pb);
  if (ra !== rb) return !ra;
  if (useCost) {
    const ca = podDeletionCost(pa);
    const cb = podDeletionCost(pb);
    if (ca !== cb) return ca < cb;
  }
  if (a.rank !== b.rank) return a.rank > b.rank;
  if (ra && rb) {
    const t1 = podReadyTime(pa);
    const t2 = podReadyTime(pb);
    if (t1 !== t2) {
      if (!logScale || t1 === undefined || t2 === undefined) return afterOrZero(t1, t2);
      const diff = logarithmicRankDiff(t1, t2, now);
      if (diff === 0) return (pa.metadata?.uid ?? '') < (pb.metadata?.uid ?? '');
      return diff < 0;
    }
  }
  const rsa = maxContainerRestarts(pa);
  const rsb = maxContainerRestarts(pb);
  if (rsa !== rsb) return rsa > rsb;
  const c1 = creationTime(pa);
  const c2 = creationTime(pb);
  if (c1 !== c2) {
    if (!logScale || c1 === undefined || c2 === undefined) return afterOrZero(c1, c2);
    const diff = logarithmicRankDiff(c1, c2, now);
    if (diff === 0) return (pa.metadata?.uid ?? '') < (pb.metadata?.uid ?? '');
    return diff < 0;
  }
  return false;
}

function comparatorFromLess<T>(less: (a: T, b: T) => boolean): (a: T, b: T) => number {
  return (a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0);
}

/** Sorts ranked pods so that the first ones are the best to delete. Returns a new array. */
export function sortActivePodsWithRanks<P extends Pod>(pods: readonly RankedPod<P>[], now: number, opts: RankingOptions = {}): RankedPod<P>[] {
  return [...pods].sort(comparatorFromLess((a, b) => activePodsWithRanksLess(a, b, now, opts)));
}

/**
 * Ranks each of `podsToRank` by the number of active pods among `relatedPods`
 * on the same node (the ReplicaSet controller's getPodsRankedByRelatedPodsOnSameNode).
 */
export function rankPodsByRelatedPodsOnSameNode<P extends Pod>(podsToRank: readonly P[], relatedPods: readonly Pod[]): RankedPod<P>[] {
  const onNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (!isPodActive(p)) continue;
    const node = p.spec?.nodeName ?? '';
    onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  return podsToRank.map((pod) => ({ pod, rank: onNode.get(pod.spec?.nodeName ?? '') ?? 0 }));
}

/**
 * ActivePods.Less (no ranks, no deletion cost, no log buckets): true when `a`
 * should be deleted before `b`.
 */
export function activePodsLess(a: Pod, b: Pod): boolean {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const oa = phaseOrdinal(a);
  const ob = phaseOrdinal(b);
  if (oa !== ob) return oa < ob;
  const ra = isPodReady(a);
  const rb = isPodReady(b);
  if (ra !== rb) return !ra;
  if (ra && rb) {
    const t1 = podReadyTime(a);
    const t2 = podReadyTime(b);
    if (t1 !== t2) return afterOrZero(t1, t2);
  }
  const rsa = maxContainerRestarts(a);
  const rsb = maxContainerRestarts(b);
  if (rsa !== rsb) return rsa > rsb;
  const c1 = creationTime(a);
  const c2 = creationTime(b);
  if (c1 !== c2) return afterOrZero(c1, c2);
  return false;
}

/** Sorts pods so the first ones are the best to delete (ActivePods). Returns a new array. */
export function sortActivePods<P extends Pod>(pods: readonly P[]): P[] {
  return [...pods].sort(comparatorFromLess(activePodsLess));
}

/**
 * ByLogging.Less, the reverse preference: assigned, Running, ready, ready
 * longest, most restarts, oldest first. Used to pick the most useful
 * (available) pod of a controller.
 */
export function byLoggingLess(a: Pod, b: Pod): boolean {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na !== '';
  const ord = (p: Pod) => (p.status?.phase === 'Running' ? 0 : p.status?.phase === 'Unknown' ? 1 : 2);
  if (ord(a) !== ord(b)) return ord(a) < ord(b);
  const ra = isPodReady(a);
  const rb = isPodReady(b);
  if (ra !== rb) return ra;
  if (ra && rb) {
    const t1 = podReadyTime(a);
    const t2 = podReadyTime(b);
    if (t1 !== t2) return afterOrZero(t2, t1);
  }
  const rsa = maxContainerRestarts(a);
  const rsb = maxContainerRestarts(b);
  if (rsa !== rsb) return rsa > rsb;
  const c1 = creationTime(a);
  const c2 = creationTime(b);
  if (c1 !== c2) return afterOrZero(c2, c1);
  return false;
}

/** Sorts pods best-first for reading logs (ByLogging). Returns a new array. */
export function sortByLogging<P extends Pod>(pods: readonly P[]): P[] {
  return [...pods].sort(comparatorFromLess(byLoggingLess));
}
