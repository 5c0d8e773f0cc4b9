/**
 * What a request addresses, parsed from its path and method the way
 * apiserver's RequestInfoFactory does it.
 */

/** The authenticated caller, as the serving layer hands it to the handler. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export type RequestInfo =
  | { kind: 'nonResource'; path: string }
  | {
      kind: 'resource';
      /** '' for core (/api). */
      group: string;
      version: string;
      namespace: string;
      resource: string;
      name: string;
      subresource: string;
      verb: Verb;
    };

/** Subresources that follow /namespaces/{name}/ instead of a namespaced resource. */
const namespaceSubresources = new Set(['status', 'finalize']);

/**
 * Parses `/api/v1/namespaces/ns/pods/name/status` and friends. Returns a
 * non-resource info for everything else (discovery, health, metrics).
 * `watch` is true when the query asks for a watch (`watch=1|true`).
 */
export function parseRequestInfo(method: string, pathname: string, watch: boolean): RequestInfo {
  const parts = pathname.split('/').filter((p) => p !== '');
  let rest: string[];
  let group: string;
  let version: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return { kind: 'nonResource', path: pathname };
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && !namespaceSubresources.has(rest[2]!)) rest = rest.slice(2);
  }
  if (rest.length === 0) return { kind: 'nonResource', path: pathname };
  const resource = rest[0]!;
  const name = rest[1] ?? '';
  const subresource = rest.slice(2).join('/');
  // `/api/v1/namespaces/x` names the namespace itself.
  if (resource === 'namespaces' && namespace && rest[1] === namespace) namespace = '';
  const verb = verbOf(method, name, watch || legacyWatch);
  return { kind: 'resource', group, version, namespace, resource, name: decodeURIComponent(name), subresource, verb };
}

function verbOf(method: string, name: string, watch: boolean): Verb {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return name ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return name ? 'delete' : 'deletecollection';
    default:
      return 'get';
  }
}

/** `watch=1`, `watch=true`: anything but empty, "0" and "false". */
export function truthyParam(v: string | null): boolean {
  return v !== null && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}
