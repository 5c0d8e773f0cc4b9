/**
 * Admission: plugins that see every write after decoding and before storage,
 * as kube-apiserver's admission chain. `admit` (mutating) runs before the
 * registry's create/update preparation, `validate` after it. A plugin refuses
 * a request by throwing a StatusError (usually 403 Forbidden).
 */
import type { KubeObject } from '../../api/types.js';
import type { ServedResource } from '../resources.js';
import type { UserInfo } from '../request-info.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: Operation;
  resource: ServedResource;
  /** '' for the main resource. */
  subresource: string;
  namespace: string;
  name: string;
  /** The incoming object; mutating plugins change it in place. Undefined on DELETE. */
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
  user: UserInfo;
  dryRun: boolean;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Mutating phase. */
  admit?(a: AdmissionAttributes): Promise<void> | void;
  /** Validating phase: must not change the object. */
  validate?(a: AdmissionAttributes): Promise<void> | void;
}

/** Read access to current objects for plugins (namespaces, service accounts, ...). */
export interface ObjectReader {
  /** The stored object, or undefined when absent. Shared: do not mutate. */
  get(group: string, resource: string, namespace: string, name: string): Promise<KubeObject | undefined>;
}

/** Lists of current objects for plugins that add things up (ResourceQuota, LimitRanger). */
export interface ObjectLister {
  /** The stored objects of a resource in a namespace ('' = all or cluster-scoped); undefined when the resource is not served. Shared: do not mutate. */
  list(group: string, resource: string, namespace: string): Promise<KubeObject[] | undefined>;
}

export interface AdmissionChain {
  readonly plugins: readonly AdmissionPlugin[];
  admit(a: AdmissionAttributes): Promise<void>;
  validate(a: AdmissionAttributes): Promise<void>;
}

/** Runs plugins in order; the first refusal ends the request. */
export function newAdmissionChain(plugins: AdmissionPlugin[]): AdmissionChain {
  return {
    plugins,
    async admit(a) {
      for (const p of plugins) if (p.admit) await p.admit(a);
    },
    async validate(a) {
      for (const p of plugins) if (p.validate) await p.validate(a);
    },
  };
}
