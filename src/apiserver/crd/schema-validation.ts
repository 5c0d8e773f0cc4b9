/**
 * Validation of custom resources against their structural schema, worded as
 * kube-apiserver words it: kube-openapi's messages (`spec.replicas in body
 * must be of type integer: "string"`) wrapped in field errors the way
 * apiextensions-apiserver's kubeOpenAPIResultToFieldErrors does (Required,
 * Unsupported value, Too long, Too many, Invalid value). Field paths use
 * `.name` for properties and `[i]` for list items.
 *
 * `x-kubernetes-validations` (CEL) rules are not evaluated.
 */
import { formatBadValue, goQuote, tooLong, tooMany, notSupported, required } from '../../api/validation.js';
import type { FieldErrorLike } from '../status.js';
import { child, index, isPlainObject, jsonEqual, jsonType, type Schema } from './schema.js';

/** The value at `path` is not of `schema`'s type: reason FieldValueTypeInvalid, as field.TypeInvalid. */
function typeInvalid(path: string, actual: string, detail: string): FieldErrorLike {
  return { type: 'FieldValueTypeInvalid', field: path, message: `${path}: Invalid value: ${goQuote(actual)}: ${detail}` };
}

function invalidValue(path: string, value: unknown, detail: string): FieldErrorLike {
  const shown = value === undefined ? '""' : formatBadValue(value);
  return { type: 'FieldValueInvalid', field: path, message: `${path}: Invalid value: ${shown}: ${detail}` };
}

/** How kube-openapi names a location in messages: the path, or `body` at the root. */
function where(path: string): string {
  return path || 'body';
}

function typeMatches(schemaType: string, actual: string): boolean {
  return schemaType === actual || (schemaType === 'number' && actual === 'integer');
}

const formatChecks: Record<string, (s: string) => boolean> = {
  'date-time': (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  uuid: (s) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(s),
  ipv4: (s) => /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(s),
  ipv6: (s) => s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s),
  cidr: (s) => /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(s),
  hostname: (s) => s.length <= 253 && /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/.test(s),
  email: (s) => /^[^@\s]+@[^@\s]+$/.test(s),
  uri: (s) => /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s),
  mac: (s) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s),
  duration: (s) => /^([-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+$/.test(s),
};

/** Number formats that bound the value. */
const intRanges: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/**
 * Errors of `value` at `path` against `schema` (empty: valid). At the root of
 * a custom resource pass path '' and skip metadata/apiVersion/kind yourself.
 */
export function validateValue(value: unknown, schema: Schema | undefined, path = ''): FieldErrorLike[] {
  const errs: FieldErrorLike[] = [];
  if (!schema) return errs;
  walk(value, schema, path, errs);
  return errs;
}

function walk(value: unknown, s: Schema, path: string, errs: FieldErrorLike[]): void {
  const actual = jsonType(value);
  if (value === null) {
    if (s.nullable) return;
    if (s.type || s['x-kubernetes-int-or-string']) {
      const t = s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type!;
      errs.push(typeInvalid(path, 'null', `${where(path)} in body must be of type ${t}: "null"`));
      return;
    }
  }
  if (s['x-kubernetes-int-or-string']) {
    if (actual !== 'integer' && actual !== 'string') {
      errs.push(typeInvalid(path, actual, `${where(path)} in body must be of type integer,string: ${goQuote(actual)}`));
      return;
    }
  } else if (s.type && !typeMatches(s.type, actual)) {
    errs.push(typeInvalid(path, actual, `${where(path)} in body must be of type ${s.type}: ${goQuote(actual)}`));
    return;
  }
  if (s.enum && !s.enum.some((e) => jsonEqual(e, value))) {
    errs.push(notSupported(path, value, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  switch (actual) {
    case 'string':
      checkString(value as string, s, path, errs);
      break;
    case 'integer':
    case 'number':
      checkNumber(value as number, s, path, errs);
      break;
    case 'array':
      checkArray(value as unknown[], s, path, errs);
      break;
    case 'object':
      checkObject(value as Record<string, unknown>, s, path, errs);
      break;
  }
  checkCombinators(value, s, path, errs);
}

function checkString(v: string, s: Schema, path: string, errs: FieldErrorLike[]): void {
  const len = [...v].length;
  if (s.maxLength !== undefined && len > s.maxLength) errs.push(tooLong(path, v, s.maxLength));
  if (s.minLength !== undefined && len < s.minLength) errs.push(invalidValue(path, v, `${where(path)} in body should be at least ${s.minLength} chars long`));
  if (s.pattern !== undefined) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      re = undefined; // the CRD's validation refuses bad patterns; nothing to enforce
    }
    if (re && !re.test(v)) errs.push(invalidValue(path, v, `${where(path)} in body should match '${s.pattern}'`));
  }
  const check = s.format && !s['x-kubernetes-int-or-string'] ? formatChecks[s.format] : undefined;
  if (check && !check(v)) errs.push(typeInvalid(path, v, `${where(path)} in body must be of type ${s.format}: ${goQuote(v)}`));
}

function checkNumber(v: number, s: Schema, path: string, errs: FieldErrorLike[]): void {
  if (s.maximum !== undefined) {
    if (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum) {
      errs.push(invalidValue(path, v, `${where(path)} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
    }
  }
  if (s.minimum !== undefined) {
    if (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum) {
      errs.push(invalidValue(path, v, `${where(path)} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
    }
  }
  if (s.multipleOf !== undefined && s.multipleOf > 0) {
    const q = v / s.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) errs.push(invalidValue(path, v, `${where(path)} in body should be a multiple of ${s.multipleOf}`));
  }
  const range = s.format ? intRanges[s.format] : undefined;
  if (range && (v < range[0] || v > range[1] || !Number.isInteger(v))) {
    errs.push(typeInvalid(path, String(v), `${where(path)} in body must be of type ${s.format}: ${goQuote(String(v))}`));
  }
}

function checkArray(v: unknown[], s: Schema, path: string, errs: FieldErrorLike[]): void {
  if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(tooMany(path, v.length, s.maxItems));
  if (s.minItems !== undefined && v.length < s.minItems) errs.push(invalidValue(path, v, `${where(path)} in body should have at least ${s.minItems} items`));
  if (s.uniqueItems && v.some((x, i) => v.findIndex((y) => jsonEqual(x, y)) !== i)) {
    errs.push(invalidValue(path, v, `${where(path)} in body shouldn't contain duplicates`));
  }
  if (s.items) v.forEach((item, i) => walk(item, s.items!, index(path, i), errs));
  // structural list types: duplicates are refused as kube-apiserver's validateListSetsAndMaps does
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    v.forEach((x, i) => {
      if (v.findIndex((y) => jsonEqual(x, y)) !== i) errs.push({ type: 'FieldValueDuplicate', field: index(path, i), message: `${index(path, i)}: Duplicate value: ${formatBadValue(x)}` });
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Map<string, number>();
    v.forEach((x, i) => {
      if (!isPlainObject(x)) return;
      const key: Record<string, unknown> = {};
      for (const k of keys) if (x[k] !== undefined) key[k] = x[k];
      const sig = JSON.stringify(keys.map((k) => x[k] ?? s.items?.properties?.[k]?.default ?? null));
      if (seen.has(sig)) errs.push({ type: 'FieldValueDuplicate', field: index(path, i), message: `${index(path, i)}: Duplicate value: ${JSON.stringify(key)}` });
      else seen.set(sig, i);
    });
  }
}

function checkObject(v: Record<string, unknown>, s: Schema, path: string, errs: FieldErrorLike[]): void {
  const keys = Object.keys(v);
  if (s.maxProperties !== undefined && keys.length > s.maxProperties) errs.push(tooMany(path, keys.length, s.maxProperties));
  if (s.minProperties !== undefined && keys.length < s.minProperties) {
    errs.push(invalidValue(path, v, `${where(path)} in body should have at least ${s.minProperties} properties`));
  }
  for (const r of s.required ?? []) {
    if (v[r] === undefined) errs.push(required(child(path, r), ''));
  }
  const embedded = s['x-kubernetes-embedded-resource'];
  if (embedded) {
    // An embedded object carries its own TypeMeta (validateEmbeddedResource).
    if (typeof v.apiVersion !== 'string' || !v.apiVersion) errs.push(required(child(path, 'apiVersion'), 'must not be empty'));
    if (typeof v.kind !== 'string' || !v.kind) errs.push(required(child(path, 'kind'), 'must not be empty'));
  }
  for (const k of keys) {
    if (embedded && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const prop = s.properties?.[k];
    if (prop) walk(v[k], prop, child(path, k), errs);
    else if (isPlainObject(s.additionalProperties)) walk(v[k], s.additionalProperties, child(path, k), errs);
    else if (s.additionalProperties === false) errs.push(invalidValue(child(path, k), '', `${child(where(path), k)} in body is a forbidden property`));
  }
}

function checkCombinators(value: unknown, s: Schema, path: string, errs: FieldErrorLike[]): void {
  if (s.allOf) {
    const sub = s.allOf.flatMap((x) => validateValue(value, x, path));
    if (sub.length) {
      errs.push(...sub);
      errs.push(invalidValue(path, undefined, `${where(path)} in body must validate all the schemas (allOf)`));
    }
  }
  if (s.anyOf) {
    const results = s.anyOf.map((x) => validateValue(value, x, path));
    if (!results.some((r) => r.length === 0)) {
      errs.push(...results.flat());
      errs.push(invalidValue(path, undefined, `${where(path)} in body must validate at least one schema (anyOf)`));
    }
  }
  if (s.oneOf) {
    const ok = s.oneOf.map((x) => validateValue(value, x, path)).filter((r) => r.length === 0).length;
    if (ok !== 1) errs.push(invalidValue(path, undefined, `${where(path)} in body must validate one and only one schema (oneOf)`));
  }
  if (s.not && validateValue(value, s.not, path).length === 0) {
    errs.push(invalidValue(path, undefined, `${where(path)} in body must not validate the schema (not)`));
  }
}
