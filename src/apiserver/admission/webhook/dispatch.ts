/**
 * What mutating and validating webhook dispatch share (apiserver
 * admission/plugin/webhook/generic/webhook.go ShouldCallHook and the
 * dispatchers' callHook): whether a webhook applies to a request
 * (namespaceSelector, objectSelector, rules with matchPolicy Equivalent,
 * matchConditions), the versioned view it is called with, and one call with
 * its answer checked.
 */
import { randomUUID } from 'node:crypto';
import type { LabelSelectorValue } from '../../../api/labels.js';
import type { MutatingWebhook } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject, Status } from '../../../api/types.js';
import { apiVersionOf } from '../../../api/types.js';
import type { Logger } from '../../../util/log/logger.js';
import type { AdmissionAttributes, ObjectReader } from '../admission.js';
import type { ResourceTable, ServedResource } from '../../resources.js';
import { forbidden, internalError, StatusError } from '../../status.js';
import { newStatus } from '../../../client/errors.js';
import { newAdmissionReview, reviewVersionFor, verifyAdmissionResponse, InvalidReviewError, ReviewDecodeError, type AdmissionResponse, type GroupVersionKind, type GroupVersionResource, type ReviewTarget } from './admission-review.js';
import { CallingWebhookError, dryRunUnsupported, webhookRejection } from './errors.js';
import { ruleMatches, type RuleTarget, type RuleWithOperations } from './rules.js';
import type { WebhookAccessor } from './webhook-source.js';
import { WebhookCallError, type WebhookClient } from './webhook-client.js';
import { convertObject, equivalentResources, gvrOf, kindFor, requestObjects } from './versions.js';

export interface DispatchDeps {
  client: WebhookClient;
  resources: ResourceTable;
  /** Namespaces, for namespaceSelector. */
  reader: ObjectReader;
  logger: Logger;
  newUid?: () => string;
}

/** Which webhook is called for which resource and kind (the request's own, or an equivalent one). */
export interface Invocation {
  webhook: WebhookAccessor;
  resource: ServedResource;
  gvr: GroupVersionResource;
  kind: GroupVersionKind;
  subresource: string;
}

/** The request's own coordinates, computed once per dispatch. */
export interface RequestView {
  a: AdmissionAttributes;
  gvr: GroupVersionResource;
  kind: GroupVersionKind;
  /** The namespace as upstream's request info has it: a Namespace's own name for requests on it. */
  namespace: string;
}

export function requestView(a: AdmissionAttributes): RequestView {
  const r = a.resource;
  const kind = kindFor(r, a.subresource) ?? { group: r.group, version: r.version, kind: r.kind };
  const isNamespace = r.group === '' && r.resource === 'namespaces';
  const namespace = isNamespace && a.operation !== 'CREATE' ? a.name : a.namespace;
  return { a, gvr: gvrOf(r), kind, namespace };
}

function ruleTarget(v: RequestView, gvr: GroupVersionResource): RuleTarget {
  return { operation: v.a.operation, group: gvr.group, version: gvr.version, resource: gvr.resource, subresource: v.a.subresource, namespace: v.namespace };
}

/**
 * MatchNamespaceSelector (shared by webhooks and admission policies): true,
 * false, or the error that fails the request if the rules match.
 */
export async function matchNamespaceSelector(reader: ObjectReader, sel: LabelSelectorValue | Error, v: RequestView): Promise<boolean | StatusError> {
  const a = v.a;
  const isNamespaces = a.resource.group === '' && a.resource.resource === 'namespaces';
  if (!v.namespace && !isNamespaces) return true;
  if (sel instanceof Error) return internalError(sel);
  if (sel.empty()) return true;
  let labels: Record<string, string> | undefined;
  if (isNamespaces && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) {
    labels = a.object?.metadata?.labels;
  } else {
    const ns = await reader.get('', 'namespaces', '', v.namespace);
    if (!ns) return new StatusError(newStatus(404, 'NotFound', `namespaces ${JSON.stringify(v.namespace)} not found`, { name: v.namespace, kind: 'namespaces' }));
    labels = ns.metadata?.labels;
  }
  return sel.matches(labels ?? {});
}

/** MatchObjectSelector (shared by webhooks and admission policies): the new or the old object's labels. */
export function matchObjectSelector(sel: LabelSelectorValue | Error, v: RequestView): boolean | StatusError {
  if (sel instanceof Error) return internalError(sel);
  if (sel.empty()) return true;
  const { object, oldObject } = requestObjects(v.a);
  const m = (o: KubeObject | undefined) => !!o && sel.matches(o.metadata?.labels ?? {});
  return m(object) || m(oldObject);
}

/** ShouldCallHook without matchConditions: the invocation, undefined when the webhook does not apply. Throws what fails the request. */
export async function invocationFor(deps: DispatchDeps, w: WebhookAccessor, v: RequestView): Promise<Invocation | undefined> {
  const ns = await matchNamespaceSelector(deps.reader, w.namespaceSelector(), v);
  if (ns === false) return undefined;
  const obj = matchObjectSelector(w.objectSelector(), v);
  if (obj === false) return undefined;
  const rules = (w.hook.rules ?? []) as RuleWithOperations[];
  let inv: Invocation | undefined;
  const own = v.a.resource;
  if (rules.some((r) => ruleMatches(r, ruleTarget(v, v.gvr)))) {
    inv = { webhook: w, resource: own, gvr: v.gvr, kind: v.kind, subresource: v.a.subresource };
  } else if ((w.hook.matchPolicy ?? 'Equivalent') === 'Equivalent') {
    const equivalents = equivalentResources(deps.resources, own).filter((e) => !(e.group === own.group && e.version === own.version && e.resource === own.resource));
    outer: for (const rule of rules) {
      for (const e of equivalents) {
        const gvr = gvrOf(e);
        if (!ruleMatches(rule, ruleTarget(v, gvr))) continue;
        const kind = kindFor(e, v.a.subresource);
        if (!kind) throw internalError(new Error(`unable to convert to ${gvr.group}/${gvr.version}, Resource=${gvr.resource}: unknown kind`));
        inv = { webhook: w, resource: e, gvr, kind, subresource: v.a.subresource };
        break outer;
      }
    }
  }
  if (!inv) return undefined;
  if (ns instanceof StatusError) throw ns;
  if (obj instanceof StatusError) throw obj;
  return inv;
}

/** The objects of the request at the invocation's version (converted for an equivalent resource). */
export interface VersionedObjects {
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

export async function versionedObjects(v: RequestView, inv: Invocation): Promise<VersionedObjects> {
  const { object, oldObject } = requestObjects(v.a);
  const own = v.a.resource;
  if (inv.resource === own || v.a.subresource === 'scale') return { object, oldObject };
  try {
    return {
      object: object ? await convertObject(own, inv.resource, object) : undefined,
      oldObject: oldObject ? await convertObject(own, inv.resource, oldObject) : undefined,
    };
  } catch (err) {
    throw err instanceof StatusError && err.code === 500 ? err : internalError(err);
  }
}

function defaultOptions(op: string): Record<string, unknown> {
  const kind = op === 'CREATE' ? 'CreateOptions' : op === 'UPDATE' ? 'UpdateOptions' : op === 'DELETE' ? 'DeleteOptions' : 'ConnectOptions';
  return { kind, apiVersion: 'meta.k8s.io/v1' };
}

/** The AdmissionRequest parts of an invocation (before the version is chosen). */
export function reviewTarget(v: RequestView, inv: Invocation, objs: VersionedObjects): ReviewTarget {
  const a = v.a;
  return {
    kind: inv.kind,
    resource: inv.gvr,
    subResource: inv.subresource,
    requestKind: v.kind,
    requestResource: v.gvr,
    requestSubResource: a.subresource,
    name: a.name,
    namespace: v.namespace,
    operation: a.operation,
    user: a.user,
    object: objs.object,
    oldObject: objs.oldObject,
    dryRun: a.dryRun,
    options: a.request?.options ?? defaultOptions(a.operation),
  };
}

/** matchConditions: true to call, false to skip; a failed evaluation is 403 (failing closed). */
export async function matchConditionsAllow(v: RequestView, inv: Invocation, objs: VersionedObjects): Promise<boolean> {
  const conds = inv.webhook.hook.matchConditions ?? [];
  if (conds.length === 0) return true;
  const review = newAdmissionReview('v1', '', reviewTarget(v, inv, objs));
  const { object: _o, oldObject: _oo, ...request } = review.request as Record<string, unknown>;
  const result = await inv.webhook.matchConditions().evaluate({ object: objs.object ?? null, oldObject: objs.oldObject ?? null, request, user: v.a.user });
  if ('error' in result) {
    const r = v.a.resource;
    throw forbidden({ group: r.group, resource: r.resource }, v.a.name, result.error);
  }
  return result.matches;
}

/**
 * Calls one webhook and checks its answer (callHook / callAttrMutatingHook
 * up to the patch). Rejects with CallingWebhookError (failurePolicy
 * applies), a rejection StatusError, or another StatusError (dry run).
 */
export async function callWebhook(deps: DispatchDeps, v: RequestView, inv: Invocation, objs: VersionedObjects, mutating: boolean): Promise<AdmissionResponse> {
  const hook = inv.webhook.hook as MutatingWebhook;
  const name = inv.webhook.name;
  if (v.a.dryRun) {
    if (!hook.sideEffects) throw new CallingWebhookError(name, 'Webhook SideEffects is nil');
    if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw dryRunUnsupported(name);
  }
  const version = reviewVersionFor(hook.admissionReviewVersions);
  if (!version) throw new CallingWebhookError(name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)');
  const uid = (deps.newUid ?? randomUUID)();
  const review = newAdmissionReview(version, uid, reviewTarget(v, inv, objs));
  let body: unknown;
  try {
    body = (await deps.client.post(hook.clientConfig ?? {}, review, { timeoutMs: (hook.timeoutSeconds ?? 10) * 1000 })).body;
  } catch (err) {
    if (err instanceof WebhookCallError) throw new CallingWebhookError(name, `failed to call webhook: ${err.message}`);
    throw err;
  }
  let result: AdmissionResponse;
  try {
    result = verifyAdmissionResponse(version, uid, mutating, body);
  } catch (err) {
    if (err instanceof ReviewDecodeError) throw new CallingWebhookError(name, `failed to call webhook: ${err.message}`);
    if (err instanceof InvalidReviewError) throw new CallingWebhookError(name, `received invalid webhook response: ${err.message}`);
    throw err;
  }
  for (const [k, val] of Object.entries(result.auditAnnotations)) {
    const key = `${hook.name}/${k}`;
    const ann = v.a.request?.annotations;
    if (ann && !(key in ann)) ann[key] = val;
    else if (ann && ann[key] !== val) deps.logger.warn({ key, webhook: name }, 'admission webhook audit annotation already set; ignored');
  }
  for (const w of result.warnings) v.a.request?.warn?.(w);
  if (!result.allowed) throw webhookRejection(name, result.result as Status | undefined);
  return result;
}

/** The apiVersion/kind an object of an invocation carries. */
export function versionedTypeMeta(inv: Invocation): { apiVersion: string; kind: string } {
  return { apiVersion: apiVersionOf(inv.kind.group, inv.kind.version), kind: inv.kind.kind };
}
