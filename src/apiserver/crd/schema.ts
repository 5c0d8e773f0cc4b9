/**
 * The OpenAPI v3 schema of a CustomResourceDefinition version
 * (`spec.versions[].schema.openAPIV3Schema`) as plain JSON, with the
 * Kubernetes extensions. Only the structural-schema subset is interpreted:
 * `$ref`, `patternProperties`, `dependencies` and `additionalItems` are not
 * allowed in structural schemas and are ignored here.
 */
export interface Schema {
  type?: string;
  format?: string;
  description?: string;
  title?: string;
  nullable?: boolean;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  /** CEL rules: accepted in CRDs, not evaluated by this server. */
  'x-kubernetes-validations'?: unknown[];
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The JSON type name of a value as go-openapi reports it (integer for whole numbers). */
export function jsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    default:
      return 'object';
  }
}

/** Appends a property name to a field path (`spec` + `replicas` -> `spec.replicas`). */
export function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/** Appends a list index to a field path (`spec.items` + 0 -> `spec.items[0]`). */
export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** Deep JSON equality (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}
