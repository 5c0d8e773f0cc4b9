/**
 * The ValidatingAdmissionPolicy admission plugin of the embedded API server
 * (apiserver admission/plugin/policy/validating, GA since Kubernetes 1.30,
 * on by default). It goes after MutatingAdmissionWebhook and before
 * ValidatingAdmissionWebhook, as in kube-apiserver's AllOrderedPlugins.
 * Requests on the policy kinds themselves (ValidatingAdmissionPolicy,
 * ValidatingAdmissionPolicyBinding and their mutating counterparts) and on
 * resources that are not stored (reviews) never reach the policies.
 */
import type { Storage } from '../../storage/storage.js';
import type { Logger } from '../../../util/log/logger.js';
import type { ResourceTable } from '../../resources.js';
import type { Authorizer } from '../../authz/rbac.js';
import type { AdmissionAttributes, AdmissionPlugin, ObjectLister, ObjectReader } from '../admission.js';
import { dispatchPolicies } from './dispatcher.js';
import type { PolicyCompiler } from './evaluator.js';
import { startPolicySource, type PolicySource } from './policy-source.js';
import { compilePolicy } from './compile.js';

export const validatingAdmissionPolicyPluginName = 'ValidatingAdmissionPolicy';

export interface PolicyAdmissionOptions {
  storage: Storage;
  resources: ResourceTable;
  reader: ObjectReader;
  lister: ObjectLister;
  logger: Logger;
  /** kcm's authorizer (RBAC), read per request; absent: `authorizer` checks are allowed, as under AlwaysAllow. */
  authorizer?: () => Authorizer | undefined;
  /** Replaces the CEL compiler (tests). */
  compile?: PolicyCompiler;
}

export interface PolicyAdmission {
  plugin: AdmissionPlugin;
  source: PolicySource;
  close(): void;
}

const policyResources = new Set(['validatingadmissionpolicies', 'validatingadmissionpolicybindings', 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings']);

/** Requests the policies never see: the policy kinds themselves (a circular dependency) and resources that are not stored. */
export function isExemptFromPolicies(a: AdmissionAttributes): boolean {
  if (a.resource.virtual) return true;
  return a.resource.group === 'admissionregistration.k8s.io' && policyResources.has(a.resource.resource);
}

export async function startPolicyAdmission(opts: PolicyAdmissionOptions): Promise<PolicyAdmission> {
  const source = await startPolicySource({ storage: opts.storage, logger: opts.logger, compile: opts.compile ?? compilePolicy });
  const deps = {
    resources: opts.resources,
    reader: opts.reader,
    lister: opts.lister,
    logger: opts.logger,
    ...(opts.authorizer ? { authorizer: opts.authorizer } : {}),
  };
  return {
    plugin: {
      name: validatingAdmissionPolicyPluginName,
      validate(a) {
        const hooks = source.hooks();
        if (hooks.length === 0 || isExemptFromPolicies(a)) return;
        return dispatchPolicies(deps, hooks, a);
      },
    },
    source,
    close() {
      source.stop();
    },
  };
}
