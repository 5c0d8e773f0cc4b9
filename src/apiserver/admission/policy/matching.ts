/**
 * Whether a ValidatingAdmissionPolicy's matchConstraints, or a binding's
 * matchResources, select a request (apiserver admission/plugin/policy/
 * matching and generic/policy_matcher.go): namespaceSelector and
 * objectSelector first, then excludeResourceRules, then resourceRules with
 * their resourceNames, falling back to an equivalent resource (another
 * version of the same stored resource) under matchPolicy Equivalent. A
 * selector that cannot be parsed, or a missing namespace, fails the request
 * only when the rules match it.
 */
import type { MatchResources, NamedRuleWithOperations } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/types.js';
import { selectorFromLabelSelector, type LabelSelectorValue } from '../../../api/labels.js';
import type { ObjectReader } from '../admission.js';
import type { ResourceTable, ServedResource } from '../../resources.js';
import { StatusError } from '../../status.js';
import type { GroupVersionKind, GroupVersionResource } from '../webhook/admission-review.js';
import { matchNamespaceSelector, matchObjectSelector, type RequestView } from '../webhook/dispatch.js';
import { ruleMatches, type RuleTarget } from '../webhook/rules.js';
import { equivalentResources, gvrOf, kindFor } from '../webhook/versions.js';

/** What a policy matched: the resource and kind its expressions see the request at. */
export interface MatchedAt {
  resource: ServedResource;
  gvr: GroupVersionResource;
  kind: GroupVersionKind;
}

export type MatchOutcome = { matches: false } | ({ matches: true } & MatchedAt);

export interface MatchDeps {
  resources: ResourceTable;
  /** Namespaces, for namespaceSelector. */
  reader: ObjectReader;
}

/** Parsed selectors of one MatchResources, kept with the object they came from. */
export interface ParsedMatchResources {
  readonly spec: MatchResources;
  readonly namespaceSelector: LabelSelectorValue | Error;
  readonly objectSelector: LabelSelectorValue | Error;
}

function parseSelector(sel: unknown): LabelSelectorValue | Error {
  try {
    return selectorFromLabelSelector((sel ?? {}) as never);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

export function parseMatchResources(spec: MatchResources): ParsedMatchResources {
  return { spec, namespaceSelector: parseSelector(spec.namespaceSelector), objectSelector: parseSelector(spec.objectSelector) };
}

function ruleTarget(v: RequestView, gvr: GroupVersionResource): RuleTarget {
  return { operation: v.a.operation, group: gvr.group, version: gvr.version, resource: gvr.resource, subresource: v.a.subresource, namespace: v.namespace };
}

/** The Namespace a request is in, as stored (undefined when absent). Requests on namespaces themselves have none. */
export async function namespaceOf(deps: MatchDeps, v: RequestView): Promise<KubeObject | undefined> {
  if (!v.namespace) return undefined;
  return deps.reader.get('', 'namespaces', '', v.namespace);
}


function nameMatches(rule: NamedRuleWithOperations, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** matchesResourceRules: the first rule (own resource first, then equivalents) that selects the request. Throws for an equivalent without a kind. */
function matchesResourceRules(deps: MatchDeps, rules: readonly NamedRuleWithOperations[], matchPolicy: string | undefined, v: RequestView): MatchOutcome {
  const own = v.a.resource;
  for (const rule of rules) {
    if (ruleMatches(rule, ruleTarget(v, v.gvr)) && nameMatches(rule, v.a.name)) return { matches: true, resource: own, gvr: v.gvr, kind: v.kind };
  }
  // Without a policy or with Exact, no fuzzy matching (the API defaults it to Equivalent).
  if (matchPolicy !== 'Equivalent') return { matches: false };
  const equivalents = equivalentResources(deps.resources, own).filter((e) => !(e.group === own.group && e.version === own.version && e.resource === own.resource));
  for (const rule of rules) {
    for (const e of equivalents) {
      const gvr = gvrOf(e);
      if (!ruleMatches(rule, ruleTarget(v, gvr))) continue;
      const kind = kindFor(e, v.a.subresource);
      if (!kind) throw new Error(`unable to convert to ${gvr.group}/${gvr.version}, Resource=${gvr.resource}: unknown kind`);
      if (nameMatches(rule, v.a.name)) return { matches: true, resource: e, gvr, kind };
    }
  }
  return { matches: false };
}

/**
 * matching.Matcher.Matches. Resolves to the match, or rejects with the
 * error that makes it a configuration error of the policy or binding.
 * Empty resourceRules match every request (bindings leave them out).
 */
export async function matches(deps: MatchDeps, m: ParsedMatchResources, v: RequestView): Promise<MatchOutcome> {
  const ns = await matchNamespaceSelector(deps.reader, m.namespaceSelector, v);
  if (ns === false) return { matches: false };
  const obj = matchObjectSelector(m.objectSelector, v);
  if (obj === false) return { matches: false };
  const spec = m.spec;
  if (matchesResourceRules(deps, spec.excludeResourceRules ?? [], spec.matchPolicy, v).matches) return { matches: false };
  const rules = spec.resourceRules ?? [];
  const out: MatchOutcome = rules.length === 0 ? { matches: true, resource: v.a.resource, gvr: v.gvr, kind: v.kind } : matchesResourceRules(deps, rules, spec.matchPolicy, v);
  if (!out.matches) return out;
  if (ns instanceof StatusError) throw ns;
  if (obj instanceof StatusError) throw obj;
  return out;
}
