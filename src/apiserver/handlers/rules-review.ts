/**
 * SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules that apply
 * to the caller in spec.namespace, as the RBAC authorizer's RulesFor lists
 * them: rules of ClusterRoles bound by ClusterRoleBindings, then of roles
 * bound by RoleBindings of the namespace. Under AlwaysAllow, and for
 * system:masters, every verb on everything.
 */
import type { NonResourceRule } from 'kubernetes-types/authorization/v1.js';
import type { ClusterRoleBinding, PolicyRule, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import { storagePrefix } from '../store.js';
import { subjectMatches, superuserGroup } from '../authz/rbac.js';
import { badRequest } from '../status.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** authorization/v1 ResourceRule (kubernetes-types' copy lacks verbs and resources). */
interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface SubjectRulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

const everything: SubjectRulesReviewStatus = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false,
};

export async function selfSubjectRulesReview(s: RequestScope, body: KubeObject): Promise<SubjectRulesReviewStatus> {
  const ns = (body.spec as { namespace?: string } | undefined)?.namespace ?? '';
  if (!ns) throw badRequest('no namespace on request');
  if (!s.server.auth.authorizer || s.user.groups.includes(superuserGroup)) return deepCopy(everything);
  const g = 'rbac.authorization.k8s.io';
  const storage = s.server.storage;
  const resources = s.server.resources;
  const list = async (resource: string, namespace: string) =>
    (await storage.list(storagePrefix(resources.storageResource(g, resource)!, namespace))).items.map((x) => x.object);
  const get = async (resource: string, namespace: string, name: string) =>
    (await storage.get(`${storagePrefix(resources.storageResource(g, resource)!, namespace)}${name}`))?.object as { rules?: PolicyRule[] } | undefined;
  const rules: PolicyRule[] = [];
  for (const b of (await list('clusterrolebindings', '')) as unknown as ClusterRoleBinding[]) {
    if (!(b.subjects ?? []).some((x) => subjectMatches(x, s.user, ''))) continue;
    rules.push(...((await get('clusterroles', '', b.roleRef.name))?.rules ?? []));
  }
  for (const b of (await list('rolebindings', ns)) as unknown as RoleBinding[]) {
    if (!(b.subjects ?? []).some((x) => subjectMatches(x, s.user, ns))) continue;
    const role = b.roleRef.kind === 'ClusterRole' ? await get('clusterroles', '', b.roleRef.name) : await get('roles', ns, b.roleRef.name);
    rules.push(...(role?.rules ?? []));
  }
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const r of rules) {
    if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
    else {
      resourceRules.push({
        verbs: [...r.verbs],
        ...(r.apiGroups ? { apiGroups: [...r.apiGroups] } : {}),
        ...(r.resources ? { resources: [...r.resources] } : {}),
        ...(r.resourceNames ? { resourceNames: [...r.resourceNames] } : {}),
      });
    }
  }
  return { resourceRules, nonResourceRules, incomplete: false };
}
