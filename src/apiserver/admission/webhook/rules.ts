/**
 * Which requests a webhook's rules select (apiserver
 * admission/plugin/webhook/predicates/rules): operations, API groups and
 * versions (exact or `*`), resources (`pods`, `*`, `pods/status`,
 * `pods/*`, `*\/status`, `*\/*`) and scope (`Cluster`, `Namespaced`, `*`;
 * a Namespace object is cluster-scoped). Webhooks and policies never see
 * admissionregistration's own configuration kinds.
 */
/** admissionregistration/v1 RuleWithOperations (kubernetes-types leaves out resources and scope). */
export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

/** The parts of a request a rule looks at, with the resource as matched (possibly an equivalent one). */
export interface RuleTarget {
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** '' for cluster-scoped requests; a Namespace's own name for requests on namespaces. */
  namespace: string;
}

function exactOrWildcard(items: readonly string[] | undefined, requested: string): boolean {
  return (items ?? []).some((i) => i === '*' || i === requested);
}

function isNamespaceResource(t: RuleTarget): boolean {
  return t.group === '' && t.version === 'v1' && t.resource === 'namespaces';
}

function scopeMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  const scope = rule.scope;
  if (scope === undefined || scope === null || scope === '*') return true;
  switch (scope) {
    case 'Namespaced':
      return !isNamespaceResource(t) && t.namespace !== '';
    case 'Cluster':
      return isNamespaceResource(t) || t.namespace === '';
    default:
      return false;
  }
}

function resourceMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  for (const resSub of rule.resources ?? []) {
    const slash = resSub.indexOf('/');
    const res = slash < 0 ? resSub : resSub.slice(0, slash);
    const sub = slash < 0 ? '' : resSub.slice(slash + 1);
    if ((res === '*' || res === t.resource) && (sub === '*' || sub === t.subresource)) return true;
  }
  return false;
}

/** rules.Matcher.Matches. */
export function ruleMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  return (
    scopeMatches(rule, t) &&
    (rule.operations ?? []).some((op) => op === '*' || op === t.operation) &&
    exactOrWildcard(rule.apiGroups, t.group) &&
    exactOrWildcard(rule.apiVersions, t.version) &&
    resourceMatches(rule, t)
  );
}

const exemptKinds = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/** IsExemptAdmissionConfigurationResource: the request's kind configures admission itself. */
export function isExemptAdmissionConfigurationKind(group: string, kind: string): boolean {
  return group === 'admissionregistration.k8s.io' && exemptKinds.has(kind);
}
