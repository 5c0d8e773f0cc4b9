/**
 * The ValidatingAdmissionPolicy dispatcher (apiserver admission/plugin/
 * policy/validating/dispatcher.go): for every policy whose matchConstraints
 * select the request, every binding whose matchResources select it too is
 * evaluated once per param; each failed validation is acted on as the
 * binding's validationActions say (Deny: refuse the request, Warn: a
 * `Warning` header, Audit: an audit annotation), and configuration errors
 * (no params, unknown paramKind, bad selectors, conversion failures) are
 * refusals under failurePolicy Fail and ignored under Ignore. The first
 * refusal, in policy then binding order, is the request's error.
 */
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/types.js';
import { statusInGoOrder, StatusError } from '../../../client/errors.js';
import type { Logger } from '../../../util/log/logger.js';
import type { AdmissionAttributes } from '../admission.js';
import type { ServedResource } from '../../resources.js';
import { forbidden, notFound } from '../../status.js';
import { stringifyAsGo } from '../../go-json.js';
import type { Authorizer } from '../../authz/rbac.js';
import type { UserInfo } from '../../request-info.js';
import { CelAuthorizer, CelResourceCheck, type AuthzCheckAttributes, type AuthzDecision } from '../../cel/library/authz.js';
import { requestView, type RequestView } from '../webhook/dispatch.js';
import { convertObject, requestObjects } from '../webhook/versions.js';
import type { PolicyInput } from './evaluator.js';
import { matches, namespaceOf, type MatchDeps, type MatchedAt } from './matching.js';
import { collectParams, paramResourceFor, type ParamDeps } from './params.js';
import type { PolicyHook } from './policy-source.js';
import { validate, type PolicyDecision, type ValidateResult } from './validator.js';
import { deepCopy } from '../../../util/json/deep-copy.js';

export interface DispatchDeps extends MatchDeps, ParamDeps {
  logger: Logger;
  /** kcm's authorizer for `authorizer` checks; undefined (or returning undefined) allows every check, as AlwaysAllow. */
  authorizer?: () => Authorizer | undefined;
}

interface Denial {
  policy: string;
  /** Undefined for errors of the policy itself. */
  binding?: string;
  message: string;
  reason: string;
}

/** The audit annotation key of validation failures with the Audit action. */
export const validationFailureAnnotation = 'validation.policy.admission.k8s.io/validation_failure';
const maxAuditAnnotationValueLength = 10 * 1024;

/** Adds an audit annotation; the first value for a key wins, as attributesRecord.AddAnnotation. */
function addAnnotation(deps: DispatchDeps, a: AdmissionAttributes, key: string, value: string): void {
  const ann = a.request?.annotations;
  if (!ann) return;
  if (!(key in ann)) ann[key] = value;
  else if (ann[key] !== value) deps.logger.warn({ key }, 'admission annotations are not allowed to be overwritten; ignored');
}

/** reasonToCode. */
export function reasonToCode(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    case 'Invalid':
    default:
      return 422;
  }
}

/** admission.NewForbidden with the decision's reason and code, and the message as a cause. */
export function denialError(a: AdmissionAttributes, d: Denial): StatusError {
  const message = d.binding !== undefined
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  // extractResourceName: the request's name, else the object's, else "Unknown".
  const name = a.name || (a.object ? (a.object.metadata?.name ?? '') : 'Unknown');
  const base = forbidden({ group: a.resource.group, resource: a.resource.resource }, name, message).status;
  const reason = d.reason || 'Invalid';
  const details = { ...(base.details ?? {}), causes: [...(base.details?.causes ?? []), { message }] };
  return new StatusError(statusInGoOrder({ ...base, reason, details, code: reasonToCode(reason) }));
}

/** The objects of the request at the matched version. */
async function versionedObjects(v: RequestView, at: MatchedAt): Promise<{ object: KubeObject | undefined; oldObject: KubeObject | undefined }> {
  const { object, oldObject } = requestObjects(v.a);
  const own = v.a.resource;
  if (at.resource === own || v.a.subresource === 'scale') return { object, oldObject };
  return {
    object: object ? await convertObject(own, at.resource, object) : undefined,
    oldObject: oldObject ? await convertObject(own, at.resource, oldObject) : undefined,
  };
}

/** CreateAdmissionRequest as CEL sees it (Go's zero values where the request has none). */
export function celRequest(v: RequestView, at: MatchedAt): Record<string, unknown> {
  const a = v.a;
  const u = a.user;
  return {
    kind: { group: at.kind.group, version: at.kind.version, kind: at.kind.kind },
    resource: { group: at.gvr.group, version: at.gvr.version, resource: at.gvr.resource },
    subResource: a.subresource,
    requestKind: { group: v.kind.group, version: v.kind.version, kind: v.kind.kind },
    requestResource: { group: v.gvr.group, version: v.gvr.version, resource: v.gvr.resource },
    requestSubResource: a.subresource,
    name: a.name,
    namespace: v.namespace,
    operation: a.operation,
    userInfo: { username: u.username ?? '', uid: u.uid ?? '', groups: [...(u.groups ?? [])], extra: deepCopy(u.extra ?? {}) },
    dryRun: a.dryRun,
    options: a.request?.options ?? null,
  };
}

/** CreateNamespaceObject: the Namespace without ownerReferences and managedFields. */
export function celNamespace(ns: KubeObject | undefined): Record<string, unknown> | null {
  if (!ns) return null;
  const m = ns.metadata ?? {};
  const meta: Record<string, unknown> = {};
  for (const k of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'finalizers'] as const) {
    if (m[k] !== undefined) meta[k] = deepCopy(m[k]);
  }
  const out: Record<string, unknown> = { metadata: meta };
  const n = ns as { spec?: unknown; status?: unknown };
  if (n.spec !== undefined) out.spec = deepCopy(n.spec);
  if (n.status !== undefined) out.status = deepCopy(n.status);
  return out;
}

function serviceAccountUser(namespace: string, name: string): UserInfo {
  return { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
}

/**
 * The `authorizer` of one request. CEL evaluation is synchronous and kcm's
 * authorizer is not, so checks are answered from a cache: a check not yet
 * answered is recorded (and answered "no opinion" for now), the caller
 * resolves the recorded checks and evaluates again; the last evaluation
 * sees every answer (expressions have no side effects).
 */
class RequestAuthorizer {
  private readonly cache = new Map<string, AuthzDecision>();
  private pending = new Map<string, AuthzCheckAttributes>();
  readonly cel: CelAuthorizer;

  constructor(
    private readonly user: UserInfo,
    private readonly authorizer: Authorizer | undefined,
  ) {
    this.cel = new CelAuthorizer((attrs) => this.decide(attrs));
  }

  private decide(attrs: AuthzCheckAttributes): AuthzDecision {
    const key = JSON.stringify(attrs);
    const hit = this.cache.get(key);
    if (hit) return hit;
    this.pending.set(key, attrs);
    return { decision: 'noOpinion' };
  }

  hasPending(): boolean {
    return this.pending.size > 0;
  }

  async resolvePending(): Promise<void> {
    const todo = [...this.pending];
    this.pending = new Map();
    await Promise.all(
      todo.map(async ([key, attrs]) => {
        this.cache.set(key, await this.check(attrs));
      }),
    );
  }

  private async check(c: AuthzCheckAttributes): Promise<AuthzDecision> {
    if (!this.authorizer) return { decision: 'allow', reason: '' };
    const user = c.serviceAccount ? serviceAccountUser(c.serviceAccount.namespace, c.serviceAccount.name) : this.user;
    try {
      const d = await this.authorizer.authorize(
        c.path !== undefined
          ? { user, verb: c.verb, resourceRequest: false, path: c.path }
          : {
              user,
              verb: c.verb,
              resourceRequest: true,
              apiGroup: c.group ?? '',
              apiVersion: '*',
              resource: c.resource ?? '',
              subresource: c.subresource ?? '',
              namespace: c.namespace ?? '',
              name: c.name ?? '',
            },
      );
      return { decision: d.allowed ? 'allow' : 'noOpinion', reason: d.reason };
    } catch (err) {
      return { decision: 'noOpinion', error: (err as Error).message };
    }
  }
}

/** Evaluations that ask the authorizer something new are repeated at most this often. */
const maxAuthorizerRounds = 8;

/** The decision of failurePolicy for a configuration error (addConfigError). */
function configErrorDenial(policy: ValidatingAdmissionPolicy, binding: ValidatingAdmissionPolicyBinding | undefined, err: unknown): Denial | undefined {
  const fp = policy.spec?.failurePolicy ?? 'Fail';
  const name = policy.metadata?.name ?? '';
  const msg = err instanceof Error ? err.message : String(err);
  const bindingName = binding ? (binding.metadata?.name ?? '') : undefined;
  switch (fp) {
    case 'Ignore':
      return undefined;
    case 'Fail':
      return { policy: name, ...(bindingName !== undefined ? { binding: bindingName } : {}), message: binding ? `failed to configure binding: ${msg}` : `failed to configure policy: ${msg}`, reason: '' };
    default:
      return { policy: name, ...(bindingName !== undefined ? { binding: bindingName } : {}), message: `unrecognized failure policy: '${fp}'`, reason: '' };
  }
}

/** Audit annotations of one policy across its bindings: distinct values of a key are joined with ", ". */
class AuditAnnotationCollector {
  private readonly values = new Map<string, string[]>();
  add(key: string, value: string): void {
    let l = this.values.get(key);
    if (!l) this.values.set(key, (l = []));
    if (!l.includes(value)) l.push(value);
  }
  publish(deps: DispatchDeps, policyName: string, a: AdmissionAttributes): void {
    for (const [key, l] of this.values) addAnnotation(deps, a, `${policyName}/${key}`, l.length === 1 ? l[0]! : l.join(', '));
  }
}

/** Runs every policy hook against the request; throws the first refusal. */
export async function dispatchPolicies(deps: DispatchDeps, hooks: readonly PolicyHook[], a: AdmissionAttributes): Promise<void> {
  if (hooks.length === 0) return;
  const v = requestView(a);
  const denied: Denial[] = [];
  const addConfigError = (policy: ValidatingAdmissionPolicy, binding: ValidatingAdmissionPolicyBinding | undefined, err: unknown) => {
    const d = configErrorDenial(policy, binding, err);
    if (d) denied.push(d);
    else deps.logger.v(2).info({ policy: policy.metadata?.name, binding: binding?.metadata?.name, err: (err as Error)?.message }, 'admission policy configuration error ignored (failurePolicy Ignore)');
  };
  let authz: RequestAuthorizer | undefined;

  for (const hook of hooks) {
    const policy = hook.policy;
    const policyName = policy.metadata?.name ?? '';
    if (!hook.constraints) {
      addConfigError(policy, undefined, new Error('policy contained no match constraints, a required field'));
      continue;
    }
    let at: MatchedAt;
    try {
      const m = await matches(deps, hook.constraints, v);
      if (!m.matches) continue;
      at = m;
    } catch (err) {
      addConfigError(policy, undefined, err);
      continue;
    }
    const paramKind = policy.spec?.paramKind;
    let paramResource: ServedResource | undefined;
    if (paramKind) {
      const r = paramResourceFor(deps.resources, paramKind);
      if (r instanceof Error) {
        addConfigError(policy, undefined, r);
        continue;
      }
      paramResource = r;
    }

    const collector = new AuditAnnotationCollector();
    let objects: { object: KubeObject | undefined; oldObject: KubeObject | undefined } | undefined;
    for (const binding of hook.bindings) {
      const bindingName = binding.metadata?.name ?? '';
      const bm = hook.bindingMatch(binding);
      if (bm) {
        try {
          if (!(await matches(deps, bm, v)).matches) continue;
        } catch (err) {
          addConfigError(policy, binding, err);
          continue;
        }
      }
      let params: (KubeObject | null)[];
      try {
        params = await collectParams(deps, paramKind, paramResource, binding.spec?.paramRef, v.namespace);
      } catch (err) {
        addConfigError(policy, binding, err);
        continue;
      }
      if (params.length === 0) continue;
      if (!objects) {
        try {
          objects = await versionedObjects(v, at);
        } catch (err) {
          addConfigError(policy, binding, new Error(`failed to convert object version: ${(err as Error).message}`));
          continue;
        }
      }
      // The namespace object: none for cluster-scoped requests and for Namespaces themselves.
      const isNamespaceKind = v.kind.group === '' && v.kind.version === 'v1' && v.kind.kind === 'Namespace';
      let namespace: KubeObject | undefined;
      if (!isNamespaceKind && v.namespace) {
        namespace = await namespaceOf(deps, v);
        if (!namespace) throw notFound({ group: '', resource: 'namespaces' }, v.namespace);
      }
      authz ??= new RequestAuthorizer(a.user, deps.authorizer?.());
      const compiled = hook.compiled();
      const request = celRequest(v, at);
      const requestResourceAuthorizer = new CelResourceCheck(authz.cel, { group: v.gvr.group, resource: v.gvr.resource, subresource: a.subresource, namespace: v.namespace, name: a.name });
      const spec = {
        failurePolicy: policy.spec?.failurePolicy ?? 'Fail',
        validations: policy.spec?.validations ?? [],
        auditAnnotations: policy.spec?.auditAnnotations ?? [],
      };
      const results: ValidateResult[] = [];
      for (const param of params) {
        const base: PolicyInput = {
          object: (objects.object ?? null) as Record<string, unknown> | null,
          oldObject: (objects.oldObject ?? null) as Record<string, unknown> | null,
          request,
          params: param as Record<string, unknown> | null,
          namespaceObject: celNamespace(namespace),
        };
        const inputs = {
          withAuthorizer: { ...base, authorizer: authz.cel, requestResourceAuthorizer },
          withoutAuthorizer: base,
          forAuditAnnotations: { ...base, namespaceObject: (namespace ?? null) as Record<string, unknown> | null },
        };
        let result = validate(compiled, spec, inputs);
        for (let round = 0; authz.hasPending() && round < maxAuthorizerRounds; round++) {
          await authz.resolvePending();
          result = validate(compiled, spec, inputs);
        }
        results.push(result);
      }

      for (const result of results) {
        result.decisions.forEach((decision: PolicyDecision, i) => {
          if (decision.action !== 'deny') return;
          for (const action of binding.spec?.validationActions ?? []) {
            switch (action) {
              case 'Deny':
                denied.push({ policy: policyName, binding: bindingName, message: decision.message, reason: decision.reason });
                break;
              case 'Audit':
                addAnnotation(
                  deps,
                  a,
                  validationFailureAnnotation,
                  stringifyAsGo([{ message: decision.message, policy: binding.spec?.policyName ?? '', binding: bindingName, expressionIndex: i, validationActions: binding.spec?.validationActions ?? [] }]),
                );
                break;
              case 'Warn':
                a.request?.warn?.(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${decision.message}`);
                break;
            }
          }
        });
        for (const ann of result.auditAnnotations) {
          switch (ann.action) {
            case 'publish':
              collector.add(ann.key, ann.value.length > maxAuditAnnotationValueLength ? ann.value.slice(0, maxAuditAnnotationValueLength) : ann.value);
              break;
            case 'error':
              // Under failurePolicy Fail an audit annotation that cannot be computed refuses the request.
              denied.push({ policy: policyName, binding: bindingName, message: ann.error, reason: '' });
              break;
            case 'exclude':
              break;
          }
        }
      }
    }
    collector.publish(deps, policyName, a);
  }

  const first = denied[0];
  if (first) throw denialError(a, first);
}
