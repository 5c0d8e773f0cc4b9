/**
 * What `--authorization-mode=AlwaysAllow` answers access reviews with.
 *
 * kube-apiserver turns anonymous authentication off under AlwaysAllow, so
 * every caller it serves is authenticated and allowed everything. kcm keeps
 * anonymous callers but lets them read the public-information paths only
 * (the serving layer answers them 401 elsewhere). Access reviews say the
 * same, so components that delegate authorization to this server (the
 * controller manager's and scheduler's ports) refuse anonymous callers what
 * the server refuses them: allowed, except for anonymous users outside
 * `system:public-info-viewer`'s paths.
 */
import type { Authorizer } from './rbac.js';

/** The paths `system:public-info-viewer` grants (GET) to everyone, anonymous callers included. */
export const publicInfoPaths: readonly string[] = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/** The unauthenticated user (k8s.io/apiserver's anonymous authenticator). */
export function isAnonymous(user: { username: string; groups: readonly string[] }): boolean {
  return user.username === 'system:anonymous' || user.groups.includes('system:unauthenticated');
}

export function newAlwaysAllowAuthorizer(): Authorizer {
  return {
    async authorize(a) {
      if (!isAnonymous(a.user)) return { allowed: true, reason: '' };
      const allowed = !a.resourceRequest && a.verb === 'get' && publicInfoPaths.includes(a.path ?? '');
      return { allowed, reason: '' };
    },
  };
}
