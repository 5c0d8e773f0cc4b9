/**
 * Node selection from a pod's spec (component-helpers nodeaffinity):
 * spec.nodeSelector and spec.affinity.nodeAffinity.
 */
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, PreferredSchedulingTerm } from 'kubernetes-types/core/v1.js';

function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  return BigInt(s);
}

/** One matchExpressions requirement against node labels; an invalid requirement matches nothing. */
export function nodeSelectorRequirementMatches(r: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return values.length > 0 && has && values.includes(v!);
    case 'NotIn':
      return values.length > 0 && (!has || !values.includes(v!));
    case 'Exists':
      return values.length === 0 && has;
    case 'DoesNotExist':
      return values.length === 0 && !has;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !has) return false;
      const want = parseInt64(values[0]!);
      const got = parseInt64(v!);
      if (want === undefined || got === undefined) return false;
      return r.operator === 'Gt' ? got > want : got < want;
    }
    default:
      return false;
  }
}

/** matchFields supports only metadata.name with In / NotIn (one value). */
function fieldRequirementMatches(r: NodeSelectorRequirement, node: Node): boolean {
  if (r.key !== 'metadata.name') return false;
  const name = node.metadata?.name ?? '';
  const values = r.values ?? [];
  if (values.length !== 1) return false;
  switch (r.operator) {
    case 'In':
      return values.includes(name);
    case 'NotIn':
      return !values.includes(name);
    default:
      return false;
  }
}

/** A term ANDs its expressions and fields; an empty term matches no node. */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  return exprs.every((r) => nodeSelectorRequirementMatches(r, labels)) && fields.every((r) => fieldRequirementMatches(r, node));
}

/** Terms are ORed. */
export function nodeSelectorTermsMatch(terms: readonly NodeSelectorTerm[], node: Node): boolean {
  return terms.some((t) => nodeSelectorTermMatches(t, node));
}

/** Whether podMatchesNodeSelectorAndAffinity can be false on some node: the pod has a nodeSelector or required node affinity. */
export function podHasNodeSelectorOrAffinity(pod: Pod): boolean {
  return Object.keys(pod.spec?.nodeSelector ?? {}).length > 0 || pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution !== undefined;
}

/**
 * GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector (every label
 * equal) and the required node affinity terms.
 */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  const selector = pod.spec?.nodeSelector;
  if (selector) {
    const labels = node.metadata?.labels ?? {};
    for (const k in selector) {
      if (!Object.prototype.hasOwnProperty.call(selector, k)) continue;
      if (!Object.prototype.hasOwnProperty.call(labels, k) || labels[k] !== selector[k]) return false;
    }
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required) return nodeSelectorTermsMatch(required.nodeSelectorTerms ?? [], node);
  return true;
}

/** Sum of the weights of preferred terms matching the node (terms with weight 0 are ignored). */
export function preferredNodeAffinityScore(terms: readonly PreferredSchedulingTerm[] | undefined, node: Node): number {
  let score = 0;
  for (const t of terms ?? []) {
    if (!t.weight) continue;
    if (nodeSelectorTermMatches(t.preference, node)) score += t.weight;
  }
  return score;
}
