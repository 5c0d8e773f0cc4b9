/**
 * Pod (anti-)affinity terms in the shape the plugins evaluate
 * (framework.AffinityTerm): namespaces resolved, selectors parsed once.
 */
import type { Pod, PodAffinityTerm, WeightedPodAffinityTerm } from 'kubernetes-types/core/v1.js';
import { everything, nothing, selectorFromLabelSelector, type LabelSelectorValue, type Labels } from '../api/labels.js';

export interface AffinityTerm {
  /** Namespaces named by the term (the owner pod's own when neither namespaces nor namespaceSelector is set). */
  readonly namespaces: ReadonlySet<string>;
  /** Selects namespaces by their labels; nothing() when the term has no namespaceSelector. */
  readonly namespaceSelector: LabelSelectorValue;
  readonly selector: LabelSelectorValue;
  readonly topologyKey: string;
}

export interface WeightedAffinityTerm extends AffinityTerm {
  readonly weight: number;
}

function safeSelector(ls: PodAffinityTerm['labelSelector']): LabelSelectorValue {
  try {
    return selectorFromLabelSelector(ls);
  } catch {
    // Validation rejects such selectors at the API server; an invalid one matches nothing.
    return nothing();
  }
}

/** Builds the term of `owner` (whose namespace is the default), merging matchLabelKeys / mismatchLabelKeys. */
export function newAffinityTerm(owner: Pod, t: PodAffinityTerm): AffinityTerm {
  let selector = safeSelector(t.labelSelector);
  const labels = owner.metadata?.labels ?? {};
  if (t.labelSelector) {
    const extra = [];
    for (const k of t.matchLabelKeys ?? []) if (k in labels) extra.push({ key: k, operator: 'in' as const, values: [labels[k]!] });
    for (const k of t.mismatchLabelKeys ?? []) if (k in labels) extra.push({ key: k, operator: 'notin' as const, values: [labels[k]!] });
    if (extra.length > 0) selector = selector.add(...extra);
  }
  const namespaces = new Set(t.namespaces ?? []);
  let namespaceSelector = nothing();
  if (t.namespaceSelector) namespaceSelector = Object.keys(t.namespaceSelector).length === 0 ? everything() : safeSelector(t.namespaceSelector);
  if (namespaces.size === 0 && !t.namespaceSelector) namespaces.add(owner.metadata?.namespace ?? 'default');
  return { namespaces, namespaceSelector, selector, topologyKey: t.topologyKey };
}

export function newWeightedAffinityTerm(owner: Pod, t: WeightedPodAffinityTerm): WeightedAffinityTerm {
  return { ...newAffinityTerm(owner, t.podAffinityTerm), weight: t.weight };
}

/** Whether `pod` (whose namespace carries `nsLabels`) is selected by the term. */
export function termMatches(term: AffinityTerm, pod: Pod, nsLabels: Labels | undefined): boolean {
  const ns = pod.metadata?.namespace ?? 'default';
  if (!term.namespaces.has(ns) && !term.namespaceSelector.matches(nsLabels ?? {})) return false;
  return term.selector.matches(pod.metadata?.labels ?? {});
}

/** Whether `pod` matches every term (used for pods with affinity to themselves). */
export function matchesAllTerms(terms: readonly AffinityTerm[], pod: Pod, nsLabels: Labels | undefined): boolean {
  if (terms.length === 0) return false;
  return terms.every((t) => termMatches(t, pod, nsLabels));
}

export function requiredAffinityTerms(pod: Pod): AffinityTerm[] {
  return (pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => newAffinityTerm(pod, t));
}
export function requiredAntiAffinityTerms(pod: Pod): AffinityTerm[] {
  return (pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => newAffinityTerm(pod, t));
}
export function preferredAffinityTerms(pod: Pod): WeightedAffinityTerm[] {
  return (pod.spec?.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => newWeightedAffinityTerm(pod, t));
}
export function preferredAntiAffinityTerms(pod: Pod): WeightedAffinityTerm[] {
  return (pod.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => newWeightedAffinityTerm(pod, t));
}
