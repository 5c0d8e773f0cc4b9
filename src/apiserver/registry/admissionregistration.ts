/**
 * Validation of admissionregistration.k8s.io/v1 objects as
 * pkg/apis/admissionregistration/validation/validation.go words it:
 * webhook configurations (names, rules, policies, side effects, timeouts,
 * selectors, clientConfig, admissionReviewVersions, matchConditions), and
 * ValidatingAdmissionPolicy / ValidatingAdmissionPolicyBinding (stored
 * objects here; their CEL is compiled when an engine is installed).
 *
 * Updates relax what the old object already broke (ratcheting), as
 * upstream's Validate*Update do: an old configuration with side effects
 * Unknown may keep them, and so on.
 */
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { KubeObject } from '../../api/types.js';
import {
  type FieldError,
  GoLiteral,
  duplicate,
  forbidden,
  goQuote,
  invalid,
  isDNS1035Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  notSupported,
  required,
  tooMany,
  validatePathSegmentName,
} from '../../api/validation.js';
import { validateLabelSelector } from './meta-validation.js';
import { validateWebhookService, validateWebhookURL } from '../admission/webhook/client-config-validation.js';
import { matchConditionEngine } from '../admission/webhook/match-conditions.js';
import { validatePolicyExpressions } from '../admission/policy/validation.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const supportedFailurePolicies = ['Fail', 'Ignore'];
const supportedMatchPolicies = ['Equivalent', 'Exact'];
const supportedSideEffectClasses = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const noSideEffectClasses = ['None', 'NoneOnDryRun'];
const supportedOperations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const supportedReinvocationPolicies = ['IfNeeded', 'Never'];
const validScopes = ['*', 'Cluster', 'Namespaced'];
const acceptedAdmissionReviewVersions = ['v1', 'v1beta1'];
const supportedValidationPolicyReason = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const validValidationActions = ['Audit', 'Deny', 'Warn'];

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => list(v).map((x) => (typeof x === 'string' ? x : String(x)));
const goStrings = (type: string, v: string[]) => new GoLiteral(`[]${type}{${v.map(goQuote).join(', ')}}`);

/** IsFullyQualifiedName: a DNS subdomain with at least two dots. */
function validateFullyQualifiedName(path: string, name: string | undefined): FieldError[] {
  if (!name) return [required(path, '')];
  const errs = isDNS1123Subdomain(name);
  if (errs.length) return [invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** ValidateLabelSelector without AllowInvalidLabelValueInSelector: values of In/NotIn are label values. */
function validateSelector(sel: LabelSelector | undefined, path: string, allowInvalidValues: boolean): FieldError[] {
  const errs = validateLabelSelector(sel, path);
  if (!sel || allowInvalidValues) return errs;
  (sel.matchExpressions ?? []).forEach((r, i) => {
    (r.values ?? []).forEach((v, j) => {
      const msgs = isValidLabelValue(v);
      if (msgs.length) errs.push(invalid(`${path}.matchExpressions[${i}].values[${j}]`, v, msgs.join('; ')));
    });
  });
  return errs;
}

function hasWildcard(v: string[]): boolean {
  return v.includes('*');
}

/** validateResources: resources with subresources (`pods/status`, `*\/*`). */
function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(required(path, ''));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(required(`${path}[${i}]`, ''));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(invalid(`${path}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(invalid(`${path}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(invalid(path, goStrings('string', resources), "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub) errs.push(invalid(path, goStrings('string', resources), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** validateRuleWithOperations (rules of webhooks and policies). */
export function validateRuleWithOperations(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strs(rule.operations);
  if (ops.length === 0) errs.push(required(`${path}.operations`, ''));
  if (ops.length > 1 && hasWildcard(ops)) errs.push(invalid(`${path}.operations`, goStrings('admissionregistration.OperationType', ops), "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!supportedOperations.includes(op)) errs.push(notSupported(`${path}.operations[${i}]`, op, supportedOperations));
  });
  const groups = strs(rule.apiGroups);
  if (groups.length === 0) errs.push(required(`${path}.apiGroups`, ''));
  if (groups.length > 1 && hasWildcard(groups)) errs.push(invalid(`${path}.apiGroups`, goStrings('string', groups), "if '*' is present, must not specify other API groups"));
  const versions = strs(rule.apiVersions);
  if (versions.length === 0) errs.push(required(`${path}.apiVersions`, ''));
  if (versions.length > 1 && hasWildcard(versions)) errs.push(invalid(`${path}.apiVersions`, goStrings('string', versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(`${path}.apiVersions[${i}]`, ''));
  });
  errs.push(...validateResources(strs(rule.resources), `${path}.resources`));
  if (rule.scope !== undefined && rule.scope !== null && !validScopes.includes(rule.scope)) errs.push(notSupported(`${path}.scope`, rule.scope, validScopes));
  return errs;
}

function validateAdmissionReviewVersions(versions: string[], requireRecognized: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (versions.length < 1) return [required(path, `must specify one of ${acceptedAdmissionReviewVersions.join(', ')}`)];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(invalid(`${path}[${i}]`, v, m));
    if (acceptedAdmissionReviewVersions.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted) errs.push(invalid(path, goStrings('string', versions), `must include at least one of ${acceptedAdmissionReviewVersions.join(', ')}`));
  return errs;
}

interface WebhookValidationOptions {
  ignoreMatchConditions: boolean;
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
  allowParamsInMatchConditions?: boolean;
}

const strictOptions: WebhookValidationOptions = {
  ignoreMatchConditions: false,
  requireNoSideEffects: true,
  requireRecognizedAdmissionReviewVersion: true,
  requireUniqueWebhookNames: true,
  allowInvalidLabelValueInSelector: false,
};

/** The clientConfig of a webhook: exactly one of url and service. */
export function validateClientConfig(cc: Obj | undefined, path: string): FieldError[] {
  const c = cc ?? {};
  const hasUrl = c.url !== undefined && c.url !== null;
  const hasService = c.service !== undefined && c.service !== null;
  if (hasUrl === hasService) return [required(path, 'exactly one of url or service is required')];
  if (hasUrl) return validateWebhookURL(`${path}.url`, String(c.url), true);
  const s = c.service as Obj;
  // Upstream passes name and namespace swapped (kubernetes#141353): a missing name is reported at .namespace.
  return validateWebhookService(`${path}.service`, s.name, s.namespace, s.path, s.port);
}

function validateMatchConditions(conds: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const items = list(conds) as Obj[];
  if (items.length > 64) errs.push(tooMany(path, items.length, 64));
  const names = new Set<string>();
  items.forEach((mc, i) => {
    const p = `${path}[${i}]`;
    const expr = typeof mc?.expression === 'string' ? mc.expression.trim() : '';
    if (!expr) errs.push(required(`${p}.expression`, ''));
    else {
      const err = matchConditionEngine()?.check(expr);
      if (err) errs.push(celError(`${p}.expression`, expr, err));
    }
    const name = typeof mc?.name === 'string' ? mc.name : '';
    if (!name) errs.push(required(`${p}.name`, ''));
    else for (const m of isQualifiedName(name)) errs.push(invalid(`${p}.name`, name, m));
    if (name) {
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      else names.add(name);
    }
  });
  return errs;
}

function celError(path: string, expression: string, err: { type: string; detail: string }): FieldError {
  switch (err.type) {
    case 'Required':
      return required(path, err.detail);
    case 'Invalid':
      return invalid(path, expression, err.detail);
    default:
      return { type: 'InternalError', field: path, detail: err.detail, message: `${path}: Internal error: ${err.detail}` };
  }
}

function validateWebhook(hook: Obj, mutating: boolean, opts: WebhookValidationOptions, path: string): FieldError[] {
  const errs: FieldError[] = [...validateFullyQualifiedName(`${path}.name`, hook.name)];
  list(hook.rules).forEach((r, i) => errs.push(...validateRuleWithOperations((r ?? {}) as Obj, `${path}.rules[${i}]`)));
  if (hook.failurePolicy != null && !supportedFailurePolicies.includes(hook.failurePolicy)) errs.push(notSupported(`${path}.failurePolicy`, hook.failurePolicy, supportedFailurePolicies));
  if (hook.matchPolicy != null && !supportedMatchPolicies.includes(hook.matchPolicy)) errs.push(notSupported(`${path}.matchPolicy`, hook.matchPolicy, supportedMatchPolicies));
  const allowedSideEffects = opts.requireNoSideEffects ? noSideEffectClasses : supportedSideEffectClasses;
  if (hook.sideEffects == null) errs.push(required(`${path}.sideEffects`, `must specify one of ${allowedSideEffects.join(', ')}`));
  else if (!allowedSideEffects.includes(hook.sideEffects)) errs.push(notSupported(`${path}.sideEffects`, hook.sideEffects, allowedSideEffects));
  if (hook.timeoutSeconds != null && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) errs.push(invalid(`${path}.timeoutSeconds`, hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  if (hook.namespaceSelector != null) errs.push(...validateSelector(hook.namespaceSelector, `${path}.namespaceSelector`, opts.allowInvalidLabelValueInSelector));
  if (hook.objectSelector != null) errs.push(...validateSelector(hook.objectSelector, `${path}.objectSelector`, opts.allowInvalidLabelValueInSelector));
  if (mutating && hook.reinvocationPolicy != null && !supportedReinvocationPolicies.includes(hook.reinvocationPolicy)) {
    errs.push(notSupported(`${path}.reinvocationPolicy`, hook.reinvocationPolicy, supportedReinvocationPolicies));
  }
  errs.push(...validateClientConfig(hook.clientConfig, `${path}.clientConfig`));
  if (!opts.ignoreMatchConditions) errs.push(...validateMatchConditions(hook.matchConditions, `${path}.matchConditions`));
  return errs;
}

function validateWebhooks(obj: KubeObject, mutating: boolean, opts: WebhookValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  list((obj as Obj).webhooks).forEach((h, i) => {
    const hook = (h ?? {}) as Obj;
    const p = `webhooks[${i}]`;
    errs.push(...validateWebhook(hook, mutating, opts, p));
    errs.push(...validateAdmissionReviewVersions(strs(hook.admissionReviewVersions), opts.requireRecognizedAdmissionReviewVersion, `${p}.admissionReviewVersions`));
    if (opts.requireUniqueWebhookNames && hook.name) {
      if (names.has(hook.name)) errs.push(duplicate(`${p}.name`, hook.name));
      else names.add(hook.name);
    }
  });
  return errs;
}

/** ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration (metadata is checked generically). */
export function validateWebhookConfiguration(obj: KubeObject, mutating: boolean): FieldError[] {
  return validateWebhooks(obj, mutating, strictOptions);
}

/** The *Update variants: what the old configuration already did stays allowed. */
export function validateWebhookConfigurationUpdate(obj: KubeObject, old: KubeObject, mutating: boolean): FieldError[] {
  const oldHooks = list((old as Obj).webhooks) as Obj[];
  const newHooks = list((obj as Obj).webhooks) as Obj[];
  const names = oldHooks.map((h) => h?.name);
  const selectorsValid = oldHooks.every(
    (h) =>
      (h?.namespaceSelector == null || validateSelector(h.namespaceSelector, 'x', false).length === 0) &&
      (h?.objectSelector == null || validateSelector(h.objectSelector, 'x', false).length === 0),
  );
  const sameConditions = newHooks.length === oldHooks.length && oldHooks.every((h, i) => JSON.stringify(h?.matchConditions ?? null) === JSON.stringify(newHooks[i]?.matchConditions ?? null));
  return validateWebhooks(obj, mutating, {
    ignoreMatchConditions: sameConditions,
    requireNoSideEffects: oldHooks.every((h) => h?.sideEffects != null && noSideEffectClasses.includes(h.sideEffects)),
    requireRecognizedAdmissionReviewVersion: oldHooks.every((h) => {
      const v = strs(h?.admissionReviewVersions);
      return v.length === 0 || v.some((x) => acceptedAdmissionReviewVersions.includes(x));
    }),
    requireUniqueWebhookNames: new Set(names).size === names.length,
    allowInvalidLabelValueInSelector: !selectorsValid,
  });
}

// ---------------------------------------------------------------------------
// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
// ---------------------------------------------------------------------------

function parseGroupVersion(gv: string): { group: string; version: string } {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  throw new Error(`unexpected GroupVersion string: ${gv}`);
}

function validateParamKind(pk: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = typeof pk.apiVersion === 'string' ? pk.apiVersion : '';
  if (!apiVersion) errs.push(required(`${path}.apiVersion`, ''));
  else {
    let gv;
    try {
      gv = parseGroupVersion(apiVersion);
    } catch (err) {
      errs.push(invalid(`${path}.apiVersion`, apiVersion, (err as Error).message));
    }
    if (gv) {
      if (gv.group) {
        const e = isDNS1123Subdomain(gv.group);
        if (e.length) errs.push(invalid(`${path}.apiVersion`, gv.group, e.join(',')));
      }
      if (!gv.version) errs.push(invalid(`${path}.apiVersion`, apiVersion, 'version must be specified'));
      else {
        const e = isDNS1035Label(gv.version);
        if (e.length) errs.push(invalid(`${path}.apiVersion`, gv.version, e.join(',')));
      }
    }
  }
  const kind = typeof pk.kind === 'string' ? pk.kind : '';
  if (!kind) errs.push(required(`${path}.kind`, ''));
  else {
    const e = isDNS1035Label(kind.toLowerCase());
    if (e.length) errs.push(invalid(`${path}.kind`, kind, `may have mixed case, but should otherwise match: ${e.join(',')}`));
  }
  return errs;
}

function validateNamedRule(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  strs(rule.resourceNames).forEach((n, i) => {
    for (const m of validatePathSegmentName(n, false)) errs.push(invalid(`${path}.resourceNames[${i}]`, n, m));
    if (names.has(n)) errs.push(duplicate(`${path}.resourceNames[${i}]`, n));
    else names.add(n);
  });
  return [...errs, ...validateRuleWithOperations(rule, path)];
}

function validateMatchResources(mc: Obj | undefined, path: string): FieldError[] {
  if (mc == null) return [];
  const errs: FieldError[] = [];
  if (mc.matchPolicy == null) errs.push(required(`${path}.matchPolicy`, ''));
  else if (!supportedMatchPolicies.includes(mc.matchPolicy)) errs.push(notSupported(`${path}.matchPolicy`, mc.matchPolicy, supportedMatchPolicies));
  if (mc.namespaceSelector == null) errs.push(required(`${path}.namespaceSelector`, ''));
  else errs.push(...validateSelector(mc.namespaceSelector, `${path}.namespaceSelector`, false));
  if (mc.objectSelector == null) errs.push(required(`${path}.objectSelector`, ''));
  else errs.push(...validateSelector(mc.objectSelector, `${path}.objectSelector`, false));
  list(mc.resourceRules).forEach((r, i) => errs.push(...validateNamedRule((r ?? {}) as Obj, `${path}.resourceRules[${i}]`)));
  list(mc.excludeResourceRules).forEach((r, i) => errs.push(...validateNamedRule((r ?? {}) as Obj, `${path}.excludeResourceRules[${i}]`)));
  return errs;
}

const celIdent = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const celReserved = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** ValidateValidatingAdmissionPolicy: the spec (CEL compiled only when an engine is installed). */
export function validateValidatingAdmissionPolicy(obj: KubeObject): FieldError[] {
  const spec = ((obj as Obj).spec ?? {}) as Obj;
  const errs: FieldError[] = [];
  const p = 'spec';
  if (spec.failurePolicy == null) errs.push(required(`${p}.failurePolicy`, ''));
  else if (!supportedFailurePolicies.includes(spec.failurePolicy)) errs.push(notSupported(`${p}.failurePolicy`, spec.failurePolicy, supportedFailurePolicies));
  if (spec.paramKind != null) errs.push(...validateParamKind(spec.paramKind, `${p}.paramKind`));
  if (spec.matchConstraints == null) errs.push(required(`${p}.matchConstraints`, ''));
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, `${p}.matchConstraints`));
    if (list(spec.matchConstraints.resourceRules).length === 0) errs.push(required(`${p}.matchConstraints.resourceRules`, ''));
  }
  errs.push(...validateMatchConditions(spec.matchConditions, `${p}.matchConditions`));
  list(spec.variables).forEach((v, i) => {
    const vp = `${p}.variables[${i}]`;
    const name = typeof (v as Obj)?.name === 'string' ? ((v as Obj).name as string) : '';
    if (!name.trim()) errs.push(required(`${vp}.name`, 'name is not specified'));
    else if (!celIdent.test(name) || celReserved.has(name)) errs.push(invalid(`${vp}.name`, name, 'name is not a valid CEL identifier'));
    const expr = typeof (v as Obj)?.expression === 'string' ? ((v as Obj).expression as string) : '';
    if (!expr.trim()) errs.push(required(`${vp}.expression`, 'expression is not specified'));
  });
  const validations = list(spec.validations) as Obj[];
  const audits = list(spec.auditAnnotations) as Obj[];
  if (validations.length === 0 && audits.length === 0) {
    errs.push(required(`${p}.validations`, 'validations or auditAnnotations must contain at least one item'));
    errs.push(required(`${p}.auditAnnotations`, 'validations or auditAnnotations must contain at least one item'));
    return errs;
  }
  validations.forEach((v, i) => {
    const vp = `${p}.validations[${i}]`;
    const expr = typeof v?.expression === 'string' ? v.expression : '';
    if (!expr.trim()) errs.push(required(`${vp}.expression`, 'expression is not specified'));
    const me = typeof v?.messageExpression === 'string' ? v.messageExpression : '';
    if (me.length > 0 && !me.trim()) errs.push(invalid(`${vp}.messageExpression`, me, 'must be non-empty if specified'));
    const msg = typeof v?.message === 'string' ? v.message : '';
    if (msg.length > 0 && !msg.trim()) errs.push(invalid(`${vp}.message`, msg, 'message must be non-empty if specified'));
    else if (/[\n\r]+/.test(msg.trim())) errs.push(invalid(`${vp}.message`, msg, 'message must not contain line breaks'));
    if (v?.reason != null && !supportedValidationPolicyReason.includes(v.reason)) errs.push(notSupported(`${vp}.reason`, v.reason, supportedValidationPolicyReason));
  });
  if (audits.length > 20) errs.push(invalid(`${p}.auditAnnotations`, audits, 'must not have more than 20 auditAnnotations'));
  const keys = new Set<string>();
  const name = obj.metadata?.name ?? '';
  audits.forEach((a, i) => {
    const ap = `${p}.auditAnnotations[${i}]`;
    const key = typeof a?.key === 'string' ? a.key : '';
    if (name) for (const m of isQualifiedName(`${name}/${key}`)) errs.push(invalid(`${ap}.key`, `${name}/${key}`, m));
    else errs.push(invalid(`${ap}.key`, key, 'requires metadata.name be non-empty'));
    const ve = typeof a?.valueExpression === 'string' ? a.valueExpression.trim() : '';
    if (!ve) errs.push(required(`${ap}.valueExpression`, 'valueExpression is not specified'));
    else if (ve.length > 5 * 1024) errs.push(required(`${ap}.valueExpression`, `must not exceed ${5 * 1024} bytes in length`));
    if (keys.has(key)) errs.push(duplicate(`${ap}.key`, key));
    keys.add(key);
  });
  // Every expression compiled in the policy's environment (fields already in error are not compiled again).
  const bad = new Set(errs.map((e) => e.field));
  for (const e of validatePolicyExpressions(obj as never)) if (!bad.has(e.field)) errs.push(celError(e.field, e.expression, e));
  return errs;
}

function validateParamRef(pr: Obj | undefined, path: string): FieldError[] {
  if (pr == null) return [];
  const errs: FieldError[] = [];
  const name = typeof pr.name === 'string' ? pr.name : '';
  if (name) {
    for (const m of validatePathSegmentName(name, false)) errs.push(invalid(`${path}.name`, name, m));
    if (pr.selector != null) errs.push(forbidden(`${path}.name`, 'name and selector are mutually exclusive'));
  }
  if (pr.selector != null) {
    errs.push(...validateSelector(pr.selector, `${path}.selector`, false));
    if (name) errs.push(forbidden(`${path}.selector`, 'name and selector are mutually exclusive'));
  }
  if (!name && pr.selector == null) errs.push(required(path, 'one of name or selector must be specified'));
  if (!pr.parameterNotFoundAction) errs.push(required(`${path}.parameterNotFoundAction`, ''));
  else if (pr.parameterNotFoundAction !== 'Deny' && pr.parameterNotFoundAction !== 'Allow') {
    errs.push(notSupported(`${path}.parameterNotFoundAction`, pr.parameterNotFoundAction, ['Deny', 'Allow']));
  }
  return errs;
}

/** ValidateValidatingAdmissionPolicyBinding: the spec. */
export function validateValidatingAdmissionPolicyBinding(obj: KubeObject): FieldError[] {
  const spec = ((obj as Obj).spec ?? {}) as Obj;
  const errs: FieldError[] = [];
  const policyName = typeof spec.policyName === 'string' ? spec.policyName : '';
  if (!policyName) errs.push(required('spec.policyName', ''));
  else for (const m of isDNS1123Subdomain(policyName)) errs.push(invalid('spec.policyName', policyName, m));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  // Upstream's path has this spelling.
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'));
  const actions = strs(spec.validationActions);
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!validValidationActions.includes(a)) errs.push(notSupported(`spec.validationActions[${i}]`, a, validValidationActions));
    if (seen.has(a)) errs.push(duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(invalid('spec.validationActions', goStrings('admissionregistration.ValidationAction', actions), 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  if (seen.size === 0) errs.push(required('spec.validationActions', 'at least one validation action is required'));
  return errs;
}
