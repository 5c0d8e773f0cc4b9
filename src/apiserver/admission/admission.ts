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
  /** What the request carries beyond the object (options, where warnings go); absent for internal writes. */
  request?: AdmissionRequestInfo;
  /** Set by the chain: mutating plugins' state across the reinvocation round. */
  reinvocation?: ReinvocationContext;
}

/** The request's side of admission, filled by the handlers. */
export interface AdmissionRequestInfo {
  /** The operation's options (meta.k8s.io/v1 CreateOptions, UpdateOptions, PatchOptions or DeleteOptions). */
  options?: Record<string, unknown>;
  /** Adds a `Warning` header to the response. */
  warn?(message: string): void;
  /** Audit annotations added by admission (`<webhook>/<key>`), first value wins. */
  annotations?: Record<string, string>;
}

/**
 * admission.ReinvocationContext: a mutating plugin that changed the object
 * sets shouldReinvoke; the chain then runs every mutating plugin once more
 * with isReinvoke, and plugins keep their own state in `values`.
 */
export interface ReinvocationContext {
  isReinvoke: boolean;
  shouldReinvoke: boolean;
  values: Map<string, unknown>;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Mutating phase. */
  admit?(a: AdmissionAttributes): Promise<void> | void;
  /** Validating phase: must not change the object. */
  validate?(a: AdmissionAttributes): Promise<void> | void;
}

/** One phase of a plugin: `run` for the requests `applies` accepts; the others return at once, without a promise. */
export function onlyWhen(applies: (a: AdmissionAttributes) => boolean, run: (a: AdmissionAttributes) => Promise<void> | void): (a: AdmissionAttributes) => Promise<void> | void {
  return (a) => (applies(a) ? run(a) : undefined);
}

/** Whether the request writes the main resource `group/resource` with `operation`. */
export function writes(operation: Operation, group: string, resource: string): (a: AdmissionAttributes) => boolean {
  return (a) => a.operation === operation && a.subresource === '' && a.resource.group === group && a.resource.resource === resource;
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

/**
 * Runs plugins in order; the first refusal ends the request. A plugin that
 * has nothing to do for a request returns without a promise, and the chain
 * goes on at once: only plugins that do asynchronous work are awaited.
 */
export function newAdmissionChain(plugins: AdmissionPlugin[]): AdmissionChain {
  const admitters = plugins.filter((p) => p.admit);
  const validators = plugins.filter((p) => p.validate);
  const admitRound = (a: AdmissionAttributes) => runPhase(admitters, 'admit', a, 0);
  return {
    plugins,
    async admit(a) {
      const ctx = (a.reinvocation ??= { isReinvoke: false, shouldReinvoke: false, values: new Map() });
      await admitRound(a);
      // Upstream's reinvoker: one more round of every mutating plugin when a webhook asked for it.
      if (ctx.shouldReinvoke && !ctx.isReinvoke) {
        ctx.isReinvoke = true;
        await admitRound(a);
      }
    },
    async validate(a) {
      await runPhase(validators, 'validate', a, 0);
    },
  };
}

/** Calls `phase` of plugins[from..] in order; a promise (of the rest) once one returns a promise. */
function runPhase(plugins: readonly AdmissionPlugin[], phase: 'admit' | 'validate', a: AdmissionAttributes, from: number): Promise<void> | void {
  for (let i = from; i < plugins.length; i++) {
    const r = plugins[i]![phase]!(a);
    if (r !== undefined) return r.then(() => runPhase(plugins, phase, a, i + 1));
  }
}
