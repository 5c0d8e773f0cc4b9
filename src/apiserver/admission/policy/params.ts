/**
 * The params a binding gives its policy (apiserver admission/plugin/policy/
 * generic CollectParams): none when the policy has no paramKind or the
 * binding no paramRef (the policy runs once, with `params` null); else the
 * object named by paramRef.name or every object paramRef.selector selects,
 * in paramRef.namespace or the request's namespace for a namespaced
 * paramKind. The policy runs once per param; finding none is an error
 * under parameterNotFoundAction Deny and lets the request through under
 * Allow. Params are read from storage at the paramKind's version, so a
 * param is in effect once its create has answered (upstream reads an
 * informer, falling back to a live read).
 */
import type { ParamRef } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/types.js';
import { selectorFromLabelSelector } from '../../../api/labels.js';
import type { ObjectLister, ObjectReader } from '../admission.js';
import type { ResourceTable, ServedResource } from '../../resources.js';
import { presentStored, presentStoredAll } from '../../store.js';

export interface ParamKindRef {
  apiVersion?: string;
  kind?: string;
}

/** A configuration error of a policy or binding (its message is upstream's). */
export class PolicyConfigurationError extends Error {
  override readonly name = 'PolicyConfigurationError';
}

/** schema.ParseGroupVersion. */
export function parseGroupVersion(gv: string): { group: string; version: string } {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  throw new PolicyConfigurationError(`unexpected GroupVersion string: ${gv}`);
}

/** schema.GroupVersionKind's String(): `apps/v1, Kind=Deployment`, `/v1, Kind=ConfigMap`. */
export function gvkString(group: string, version: string, kind: string): string {
  return `${group}/${version}, Kind=${kind}`;
}

/**
 * The served resource of a paramKind (RESTMapping), or the configuration
 * error upstream's policy source records for the policy.
 */
export function paramResourceFor(resources: ResourceTable, paramKind: ParamKindRef): ServedResource | PolicyConfigurationError {
  let gv: { group: string; version: string };
  try {
    gv = parseGroupVersion(paramKind.apiVersion ?? '');
  } catch (err) {
    return new PolicyConfigurationError(`failed to parse paramKind APIVersion: ${(err as Error).message}`);
  }
  const kind = paramKind.kind ?? '';
  const r = resources.all().find((x) => x.group === gv.group && x.version === gv.version && x.kind === kind && !x.virtual);
  if (!r) return new PolicyConfigurationError(`failed to find resource referenced by paramKind: '${gvkString(gv.group, gv.version, kind)}'`);
  return r;
}

export interface ParamDeps {
  reader: ObjectReader;
  lister: ObjectLister;
}

/**
 * CollectParams: the params to evaluate with (`null` = evaluate once
 * without params; an empty list = do not evaluate), or a rejection with a
 * PolicyConfigurationError.
 */
export async function collectParams(
  deps: ParamDeps,
  paramKind: ParamKindRef | null | undefined,
  paramResource: ServedResource | undefined,
  paramRef: ParamRef | null | undefined,
  requestNamespace: string,
): Promise<(KubeObject | null)[]> {
  if (!paramKind || !paramRef) return [null];
  if (!paramResource) throw new PolicyConfigurationError(`paramKind kind \`&ParamKind{APIVersion:${paramKind.apiVersion ?? ''},Kind:${paramKind.kind ?? ''},}\` not known`);
  let namespace = '';
  if (paramResource.namespaced) {
    namespace = paramRef.namespace || requestNamespace;
    if (!namespace) throw new PolicyConfigurationError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (paramRef.namespace) {
    throw new PolicyConfigurationError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: KubeObject[];
  if (paramRef.name) {
    if (paramRef.selector) throw new PolicyConfigurationError('paramRef.name and paramRef.selector are mutually exclusive');
    const stored = await deps.reader.get(paramResource.group, paramResource.resource, namespace, paramRef.name);
    params = stored ? [await presentStored(paramResource, stored)] : [];
  } else if (paramRef.selector) {
    let sel;
    try {
      sel = selectorFromLabelSelector(paramRef.selector);
    } catch (err) {
      throw new PolicyConfigurationError((err as Error).message);
    }
    const all = (await deps.lister.list(paramResource.group, paramResource.resource, namespace)) ?? [];
    const chosen = all.filter((o) => sel.matches(o.metadata?.labels ?? {}));
    params = chosen.length ? await presentStoredAll(paramResource, chosen, { list: true }) : [];
  } else {
    throw new PolicyConfigurationError('one of name or selector must be provided');
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === 'Deny') {
    throw new PolicyConfigurationError('no params found for policy binding with `Deny` parameterNotFoundAction');
  }
  return params;
}
