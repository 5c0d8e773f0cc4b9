/**
 * Evaluation of x-kubernetes-validations rules on custom resources
 * (apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go
 * Validator), as kube-apiserver 1.33 does it: a tree parallel to the
 * structural schema holding the compiled rules of each node; every value
 * of the object is checked against its node's rules with `self` (and
 * `oldSelf` when the old object has a correlated value: map keys, map-list
 * entries with the same keys), within a cost budget for the whole object
 * (RuntimeCELCostBudget, 10,000,000) and a per-rule limit (PerCallLimit).
 *
 * Ratcheting (CRDValidationRatcheting, on by default): on update, a
 * failed rule that does not use oldSelf on a value equal to the old one
 * (or under an unchanged correlated ancestor) does not fail the request.
 *
 * Errors read as upstream's: `spec.x: Invalid value: "object": <message>`
 * (`<nil>` for the root), the value shown being the node's schema type.
 */
import { Optional } from '@marcbachmann/cel-js';
import { formatBadValue, GoLiteral, type FieldError, type FieldErrorType } from '../../../api/validation.js';
import type { FieldErrorLike } from '../../status.js';
import { isPlainObject, jsonEqual, type Schema } from '../../crd/schema.js';
import { maxEvaluatedMessageExpressionSizeBytes, perCallLimit, runtimeCelCostBudget, type Program } from '../env.js';
import type { Activation } from '../interpreter.js';
import { escapeName } from '../escaping.js';
import { schemaDeclType, type DeclType } from '../types.js';
import { toCel } from '../values.js';
import { compileRules, type RuleCompilation, type ValidationRule } from './compilation.js';
import { childPath, keyPath } from './field-path.js';

/** The root of a custom resource prints as a nil field.Path does. */
const nilPath = '<nil>';
const render = (path: string): string => path || nilPath;

function fieldError(type: FieldErrorType, path: string, body: string, detail: string): FieldError {
  return { type, field: render(path), message: `${render(path)}: ${body}`, detail };
}

/** field.Invalid(path, value, detail) with the value printed as upstream prints it. */
export function invalidAt(path: string, value: unknown, detail: string): FieldError {
  return fieldError('FieldValueInvalid', path, `Invalid value: ${formatBadValue(value)}: ${detail}`, detail);
}

function forReason(path: string, value: unknown, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return fieldError('FieldValueForbidden', path, `Forbidden: ${detail}`, detail);
    case 'FieldValueRequired':
      return fieldError('FieldValueRequired', path, `Required value: ${detail}`, detail);
    case 'FieldValueDuplicate':
      return fieldError('FieldValueDuplicate', path, `Duplicate value: ${formatBadValue(value)}`, '');
    default:
      return invalidAt(path, value, detail);
  }
}

const internalError = (path: string, detail: string): FieldError => fieldError('InternalError', path, `Internal error: ${detail}`, detail);

const ruleErrorString = (r: ValidationRule): string => (r.message ? r.message.trim() : (r.rule ?? '').trim());
const ruleMessageOrDefault = (r: ValidationRule): string => (r.message ? r.message.trim() : `failed rule: ${ruleErrorString(r)}`);

/**
 * The old value paired with a new one for ratcheting (common.CorrelatedObject):
 * map keys and map-list entries correlate; other list items do not.
 */
export class Correlation {
  #equal: boolean | undefined;
  readonly #children = new Map<string | number, Correlation | undefined>();
  constructor(
    readonly value: unknown,
    readonly oldValue: unknown,
    readonly schema: Schema | undefined,
  ) {}

  key(k: string): Correlation | undefined {
    if (this.#children.has(k)) return this.#children.get(k);
    let c: Correlation | undefined;
    if (this.schema && isPlainObject(this.value) && isPlainObject(this.oldValue) && k in this.value && k in this.oldValue) {
      const ap = this.schema.additionalProperties;
      const s = this.schema.properties?.[k] ?? (typeof ap === 'object' ? ap : undefined);
      if (s) c = new Correlation(this.value[k], this.oldValue[k], s);
    }
    this.#children.set(k, c);
    return c;
  }

  index(i: number): Correlation | undefined {
    if (this.#children.has(i)) return this.#children.get(i);
    let c: Correlation | undefined;
    if (this.schema?.items && Array.isArray(this.value) && Array.isArray(this.oldValue) && i < this.value.length && this.schema['x-kubernetes-list-type'] === 'map') {
      const old = mapListLookup(this.schema, this.oldValue, this.value[i]);
      if (old !== undefined) c = new Correlation(this.value[i], old, this.schema.items);
    }
    this.#children.set(i, c);
    return c;
  }

  /** CachedDeepEqual: the value equals the old one. */
  deepEqual(): boolean {
    if (this.#equal !== undefined) return this.#equal;
    this.#equal = this.#compute();
    return this.#equal;
  }

  #compute(): boolean {
    const v = this.value;
    const o = this.oldValue;
    if ((v === undefined || v === null) && (o === undefined || o === null)) return true;
    if (v === undefined || v === null || o === undefined || o === null) return false;
    if (Array.isArray(v) !== Array.isArray(o) || isPlainObject(v) !== isPlainObject(o)) return false;
    if (Array.isArray(v)) {
      const ol = o as unknown[];
      if (v.length !== ol.length) return false;
      for (let i = 0; i < v.length; i++) {
        const c = this.index(i);
        if (!c) return this.schema?.['x-kubernetes-list-type'] === 'map' ? false : jsonEqual(v, o);
        if (!c.deepEqual()) return false;
      }
      return true;
    }
    if (isPlainObject(v)) {
      const om = o as Record<string, unknown>;
      if (Object.keys(v).length !== Object.keys(om).length) return false;
      for (const k of Object.keys(v)) {
        const c = this.key(k);
        if (!c || !c.deepEqual()) return false;
      }
      return true;
    }
    return jsonEqual(v, o);
  }
}

/** The old entry of a map list with the same keys as `item` (keys default from the item schema). */
export function mapListLookup(s: Schema, oldItems: unknown[], item: unknown): unknown {
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (!keys.length || !isPlainObject(item)) return undefined;
  const keyOf = (x: Record<string, unknown>): string => JSON.stringify(keys.map((k) => x[k] ?? s.items?.properties?.[k]?.default ?? null));
  const want = keyOf(item);
  for (const o of oldItems) if (isPlainObject(o) && keyOf(o) === want) return o;
  return undefined;
}

/** Where a node stands for ratcheting: its own correlation, or the nearest correlated ancestor's. */
interface Ratchet {
  readonly current?: Correlation;
  readonly nearestParent?: Correlation;
}

const ratchetKey = (r: Ratchet, k: string): Ratchet => {
  if (!r.current) return r;
  if (!r.nearestParent && (k === 'apiVersion' || k === 'kind')) return {};
  return { current: r.current.key(k), nearestParent: r.current };
};
const ratchetIndex = (r: Ratchet, i: number): Ratchet => (r.current ? { current: r.current.index(i), nearestParent: r.current } : r);
const shouldRatchet = (r: Ratchet): boolean => (r.current ? r.current.deepEqual() : (r.nearestParent?.deepEqual() ?? false));

interface Budget {
  remaining: number;
}

/** The rules of a schema node and its descendants' validators (nil where nothing below has rules). */
export class Validator {
  items?: Validator;
  properties?: Map<string, Validator>;
  additionalProperties?: Validator;
  allOf: Validator[] = [];
  compiled: readonly RuleCompilation[] = [];
  rules: readonly ValidationRule[] = [];
  declType?: DeclType;
  compilationError?: string;

  constructor(
    readonly schema: Schema,
    readonly isResourceRoot: boolean,
  ) {}

  /**
   * Errors of the rules for `obj` (and `oldObj` on update), within the
   * cost budget. `ratcheting`: the root correlation of an update.
   */
  validate(path: string, obj: unknown, oldObj: unknown, ratchet: Ratchet, budget: Budget): FieldError[] {
    if (obj === undefined || obj === null) return [];
    const errs = this.validateExpressions(path, obj, oldObj, ratchet, budget);
    if (budget.remaining < 0) return errs;
    for (const v of this.allOf) {
      errs.push(...v.validate(path, obj, oldObj, { nearestParent: ratchet.nearestParent }, budget));
      if (budget.remaining < 0) return errs;
    }
    if (Array.isArray(obj)) {
      if (this.items) {
        const old = Array.isArray(oldObj) ? oldObj : undefined;
        for (let i = 0; i < obj.length; i++) {
          const oldItem = old && this.schema['x-kubernetes-list-type'] === 'map' ? mapListLookup(this.schema, old, obj[i]) : undefined;
          errs.push(...this.items.validate(`${path}[${i}]`, obj[i], oldItem, ratchetIndex(ratchet, i), budget));
          if (budget.remaining < 0) return errs;
        }
      }
    } else if (isPlainObject(obj)) {
      const old = isPlainObject(oldObj) ? oldObj : undefined;
      const mapType = this.schema['x-kubernetes-map-type'];
      const correlatable = mapType === undefined || mapType === 'granular' || mapType === 'atomic';
      if (this.additionalProperties) {
        for (const [k, v] of Object.entries(obj)) {
          errs.push(...this.additionalProperties.validate(keyPath(path, k), v, correlatable ? old?.[k] : undefined, ratchetKey(ratchet, k), budget));
          if (budget.remaining < 0) return errs;
        }
      }
      if (this.properties) {
        for (const [k, v] of Object.entries(obj)) {
          const sub = this.properties.get(k);
          if (!sub) continue;
          errs.push(...sub.validate(childPath(path, k), v, correlatable ? old?.[k] : undefined, ratchetKey(ratchet, k), budget));
          if (budget.remaining < 0) return errs;
        }
      }
    }
    return errs;
  }

  validateExpressions(path: string, obj: unknown, oldObj: unknown, ratchet: Ratchet, budget: Budget): FieldError[] {
    const errs: FieldError[] = [];
    const stsType = this.schema.type ?? '';
    if (this.compilationError) return [invalidAt(path, stsType, `rule compiler initialization error: ${this.compilationError}`)];
    if (this.compiled.length === 0) return errs;
    if (budget.remaining <= 0) {
      budget.remaining = -1;
      return [invalidAt(path, stsType, 'validation failed due to running out of cost budget, no further validation rules will be run')];
    }
    const old = oldObj === null ? undefined : oldObj;
    const self = toCel(obj, this.declType);
    let oldSelf: unknown;
    const activation: Activation = {
      resolve: (name) => {
        if (name === 'self') return self;
        if (name === 'oldSelf' && old !== undefined) return (oldSelf ??= toCel(old, this.declType));
        return undefined;
      },
    };
    const optionalActivation: Activation = {
      resolve: (name) => {
        if (name === 'self') return self;
        if (name === 'oldSelf') return old === undefined ? Optional.none() : Optional.of((oldSelf ??= toCel(old, this.declType)));
        return undefined;
      },
    };
    for (let i = 0; i < this.compiled.length; i++) {
      const c = this.compiled[i]!;
      const rule = this.rules[i]!;
      if (c.error) {
        errs.push(invalidAt(path, stsType, `rule compile error: ${c.error.detail}`));
        continue;
      }
      if (!c.program) continue;
      const optionalOldSelf = !!rule.optionalOldSelf;
      // transition rules run only with an old value, unless oldSelf is optional
      if (c.usesOldSelf && old === undefined && !optionalOldSelf) continue;
      const act = optionalOldSelf ? optionalActivation : activation;
      const res = c.program.evaluate(act, { costLimit: perCallLimit });
      if (res.cost > budget.remaining) {
        errs.push(invalidAt(path, stsType, 'validation failed due to running out of cost budget, no further validation rules will be run'));
        budget.remaining = -1;
        return errs;
      }
      budget.remaining -= res.cost;
      if (res.error) {
        const msg = res.error.message;
        if (msg.startsWith('no such overload')) {
          errs.push(invalidAt(path, stsType, `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`));
        } else if (res.costLimitExceeded || msg.startsWith('operation cancelled: actual cost limit exceeded')) {
          errs.push(invalidAt(path, stsType, `'${msg}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`));
          budget.remaining = -1;
          return errs;
        } else {
          errs.push(invalidAt(path, stsType, `${msg} evaluating rule: ${ruleErrorString(rule)}`));
        }
        continue;
      }
      if (res.value === true) continue;
      const at = c.normalizedFieldPath ? childPath(path, c.normalizedFieldPath) : path;
      // ratcheting: a failure on an unchanged value is not reported (upstream turns it into a warning)
      const add = (e: FieldError): void => {
        if (!(!c.usesOldSelf && shouldRatchet(ratchet))) errs.push(e);
      };
      if (c.messageExpression) {
        const m = evalMessageExpression(c.messageExpression, rule.messageExpression!, activation, budget.remaining);
        if (m.error?.type === 'Internal') {
          add(internalError(at, m.error.detail));
          budget.remaining = -1;
          return errs;
        } else if (m.error?.type === 'Invalid') {
          add(invalidAt(at, stsType, m.error.detail));
          budget.remaining = -1;
          return errs;
        } else if (m.error) {
          add(forReason(at, stsType, ruleMessageOrDefault(rule), rule.reason));
          budget.remaining = m.remaining;
        } else {
          add(forReason(at, stsType, m.message!, rule.reason));
          budget.remaining = m.remaining;
        }
      } else {
        add(forReason(at, stsType, ruleMessageOrDefault(rule), rule.reason));
      }
    }
    return errs;
  }
}

interface MessageResult {
  message?: string;
  error?: { type: 'Internal' | 'Invalid' | 'Other'; detail: string };
  remaining: number;
}

/** evalMessageExpression: the trimmed message, or why there is none. */
function evalMessageExpression(p: Program, src: string, activation: Activation, remaining: number): MessageResult {
  const res = p.evaluate(activation, { costLimit: perCallLimit });
  if (res.cost > remaining) {
    return { error: { type: 'Invalid', detail: 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run' }, remaining: -1 };
  }
  if (res.error) {
    if (res.costLimitExceeded) return { error: { type: 'Invalid', detail: `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(src)}` }, remaining: -1 };
    return { error: { type: 'Other', detail: `messageExpression evaluation failed due to: ${res.error.message}` }, remaining: remaining - res.cost };
  }
  const left = remaining - res.cost;
  if (typeof res.value !== 'string') return { error: { type: 'Other', detail: 'messageExpression failed to convert to string' }, remaining: left };
  const trimmed = res.value.trim();
  if (Buffer.byteLength(trimmed) > maxEvaluatedMessageExpressionSizeBytes) return { error: { type: 'Other', detail: `messageExpression beyond allowable length of ${maxEvaluatedMessageExpressionSizeBytes}` }, remaining: left };
  if (/\n/.test(trimmed)) return { error: { type: 'Other', detail: 'messageExpression should not contain line breaks' }, remaining: left };
  if (trimmed.length === 0) return { error: { type: 'Other', detail: 'messageExpression should evaluate to a non-empty string' }, remaining: left };
  return { message: trimmed, remaining: left };
}

function rulesOf(s: Schema): ValidationRule[] {
  const r = s['x-kubernetes-validations'];
  return Array.isArray(r) ? (r as ValidationRule[]) : [];
}

export function hasValidationRules(s: Schema | undefined): boolean {
  if (!s || !isPlainObject(s as unknown)) return false;
  if (rulesOf(s).length > 0) return true;
  if (hasValidationRules(s.items)) return true;
  if (typeof s.additionalProperties === 'object' && hasValidationRules(s.additionalProperties)) return true;
  return Object.values(s.properties ?? {}).some(hasValidationRules);
}

/** NewValidator: the validator of a CRD version's schema, or undefined when it has no rules. */
export function newValidator(s: Schema, isResourceRoot = true): Validator | undefined {
  if (!hasValidationRules(s)) return undefined;
  return build(s, s, isResourceRoot, schemaDeclType(s, isResourceRoot));
}

function build(validationSchema: Schema, nodeSchema: Schema, isResourceRoot: boolean, declType: DeclType | undefined): Validator | undefined {
  const v = new Validator(nodeSchema, isResourceRoot);
  const rules = rulesOf(validationSchema);
  if (rules.length) {
    if (!declType) v.compilationError = 'failed to convert to declType for CEL validation rules';
    else {
      try {
        const c = compileRules(nodeSchema, declType, rules, isResourceRoot);
        v.compiled = c.rules;
        v.declType = c.declType;
      } catch (err) {
        v.compilationError = (err as Error).message;
      }
    }
    v.rules = rules;
  }
  const elem = declType?.elem;
  if (validationSchema.items && nodeSchema.items) v.items = build(validationSchema.items, nodeSchema.items, !!nodeSchema.items['x-kubernetes-embedded-resource'], elem);
  for (const [k, vp] of Object.entries(validationSchema.properties ?? {})) {
    const np = nodeSchema.properties?.[k];
    if (!np) continue;
    let fieldType: DeclType | undefined;
    const escaped = escapeName(k);
    if (escaped !== undefined) {
      if (!declType) continue;
      fieldType = declType.fields?.get(escaped)?.type;
      if (!fieldType) continue;
    } else {
      fieldType = schemaDeclType(np, !!np['x-kubernetes-embedded-resource']);
      if (!fieldType) continue;
    }
    const p = build(vp, np, !!np['x-kubernetes-embedded-resource'], fieldType);
    if (p) (v.properties ??= new Map()).set(k, p);
  }
  const vap = validationSchema.additionalProperties;
  const nap = nodeSchema.additionalProperties;
  if (typeof vap === 'object' && typeof nap === 'object') v.additionalProperties = build(vap, nap, !!nap['x-kubernetes-embedded-resource'], elem);
  for (const a of validationSchema.allOf ?? []) {
    const av = build(a, nodeSchema, isResourceRoot, declType);
    if (av) v.allOf.push(av);
  }
  if (v.rules.length || v.compilationError || v.items || v.additionalProperties || v.properties?.size || v.allOf.length) return v;
  return undefined;
}

const blockingTypes = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/**
 * The customresource strategy's CEL step: with no blocking schema error in
 * `prior`, the rule errors of `obj` (with `oldObj` on update, ratcheting);
 * else one error saying the rules were not checked.
 */
export function validateRules(validator: Validator | undefined, obj: unknown, oldObj: unknown, prior: readonly FieldErrorLike[]): FieldError[] {
  if (!validator) return [];
  if (prior.some((e) => blockingTypes.has(e.type))) {
    return [invalidAt('', new GoLiteral('"null"'), 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation')];
  }
  const ratchet: Ratchet = oldObj !== undefined ? { current: new Correlation(obj, oldObj, validator.schema) } : {};
  return validator.validate('', obj, oldObj, ratchet, { remaining: runtimeCelCostBudget });
}
