/**
 * User impersonation (apiserver's WithImpersonation filter): the headers
 * `Impersonate-User`, `Impersonate-Group` (repeatable), `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` make the request run as another user, after the
 * authorizer allowed the requestor the verb `impersonate` on each thing asked
 * for: `users`, `groups`, `serviceaccounts` (in their namespace, for
 * `system:serviceaccount:<ns>:<name>`), `authentication.k8s.io` `uids` and
 * `userextras/<key>`.
 *
 * The new user's groups are the ones asked for; a service account without
 * groups asked for gets `system:serviceaccounts` and
 * `system:serviceaccounts:<ns>`; every non-anonymous user gets
 * `system:authenticated` unless `system:authenticated` or
 * `system:unauthenticated` was asked for; `system:anonymous` gets
 * `system:unauthenticated`. This is what `kubectl --as/--as-group` and
 * `kubectl auth can-i --as` rely on.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { newStatus, StatusError } from '../../client/errors.js';
import type { UserInfo } from '../request-info.js';
import { forbiddenError, type AuthorizationAttributes, type Authorizer } from './rbac.js';

/** One thing the requestor asks to act as. */
export interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UID' | 'UserExtra';
  name: string;
  /** ServiceAccount only. */
  namespace?: string;
  /** UserExtra only: the lower-cased, unescaped key. */
  extraKey?: string;
}

const EXTRA_PREFIX = 'impersonate-extra-';

/** `headersDistinct`-shaped headers (every value a list); plain IncomingHttpHeaders values are split as Node joined them. */
export type HeaderLists = Record<string, string[] | undefined>;

function values(h: HeaderLists, name: string): string[] {
  return (h[name] ?? []).filter((v) => v !== '');
}

/** The headers of a Node request as lists, one entry per header line. */
export function headerLists(distinct: HeaderLists | undefined, headers: IncomingHttpHeaders): HeaderLists {
  if (distinct) return distinct;
  const out: HeaderLists = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

function unescapeKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/**
 * What the headers ask to impersonate, in upstream's order (user, groups, extras, uid).
 * Throws when groups, extras or a uid come without a user (upstream answers 500 to that).
 */
export function impersonationRequests(h: HeaderLists): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const user = values(h, 'impersonate-user')[0];
  if (user) {
    const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
    out.push(m ? { kind: 'ServiceAccount', namespace: m[1]!, name: m[2]! } : { kind: 'User', name: user });
  }
  let other = false;
  for (const g of values(h, 'impersonate-group')) {
    other = true;
    out.push({ kind: 'Group', name: g });
  }
  for (const [header, list] of Object.entries(h)) {
    if (!header.toLowerCase().startsWith(EXTRA_PREFIX)) continue;
    other = true;
    const extraKey = unescapeKey(header.slice(EXTRA_PREFIX.length)).toLowerCase();
    for (const v of list ?? []) out.push({ kind: 'UserExtra', name: v, extraKey });
  }
  const uid = values(h, 'impersonate-uid')[0];
  if (uid) {
    other = true;
    out.push({ kind: 'UID', name: uid });
  }
  if (other && !user) {
    const what = out.map((r) => `${r.kind} ${r.extraKey ? `${r.extraKey}=` : ''}${r.name}`).join(', ');
    throw new Error(`requested [${what}] without impersonating a user`);
  }
  return out;
}

function attributesFor(requestor: UserInfo, r: ImpersonationRequest): AuthorizationAttributes {
  const a: AuthorizationAttributes = { user: requestor, verb: 'impersonate', resourceRequest: true, apiGroup: '', name: r.name };
  switch (r.kind) {
    case 'ServiceAccount':
      return { ...a, resource: 'serviceaccounts', namespace: r.namespace };
    case 'User':
      return { ...a, resource: 'users' };
    case 'Group':
      return { ...a, resource: 'groups' };
    case 'UID':
      return { ...a, apiGroup: 'authentication.k8s.io', resource: 'uids' };
    case 'UserExtra':
      return { ...a, apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: r.extraKey };
  }
}

/**
 * The user the request runs as: `requestor` when no impersonation header is
 * present, the impersonated user when every request is allowed (always, when
 * `authorizer` is undefined: AlwaysAllow). Throws a 403 StatusError naming the
 * first thing not allowed, or a 500 one for malformed headers.
 */
export async function impersonatedUser(h: HeaderLists, requestor: UserInfo, authorizer: Authorizer | undefined): Promise<UserInfo> {
  let requests: ImpersonationRequest[];
  try {
    requests = impersonationRequests(h);
  } catch (err) {
    throw new StatusError(newStatus(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`, {}), { cause: err });
  }
  if (requests.length === 0) return requestor;
  const groupsSpecified = values(h, 'impersonate-group').length > 0;
  let username = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attrs = attributesFor(requestor, r);
    if (authorizer) {
      const d = await authorizer.authorize(attrs);
      if (!d.allowed) throw forbiddenError(attrs, d.reason);
    }
    switch (r.kind) {
      case 'ServiceAccount':
        username = `system:serviceaccount:${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
        break;
      case 'User':
        username = r.name;
        break;
      case 'Group':
        groups.push(r.name);
        break;
      case 'UID':
        uid = r.name;
        break;
      case 'UserExtra':
        (extra[r.extraKey!] ??= []).push(r.name);
        break;
    }
  }
  if (username !== 'system:anonymous') {
    if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated')) groups.push('system:authenticated');
  } else if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
  const user: UserInfo = { username, groups };
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
