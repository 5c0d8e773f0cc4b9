/**
 * Object-metadata and shared field validation, as apimachinery's
 * api/validation (ValidateObjectMeta, ValidateObjectMetaUpdate) and the
 * label-selector checks of metav1/validation. Every function returns
 * FieldError[] worded as Kubernetes words them; none mutates its input.
 */
import type { KubeObject } from '../../api/types.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { deepEqual } from '../../api/equality.js';
import {
  type FieldError,
  invalid,
  required,
  forbidden,
  notSupported,
  isDNS1123Label,
  isDNS1035Label,
  validateLabels,
  validateAnnotations,
  isDNS1123Subdomain,
  isQualifiedName,
  validatePathSegmentName,
} from '../../api/validation.js';

export { deepEqual };

export type { FieldError };
export { validateLabels, validateAnnotations };

/** How object names of a kind are checked. */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

/** Kubernetes' messages for a bad name (prefix: generateName, trailing dash allowed). */
export function nameMessages(rule: NameRule, name: string, prefix = false): string[] {
  const n = prefix && rule !== 'path' ? maskTrailingDash(name) : name;
  switch (rule) {
    case 'subdomain':
      return isDNS1123Subdomain(n);
    case 'label':
      return isDNS1123Label(n);
    case 'dns1035':
      return isDNS1035Label(n);
    case 'path':
      return validatePathSegmentName(n, prefix);
  }
}

function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? name.slice(0, -2) + 'a' : name;
}

export const immutableMessage = 'field is immutable';
export const negativeMessage = 'must be greater than or equal to 0';

/** apimachinery ValidateObjectMeta, plus the common checks of rest.BeforeCreate. */
export function validateObjectMeta(obj: KubeObject, namespaced: boolean, rule: NameRule): FieldError[] {
  const errs: FieldError[] = [];
  const meta = obj.metadata ?? {};
  if (meta.generateName && !meta.name) {
    for (const m of nameMessages(rule, meta.generateName, true)) errs.push(invalid('metadata.generateName', meta.generateName, m));
  }
  if (!meta.name) {
    errs.push(required('metadata.name', 'name or generateName is required'));
  } else {
    for (const m of nameMessages(rule, meta.name)) errs.push(invalid('metadata.name', meta.name, m));
  }
  if (namespaced) {
    if (!meta.namespace) errs.push(required('metadata.namespace', ''));
    else for (const m of isDNS1123Label(meta.namespace)) errs.push(invalid('metadata.namespace', meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(forbidden('metadata.namespace', 'not allowed on this type'));
  }
  if (meta.generation !== undefined && meta.generation < 0) errs.push(invalid('metadata.generation', meta.generation, negativeMessage));
  errs.push(...validateLabels(meta.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  errs.push(...validateOwnerReferences(meta.ownerReferences ?? [], 'metadata.ownerReferences'));
  for (const [i, f] of (meta.finalizers ?? []).entries()) {
    for (const m of isQualifiedName(f)) errs.push(invalid(`metadata.finalizers[${i}]`, f, m));
  }
  return errs;
}

/** apimachinery ValidateObjectMetaUpdate: identity fields may not change. */
export function validateObjectMetaUpdate(newObj: KubeObject, oldObj: KubeObject, namespaced: boolean, rule: NameRule): FieldError[] {
  const errs = validateObjectMeta(newObj, namespaced, rule);
  const n = newObj.metadata ?? {};
  const o = oldObj.metadata ?? {};
  errs.push(...immutable(n.name, o.name, 'metadata.name'));
  errs.push(...immutable(n.namespace, o.namespace, 'metadata.namespace'));
  errs.push(...immutable(n.uid, o.uid, 'metadata.uid'));
  errs.push(...immutable(n.creationTimestamp, o.creationTimestamp, 'metadata.creationTimestamp'));
  if (o.deletionTimestamp !== undefined) errs.push(...immutable(n.deletionTimestamp, o.deletionTimestamp, 'metadata.deletionTimestamp'));
  if (o.deletionGracePeriodSeconds !== undefined && n.deletionGracePeriodSeconds !== undefined) {
    errs.push(...immutable(n.deletionGracePeriodSeconds, o.deletionGracePeriodSeconds, 'metadata.deletionGracePeriodSeconds'));
  }
  return errs;
}

function validateOwnerReferences(refs: NonNullable<KubeObject['metadata']>['ownerReferences'] & object, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const controllers: string[] = [];
  for (const [i, r] of refs.entries()) {
    const p = `${path}[${i}]`;
    if (!r.apiVersion) errs.push(invalid(`${p}.apiVersion`, r.apiVersion ?? '', 'version must not be empty'));
    if (!r.kind) errs.push(invalid(`${p}.kind`, r.kind ?? '', 'kind must not be empty'));
    if (!r.name) errs.push(invalid(`${p}.name`, r.name ?? '', 'name must not be empty'));
    if (!r.uid) errs.push(invalid(`${p}.uid`, r.uid ?? '', 'uid must not be empty'));
    if (r.controller) controllers.push(`${r.kind}/${r.name}`);
  }
  if (controllers.length > 1) {
    errs.push(invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`));
  }
  return errs;
}

/** ValidateImmutableField: one error when the values differ (deep). */
export function immutable(newVal: unknown, oldVal: unknown, path: string): FieldError[] {
  return deepEqual(newVal, oldVal) ? [] : [invalid(path, newVal, immutableMessage)];
}

/** ValidateNonnegativeField. */
export function nonNegative(value: number | undefined, path: string): FieldError[] {
  return value !== undefined && value < 0 ? [invalid(path, value, negativeMessage)] : [];
}

/** One of a fixed set of values (`Unsupported value: "x": supported values: "a", "b"`). */
export function oneOf(value: string | undefined, allowed: readonly string[], path: string, isRequired = true): FieldError[] {
  if (value === undefined || value === '') return isRequired ? [required(path, '')] : [];
  return allowed.includes(value) ? [] : [notSupported(path, value, [...allowed])];
}

/** metav1 ValidateLabelSelector: keys, values and operators. */
export function validateLabelSelector(sel: LabelSelector | undefined, path: string): FieldError[] {
  if (!sel) return [];
  const errs: FieldError[] = [...validateLabels(sel.matchLabels, `${path}.matchLabels`)];
  for (const [i, r] of (sel.matchExpressions ?? []).entries()) {
    const p = `${path}.matchExpressions[${i}]`;
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (!r.values?.length) errs.push(required(`${p}.values`, 'must be specified when `operator` is \'In\' or \'NotIn\''));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (r.values?.length) errs.push(forbidden(`${p}.values`, 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''));
        break;
      default:
        errs.push(invalid(`${p}.operator`, r.operator, 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(r.key)) errs.push(invalid(`${p}.key`, r.key, m));
  }
  return errs;
}

/** Go's `%#v` of a metav1.LabelSelector, as immutable-selector messages print it. */
export function goLabelSelector(sel: LabelSelector | undefined): string {
  if (!sel) return '(*v1.LabelSelector)(nil)';
  const ml = sel.matchLabels ? goStringMap(sel.matchLabels) : 'map[string]string(nil)';
  const exprs = sel.matchExpressions?.length
    ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions
        .map((r) => `v1.LabelSelectorRequirement{Key:${JSON.stringify(r.key)}, Operator:${JSON.stringify(r.operator)}, Values:${r.values ? `[]string{${r.values.map((v) => JSON.stringify(v)).join(', ')}}` : '[]string(nil)'}}`)
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${exprs}}`;
}

/** Go's `%#v` of a map[string]string, as Kubernetes prints it in messages. */
export function goStringMap(m: Record<string, string> | undefined): string {
  const keys = Object.keys(m ?? {}).sort();
  return `map[string]string{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(m![k])}`).join(', ')}}`;
}
