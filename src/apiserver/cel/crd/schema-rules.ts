/**
 * Validation of a CRD schema's x-kubernetes-validations at CRD create and
 * update (apiextensions-apiserver/pkg/apis/apiextensions/validation:
 * ValidateCustomResourceDefinitionOpenAPISchema's rule checks and
 * cel_validation.go's CELSchemaContext), Kubernetes 1.33:
 *  - each rule's fields: rule required, message and fieldPath non-empty
 *    and on one line, reason one of the supported four, fieldPath a valid
 *    path in the schema;
 *  - each rule compiled (`compilation failed: ERROR: <input>:1:6: ...`),
 *    its estimated cost times how often it can run within the CRD's
 *    limits (StaticEstimatedCostLimit, 10,000,000) and all rules together
 *    (StaticEstimatedCRDCostLimit, 100,000,000);
 *  - messageExpression compiled and costed likewise;
 *  - oldSelf only where old values correlate (not under non-map lists),
 *    optionalOldSelf only on rules that use oldSelf.
 * Paths read as upstream's: `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`.
 */
import { formatBadValue, GoLiteral, type FieldError, type FieldErrorType } from '../../../api/validation.js';
import { goQuote } from '../../../api/validation.js';
import { isPlainObject, jsonEqual, type Schema } from '../../crd/schema.js';
import { escapeName } from '../escaping.js';
import { schemaDeclType, type DeclType } from '../types.js';
import { compileRules, type ValidationRule } from './compilation.js';
import { FieldPathError, validFieldPath } from './field-path.js';

/** The largest estimated cost of one rule (times its cardinality). */
export const staticEstimatedCostLimit = 10_000_000;
/** The largest estimated cost of all the rules of a CRD version's schema. */
export const staticEstimatedCrdCostLimit = 100_000_000;

const supportedReasons = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const maxUint64 = 2 ** 64;

function fe(type: FieldErrorType, field: string, body: string, detail: string): FieldError {
  return { type, field, message: `${field}: ${body}`, detail };
}
const invalid = (field: string, value: unknown, detail: string): FieldError => fe('FieldValueInvalid', field, `Invalid value: ${formatBadValue(value)}: ${detail}`, detail);
const required = (field: string, detail: string): FieldError => fe('FieldValueRequired', field, detail ? `Required value: ${detail}` : 'Required value', detail);
const forbidden = (field: string, detail: string): FieldError => fe('FieldValueForbidden', field, `Forbidden: ${detail}`, detail);
const internal = (field: string, detail: string): FieldError => fe('InternalError', field, `Internal error: ${detail}`, detail);

/** Go's %#v of an apiextensions.ValidationRule (internal type), as field errors print it. */
export function goValidationRule(r: ValidationRule): GoLiteral {
  const ptr = (v: unknown, t: string): string => (v === undefined || v === null ? `(${t})(nil)` : `(${t})(0xc000a1b2c0)`);
  return new GoLiteral(
    `apiextensions.ValidationRule{Rule:${goQuote(r.rule ?? '')}, Message:${goQuote(r.message ?? '')}, MessageExpression:${goQuote(r.messageExpression ?? '')}, ` +
      `Reason:${ptr(r.reason, '*apiextensions.FieldValueErrorReason')}, FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${ptr(r.optionalOldSelf, '*bool')}}`,
  );
}

/** getCostErrorMessage */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

const hasNewlines = (s: string): boolean => /[\n\r]+/.test(s);

const mulSat = (a: number, b: number): number => (a === 0 ? 0 : maxUint64 / a < b ? maxUint64 : a * b);

/** extractMaxElements: how many children a node can have (undefined: unbounded). */
function maxElements(s: Schema): number | undefined {
  switch (s.type) {
    case 'object':
      if (s.additionalProperties !== undefined && s.additionalProperties !== false) return s.maxProperties !== undefined ? Math.max(0, s.maxProperties) : undefined;
      return 1;
    case 'array':
      return s.maxItems !== undefined ? Math.max(0, s.maxItems) : undefined;
    default:
      return 1;
  }
}

interface TotalCost {
  total: number;
  mostExpensive: { path: string; cost: number }[];
}

function observe(t: TotalCost, path: string, cost: number): void {
  t.total = Math.min(t.total + cost, maxUint64);
  if (cost < staticEstimatedCrdCostLimit / 100) return;
  t.mostExpensive.push({ path, cost });
  t.mostExpensive.sort((a, b) => b.cost - a.cost);
  if (t.mostExpensive.length > 4) t.mostExpensive.length = 4;
}

interface Context {
  /** The node's DeclType (undefined when CEL cannot see it). */
  declType: DeclType | undefined;
  /** How many times the node can occur (undefined: unbounded). */
  cardinality: number | undefined;
  /** The path of the nearest uncorrelatable ancestor (oldSelf is forbidden below it). */
  uncorrelatable: string | undefined;
  isResourceRoot: boolean;
}

export interface SchemaRulesOptions {
  /** The schema is unchanged on this update: per-expression cost limits are not enforced. */
  readonly suppressPerExpressionCost?: boolean;
}

/**
 * Errors of the x-kubernetes-validations in a version's openAPIV3Schema,
 * `path` being that schema's field path. Call only for a structurally
 * valid schema (upstream compiles rules only then).
 */
export function validateSchemaRules(root: Schema, path: string, opts: SchemaRulesOptions = {}): FieldError[] {
  // Most schemas have no rules: nothing to compile or cost.
  if (!JSON.stringify(root).includes('"x-kubernetes-validations"')) return [];
  const total: TotalCost = { total: 0, mostExpensive: [] };
  const out = walk(root, path, { declType: schemaDeclType(root, true), cardinality: 1, uncorrelatable: undefined, isResourceRoot: true }, total, opts);
  const errs = [...out.schema, ...out.cel];
  if (total.total > staticEstimatedCrdCostLimit) {
    for (const e of total.mostExpensive) errs.push(forbidden(e.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errs.push(forbidden(path, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total.total, staticEstimatedCrdCostLimit)));
  }
  return errs;
}

function childContext(parent: Context, parentSchema: Schema, child: Schema, declType: DeclType | undefined, uncorrelatable: string | undefined): Context {
  let cardinality: number | undefined;
  if (parent.cardinality !== undefined) {
    const m = maxElements(parentSchema);
    if (m !== undefined) cardinality = mulSat(parent.cardinality, m);
  }
  return { declType: declType ?? schemaDeclType(child, !!child['x-kubernetes-embedded-resource']), cardinality, uncorrelatable, isResourceRoot: !!child['x-kubernetes-embedded-resource'] };
}

function walk(s: Schema, path: string, ctx: Context, total: TotalCost, opts: SchemaRulesOptions): { schema: FieldError[]; cel: FieldError[] } {
  const schemaErrs: FieldError[] = [];
  const celErrs: FieldError[] = [];
  if (!isPlainObject(s as unknown)) return { schema: schemaErrs, cel: celErrs };
  const add = (r: { schema: FieldError[]; cel: FieldError[] }): void => {
    schemaErrs.push(...r.schema);
    celErrs.push(...r.cel);
  };
  const ap = s.additionalProperties;
  if (typeof ap === 'object') {
    add(walk(ap, `${path}.additionalProperties`, childContext(ctx, s, ap, ctx.declType?.elem, ctx.uncorrelatable), total, opts));
  }
  const mapType = s['x-kubernetes-map-type'];
  const mapCorrelatable = mapType === undefined || mapType === 'granular' || mapType === 'atomic';
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const escaped = escapeName(k);
    const fieldType = escaped !== undefined ? ctx.declType?.fields?.get(escaped)?.type : undefined;
    add(walk(p, `${path}.properties[${k}]`, childContext(ctx, s, p, fieldType, mapCorrelatable ? ctx.uncorrelatable : path), total, opts));
  }
  if (s.items && isPlainObject(s.items as unknown)) {
    const uncorrelatable = s['x-kubernetes-list-type'] !== 'map' ? path : ctx.uncorrelatable;
    add(walk(s.items, `${path}.items`, childContext(ctx, s, s.items, ctx.declType?.elem, uncorrelatable), total, opts));
  }
  const rules = Array.isArray(s['x-kubernetes-validations']) ? (s['x-kubernetes-validations'] as ValidationRule[]) : [];
  if (rules.length === 0) return { schema: schemaErrs, cel: celErrs };
  const rp = (i: number, f: string): string => `${path}.x-kubernetes-validations[${i}].${f}`;
  rules.forEach((rule, i) => {
    const trimmedRule = (rule.rule ?? '').trim();
    const trimmedMsg = (rule.message ?? '').trim();
    if (trimmedRule.length === 0) schemaErrs.push(required(rp(i, 'rule'), 'rule is not specified'));
    else if ((rule.message ?? '').length > 0 && trimmedMsg.length === 0) schemaErrs.push(invalid(rp(i, 'message'), rule.message, 'message must be non-empty if specified'));
    else if (hasNewlines(trimmedMsg)) schemaErrs.push(invalid(rp(i, 'message'), rule.message, 'message must not contain line breaks'));
    else if (hasNewlines(trimmedRule) && trimmedMsg.length === 0) schemaErrs.push(required(rp(i, 'message'), 'message must be specified if rule contains line breaks'));
    if ((rule.messageExpression ?? '').length > 0 && rule.messageExpression!.trim().length === 0) {
      schemaErrs.push(required(rp(i, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (rule.reason !== undefined && rule.reason !== null && !supportedReasons.includes(rule.reason)) {
      schemaErrs.push(fe('FieldValueNotSupported', rp(i, 'reason'), `Unsupported value: ${formatBadValue(rule.reason)}: supported values: ${supportedReasons.map(goQuote).join(', ')}`, ''));
    }
    const fp = rule.fieldPath ?? '';
    if (fp.length > 0 && fp.trim().length === 0) schemaErrs.push(invalid(rp(i, 'fieldPath'), fp, 'fieldPath must be non-empty if specified'));
    if (hasNewlines(fp)) schemaErrs.push(invalid(rp(i, 'fieldPath'), fp, 'fieldPath must not contain line breaks'));
    if (fp.length > 0) {
      try {
        validFieldPath(fp, s);
      } catch (err) {
        if (!(err instanceof FieldPathError)) throw err;
        schemaErrs.push(invalid(rp(i, 'fieldPath'), fp, 'fieldPath must be a valid path'));
      }
    }
  });
  // rules compile only when the schema at this level and below is otherwise valid
  if (schemaErrs.length > 0) return { schema: schemaErrs, cel: celErrs };
  if (!ctx.declType) {
    celErrs.push(internal(`${path}.x-kubernetes-validations`, 'internal error: failed to retrieve type information for x-kubernetes-validations'));
    return { schema: schemaErrs, cel: celErrs };
  }
  const compiled = compileRules(s, ctx.declType, rules, ctx.isResourceRoot).rules;
  compiled.forEach((cr, i) => {
    const rule = rules[i]!;
    const cost = mulSat(cr.maxCost, ctx.cardinality ?? cr.maxCardinality);
    if (!opts.suppressPerExpressionCost && cost > staticEstimatedCostLimit) {
      celErrs.push(forbidden(rp(i, 'rule'), costErrorMessage('estimated rule cost', cost, staticEstimatedCostLimit)));
    }
    observe(total, rp(i, 'rule'), cost);
    if (cr.error) {
      if (cr.error.type === 'Required') celErrs.push(required(rp(i, 'rule'), cr.error.detail));
      else celErrs.push(invalid(rp(i, 'rule'), goValidationRule(rule), cr.error.detail));
    }
    if (cr.messageExpressionError) {
      celErrs.push(invalid(rp(i, 'messageExpression'), goValidationRule(rule), cr.messageExpressionError.detail));
    } else if (cr.messageExpression) {
      if (!opts.suppressPerExpressionCost && cr.messageExpressionMaxCost > staticEstimatedCostLimit) {
        celErrs.push(forbidden(rp(i, 'messageExpression'), costErrorMessage('estimated messageExpression cost', cr.messageExpressionMaxCost, staticEstimatedCostLimit)));
      }
      observe(total, rp(i, 'messageExpression'), cr.messageExpressionMaxCost);
    }
    if (cr.usesOldSelf) {
      if (ctx.uncorrelatable !== undefined) {
        celErrs.push(invalid(rp(i, 'rule'), rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ctx.uncorrelatable}`));
      }
    } else if (rule.optionalOldSelf !== undefined && rule.optionalOldSelf !== null) {
      celErrs.push(invalid(rp(i, 'optionalOldSelf'), rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
  return { schema: schemaErrs, cel: celErrs };
}

/** On update: the old CRD has the same schema for this version (upstream's versionsWithUnchangedSchemas). */
export function unchangedSchema(old: { spec?: { versions?: readonly { name?: string; schema?: { openAPIV3Schema?: unknown } }[] } } | undefined, version: string | undefined, schema: Schema): boolean {
  if (!old || version === undefined) return false;
  const prev = old.spec?.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  return prev !== undefined && jsonEqual(prev, schema);
}
