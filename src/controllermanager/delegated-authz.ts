/**
 * Delegated authorization of the controller manager's and scheduler's HTTPS
 * endpoints, as k8s.io/apiserver's DelegatingAuthorizationOptions builds it:
 *
 *   union(always-allow paths, SubjectAccessReview webhook)
 *
 * Every request here is a non-resource request: the attributes are the
 * user, the lower-case HTTP method as verb and the URL path. Paths listed in
 * `--authorization-always-allow-paths` are allowed without asking (a
 * trailing `*` matches a prefix; the leading `/` is optional). Anything else
 * is asked of the API server with a SubjectAccessReview; without one, or
 * when it has no opinion, the request is forbidden. SAR answers are cached
 * (allowed and denied each for their own TTL); errors are not.
 */
import type { Clock } from '../util/clock/clock.js';
import type { UserInfo } from './delegated-authn.js';

export interface NonResourceAttributes {
  user: UserInfo;
  /** Lower-case HTTP method (`get`, `head`, `post`, ...). */
  verb: string;
  path: string;
}

export type AuthorizationDecision =
  | { decision: 'allow'; reason: string }
  | { decision: 'deny' | 'noOpinion'; reason: string }
  /** The review could not be made; the request fails with 500, as upstream. */
  | { decision: 'error'; reason: string; error: Error };

/** authorization.k8s.io/v1 SubjectAccessReviewSpec for a non-resource request. */
export interface SubjectAccessReviewSpec {
  nonResourceAttributes: { path: string; verb: string };
  user: string;
  groups: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

/** authorization.k8s.io/v1 SubjectAccessReviewStatus. */
export interface SubjectAccessReviewStatus {
  allowed?: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export interface DelegatingAuthorizerOptions {
  /** `--authorization-always-allow-paths`. */
  alwaysAllowPaths: readonly string[];
  /** Asks the API server; absent: only the always-allowed paths are served (upstream without an authorization kubeconfig). */
  reviewAccess?: (spec: SubjectAccessReviewSpec) => Promise<SubjectAccessReviewStatus>;
  allowCacheTtlMs: number;
  denyCacheTtlMs: number;
  clock: Clock;
}

export interface DelegatingAuthorizer {
  authorize(a: NonResourceAttributes): Promise<AuthorizationDecision>;
}

const maxCachedReviews = 4096;

/** path.NewAuthorizer: exact paths and `prefix*` patterns, leading `/` optional. Throws on a `*` elsewhere than at the end. */
export function newPathMatcher(paths: readonly string[]): (path: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const raw of paths) {
    const p = raw.replace(/^\//, '');
    if (p === '') {
      exact.add(p);
      continue;
    }
    if (p.slice(0, -1).includes('*')) throw new Error(`only trailing * allowed in ${JSON.stringify(p)}`);
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (path) => {
    const p = path.replace(/^\//, '');
    return exact.has(p) || prefixes.some((x) => p.startsWith(x));
  };
}

export function newDelegatingAuthorizer(opts: DelegatingAuthorizerOptions): DelegatingAuthorizer {
  const alwaysAllowed = newPathMatcher(opts.alwaysAllowPaths);
  const cache = new Map<string, { expires: number; status: SubjectAccessReviewStatus }>();

  async function review(spec: SubjectAccessReviewSpec): Promise<SubjectAccessReviewStatus> {
    const key = JSON.stringify(spec);
    const now = opts.clock.now();
    const hit = cache.get(key);
    if (hit && hit.expires > now) return hit.status;
    cache.delete(key);
    const status = await opts.reviewAccess!(spec);
    const ttl = status.allowed ? opts.allowCacheTtlMs : opts.denyCacheTtlMs;
    if (ttl > 0) {
      if (cache.size >= maxCachedReviews) cache.delete(cache.keys().next().value!);
      cache.set(key, { expires: now + ttl, status });
    }
    return status;
  }

  return {
    async authorize(a) {
      if (alwaysAllowed(a.path)) return { decision: 'allow', reason: '' };
      if (!opts.reviewAccess) return { decision: 'noOpinion', reason: '' };
      const spec: SubjectAccessReviewSpec = {
        nonResourceAttributes: { path: a.path, verb: a.verb },
        user: a.user.username,
        groups: [...a.user.groups],
        ...(a.user.extra && Object.keys(a.user.extra).length > 0 ? { extra: a.user.extra } : {}),
        ...(a.user.uid ? { uid: a.user.uid } : {}),
      };
      let status: SubjectAccessReviewStatus;
      try {
        status = await review(spec);
      } catch (err) {
        return { decision: 'error', reason: '', error: err instanceof Error ? err : new Error(String(err)) };
      }
      const reason = status.reason ?? '';
      if (status.allowed && status.denied) return { decision: 'error', reason, error: new Error('webhook subject access review returned both allow and deny response') };
      if (status.denied) return { decision: 'deny', reason };
      if (status.allowed) return { decision: 'allow', reason };
      return { decision: 'noOpinion', reason };
    },
  };
}
