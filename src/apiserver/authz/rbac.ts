/**
 * RBAC authorization (plugin/pkg/auth/authorizer/rbac): a request is allowed
 * when a rule of a role bound to the user allows it. ClusterRoleBindings
 * grant everywhere; RoleBindings grant in their namespace (to a Role of that
 * namespace or a ClusterRole). Members of `system:masters` are always
 * allowed (upstream's superuser group). Service accounts are users named
 * `system:serviceaccount:<ns>:<name>`.
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject } from 'kubernetes-types/rbac/v1.js';
import type { UserInfo } from '../request-info.js';
import type { ObjectLister, ObjectReader } from '../admission/admission.js';
import { newStatus, StatusError } from '../../client/errors.js';

/** What is being asked (authorizer.Attributes). */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** Kubernetes verb for resource requests (`get`, `list`, ...); lower-case HTTP method for non-resource paths. */
  verb: string;
  resourceRequest: boolean;
  /** Non-resource requests. */
  path?: string;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface Decision {
  allowed: boolean;
  /** Why it was allowed or denied; '' when no rule applied. */
  reason: string;
}

export interface Authorizer {
  authorize(a: AuthorizationAttributes): Promise<Decision>;
}

export const superuserGroup = 'system:masters';

function has(list: readonly string[] | undefined, v: string): boolean {
  return !!list && (list.includes('*') || list.includes(v));
}

/** Whether one RBAC rule allows the request (rbac/v1 helpers RuleAllows). */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!a.resourceRequest) {
    if (!has(rule.verbs, a.verb)) return false;
    const path = a.path ?? '';
    return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
  }
  if (!has(rule.verbs, a.verb) || !has(rule.apiGroups, a.apiGroup ?? '')) return false;
  const resources = rule.resources ?? [];
  const res = a.resource ?? '';
  const sub = a.subresource ?? '';
  const combined = sub ? `${res}/${sub}` : res;
  const resourceOk = resources.some((r) => r === '*' || r === combined || (sub !== '' && r === `*/${sub}`));
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name ?? '');
}

/** Whether the binding's subject names the user (rbac appliesTo). */
export function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.username;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return !!ns && user.username === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/** Reads roles and bindings as they are stored now. */
export function newRbacAuthorizer(lister: ObjectLister, reader: ObjectReader): Authorizer {
  const g = 'rbac.authorization.k8s.io';
  async function rulesOf(ref: { kind: string; name: string }, ns: string): Promise<PolicyRule[]> {
    const obj = ref.kind === 'ClusterRole' ? await reader.get(g, 'clusterroles', '', ref.name) : await reader.get(g, 'roles', ns, ref.name);
    return ((obj as ClusterRole | Role | undefined)?.rules ?? []) as PolicyRule[];
  }
  return {
    async authorize(a) {
      if (a.user.groups.includes(superuserGroup)) return { allowed: true, reason: '' };
      for (const b of ((await lister.list(g, 'clusterrolebindings', '')) ?? []) as unknown as ClusterRoleBinding[]) {
        if (!(b.subjects ?? []).some((s) => subjectMatches(s, a.user, ''))) continue;
        if ((await rulesOf(b.roleRef, '')).some((r) => ruleAllows(a, r))) {
          return { allowed: true, reason: `RBAC: allowed by ClusterRoleBinding "${b.metadata?.name}" of ClusterRole "${b.roleRef.name}" to User "${a.user.username}"` };
        }
      }
      if (a.resourceRequest && a.namespace) {
        for (const b of ((await lister.list(g, 'rolebindings', a.namespace)) ?? []) as unknown as RoleBinding[]) {
          if (!(b.subjects ?? []).some((s) => subjectMatches(s, a.user, a.namespace!))) continue;
          if ((await rulesOf(b.roleRef, a.namespace)).some((r) => ruleAllows(a, r))) {
            return { allowed: true, reason: `RBAC: allowed by RoleBinding "${b.metadata?.name}/${a.namespace}" of ${b.roleRef.kind} "${b.roleRef.name}" to User "${a.user.username}"` };
          }
        }
      }
      return { allowed: false, reason: '' };
    },
  };
}

/** The text of a denial (apiserver's forbiddenMessage). */
export function forbiddenMessage(a: AuthorizationAttributes): string {
  const user = a.user.username;
  if (!a.resourceRequest) return `User "${user}" cannot ${a.verb} path "${a.path ?? ''}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : (a.resource ?? '');
  if (a.namespace) return `User "${user}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup ?? ''}" in the namespace "${a.namespace}"`;
  return `User "${user}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup ?? ''}" at the cluster scope`;
}

/** newStatus with metav1.Status's field order (details before code), as the 403 is written byte for byte like upstream's. */
function forbiddenStatus(message: string, details: Record<string, string>): StatusError {
  const { code, ...rest } = newStatus(403, 'Forbidden', message);
  return new StatusError({ ...rest, details, code });
}

/** The 403 a denied request gets, as responsewriters.Forbidden words it. */
export function forbiddenError(a: AuthorizationAttributes, reason = ''): StatusError {
  const msg = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  if (!a.resourceRequest || !a.resource) return forbiddenStatus(`forbidden: ${msg}`, {});
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  const subject = a.name ? `${qualified} "${a.name}"` : qualified;
  // Go's field order of StatusDetails: name, group, kind.
  const details: Record<string, string> = {};
  if (a.name) details.name = a.name;
  if (a.apiGroup) details.group = a.apiGroup;
  details.kind = a.resource;
  return forbiddenStatus(`${subject} is forbidden: ${msg}`, details);
}
