/**
 * The review APIs (pkg/registry/authentication/*, pkg/registry/authorization/*):
 * create-only resources answered from the request, never stored.
 *
 * - tokenreviews: authenticates spec.token as a request bearing it would be
 *   (so the user gets `system:authenticated`), for spec.audiences.
 * - selfsubjectreviews: the caller's own user info (`kubectl auth whoami`).
 * - subjectaccessreviews, localsubjectaccessreviews, selfsubjectaccessreviews:
 *   asks the server's authorizer (AlwaysAllow: allowed, but anonymous users only on public paths; see authz/always-allow.ts).
 * - selfsubjectrulesreviews: the rules that apply to the caller in a namespace
 *   (rules-review.ts).
 * All answer 201 with the request object and its status filled in.
 */
import type { SelfSubjectReview, TokenReview, UserInfo as ApiUserInfo } from 'kubernetes-types/authentication/v1.js';
import type { SubjectAccessReview, SubjectAccessReviewSpec, SubjectAccessReviewStatus } from 'kubernetes-types/authorization/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import type { UserInfo } from '../request-info.js';
import type { AuthorizationAttributes } from '../authz/rbac.js';
import { newAlwaysAllowAuthorizer } from '../authz/always-allow.js';
import { deepCopy } from '../../util/json/deep-copy.js';

const alwaysAllow = newAlwaysAllowAuthorizer();
import { writeObject } from '../output.js';
import { negotiateWithoutTable, partialObjectMetadata } from '../table.js';
import { badRequest, invalid, type FieldErrorLike } from '../status.js';
import { readObject } from './decode.js';
import { selfSubjectRulesReview } from './rules-review.js';

const reviewResources = new Set([
  'authentication.k8s.io/tokenreviews',
  'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
]);

/** Whether `handleReview` serves this resource. */
export function isReviewResource(r: { group: string; resource: string }): boolean {
  return reviewResources.has(`${r.group}/${r.resource}`);
}

/** The authentication.k8s.io UserInfo of a request's user. */
export function toApiUserInfo(u: UserInfo): ApiUserInfo {
  return { username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: [...u.groups], ...(u.extra && Object.keys(u.extra).length ? { extra: deepCopy(u.extra) } : {}) };
}

/**
 * POST to a review resource (the router checked the verb is create). The
 * reviews have no table convertor upstream: Accept negotiation comes first
 * and refuses a Table-only request with 406.
 */
export async function handleReview(s: RequestScope): Promise<void> {
  negotiateWithoutTable(s);
  const body = await readObject(s);
  const out = { ...body, apiVersion: `${s.r.group}/${s.r.version}`, kind: s.r.kind, metadata: { ...(body.metadata ?? {}), creationTimestamp: null } } as unknown as KubeObject;
  switch (s.r.resource) {
    case 'tokenreviews':
      out.status = await tokenReview(s, body as TokenReview & KubeObject);
      break;
    case 'selfsubjectreviews':
      out.status = { userInfo: toApiUserInfo(s.user) } satisfies SelfSubjectReview['status'];
      break;
    case 'subjectaccessreviews':
    case 'localsubjectaccessreviews':
    case 'selfsubjectaccessreviews':
      out.status = await accessReview(s, body as SubjectAccessReview & KubeObject);
      break;
    case 'selfsubjectrulesreviews':
      out.status = await selfSubjectRulesReview(s, body);
      break;
    default:
      throw badRequest(`${s.r.resource}.${s.r.group} is not a review resource`);
  }
  writeObject(s, 201, s.rendering === 'metadata' ? partialObjectMetadata(out) : out);
}

async function tokenReview(s: RequestScope, review: TokenReview & KubeObject): Promise<TokenReview['status']> {
  if (review.metadata?.namespace) throw badRequest('namespace is not allowed on this type');
  const token = review.spec?.token;
  if (!token) throw badRequest('token is required for TokenReview in authentication');
  const wanted = review.spec?.audiences ?? [];
  const reviewToken = s.server.auth.reviewToken;
  if (!reviewToken) return { authenticated: false, error: 'token authentication is not configured on this server' };
  const r = await reviewToken(token, wanted);
  if ('error' in r) return { authenticated: false, error: r.error, user: {} };
  return { authenticated: true, user: toApiUserInfo(r.user), audiences: r.audiences };
}

function validateAccessReview(s: RequestScope, spec: SubjectAccessReviewSpec | undefined): void {
  const kind = s.r.kind;
  const errs: FieldErrorLike[] = [];
  const res = spec?.resourceAttributes;
  const nonRes = spec?.nonResourceAttributes;
  if (res && nonRes) errs.push({ type: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: `spec.nonResourceAttributes: Invalid value: ${JSON.stringify(nonRes)}: cannot be specified in combination with resourceAttributes` });
  if (!res && !nonRes) errs.push({ type: 'FieldValueInvalid', field: 'spec.resourceAttributes', message: 'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' });
  if (s.r.resource !== 'selfsubjectaccessreviews' && !spec?.user && !(spec?.groups ?? []).length) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.user', message: 'spec.user: Invalid value: "": at least one of user or group must be specified' });
  }
  if (s.r.resource === 'localsubjectaccessreviews' && res && (res.namespace ?? '') !== s.namespace) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.resourceAttributes.namespace', message: `spec.resourceAttributes.namespace: Invalid value: "${res.namespace ?? ''}": must match metadata.namespace` });
  }
  if (errs.length) throw invalid(s.r.group, kind, '', errs);
}

async function accessReview(s: RequestScope, review: SubjectAccessReview & KubeObject): Promise<SubjectAccessReviewStatus> {
  const spec = review.spec as SubjectAccessReviewSpec | undefined;
  validateAccessReview(s, spec);
  const user: UserInfo =
    s.r.resource === 'selfsubjectaccessreviews'
      ? s.user
      : { username: spec?.user ?? '', ...(spec?.uid ? { uid: spec.uid } : {}), groups: [...(spec?.groups ?? [])], ...(spec?.extra ? { extra: spec.extra as Record<string, string[]> } : {}) };
  const res = spec?.resourceAttributes;
  const attrs: AuthorizationAttributes = res
    ? {
        user,
        verb: res.verb ?? '',
        resourceRequest: true,
        apiGroup: res.group ?? '',
        apiVersion: res.version ?? '',
        resource: res.resource ?? '',
        subresource: res.subresource ?? '',
        namespace: res.namespace ?? '',
        name: res.name ?? '',
      }
    : { user, verb: spec?.nonResourceAttributes?.verb ?? '', resourceRequest: false, path: spec?.nonResourceAttributes?.path ?? '' };
  // Without RBAC the server is AlwaysAllow, which (as kcm's serving layer) keeps anonymous callers to the public paths.
  const authorizer = s.server.auth.authorizer ?? alwaysAllow;
  try {
    const d = await authorizer.authorize(attrs);
    return { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
  } catch (err) {
    s.server.logger.error(err, { resource: s.r.resource }, 'access review: the authorizer failed');
    return { allowed: false, evaluationError: (err as Error).message };
  }
}
