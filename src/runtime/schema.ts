/**
 * TypeBox schemas to Kubernetes structural OpenAPI v3 schemas (what a
 * CustomResourceDefinition's `openAPIV3Schema` must be).
 *
 * TypeBox writes JSON Schema; the API server wants the structural subset of
 * OpenAPI v3 with Kubernetes' extensions. The conversion:
 * - literal unions (`Type.Union([Type.Literal('a'), ...])`, `Type.Enum`) become `enum`;
 * - `Type.Union([X, Type.Null()])` becomes X with `nullable: true`;
 * - `Type.Union([Type.Integer(), Type.String()])` becomes `x-kubernetes-int-or-string`;
 * - `Type.Record(Type.String(), X)` becomes `additionalProperties: X` (a map);
 * - `Type.Object({}, { additionalProperties: true })`, `Type.Unknown()` and
 *   `Type.Any()` become `x-kubernetes-preserve-unknown-fields`;
 * - `const` becomes a one-value `enum`; a numeric `exclusiveMinimum`/`Maximum`
 *   becomes `minimum`/`maximum` with the boolean flag (OpenAPI 3.0);
 * - descriptions, defaults, formats, bounds, patterns, `x-kubernetes-*`
 *   keywords (list types, map keys, CEL `x-kubernetes-validations`) are kept.
 *
 * What structural schemas cannot express is refused with the path and why:
 * other unions, `$ref`/recursive types, `uniqueItems: true`, tuples.
 */
import type { JSONSchemaProps } from 'kubernetes-types/apiextensions/v1.js';
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import type { Condition, ObjectMeta } from 'kubernetes-types/meta/v1.js';

/** A metav1.Condition whose status is one of the three values the schema allows. */
export interface SchemaCondition extends Condition {
  status: 'True' | 'False' | 'Unknown';
}

export type { JSONSchemaProps };

/** A schema TypeBox cannot turn into a structural one. */
export class SchemaConversionError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || '<root>'}: ${reason}`);
    this.name = 'SchemaConversionError';
  }
}

type Json = Record<string, unknown>;

const KEEP = [
  'description',
  'title',
  'format',
  'default',
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'nullable',
  'example',
] as const;

const IGNORED = new Set(['$schema', '$id', 'examples', '$comment', 'readOnly', 'writeOnly', 'deprecated']);

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The type of the values of an enum, when they share one. */
function enumType(values: unknown[], path: string): string {
  const types = new Set(values.map((v) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)));
  types.delete('null');
  if (types.has('integer') && types.has('number')) types.delete('integer');
  if (types.size !== 1) throw new SchemaConversionError(path, `enum values must share one type, got ${[...types].join(', ') || 'none'}`);
  const t = [...types][0]!;
  if (!['string', 'integer', 'number', 'boolean'].includes(t)) throw new SchemaConversionError(path, `enum of ${t} values is not supported`);
  return t;
}

/** The members of an anyOf/oneOf, with null split off. */
function unionParts(s: Json): { members: Json[]; nullable: boolean } {
  const all = ((s.anyOf ?? s.oneOf) as unknown[]).filter(isObject);
  const members = all.filter((m) => m.type !== 'null');
  return { members, nullable: members.length !== all.length };
}

function convertUnion(s: Json, path: string): Json {
  const { members, nullable } = unionParts(s);
  let out: Json;
  if (members.length === 1) {
    out = convert(members[0]!, path);
  } else if (members.length > 0 && members.every((m) => 'const' in m)) {
    const values = members.map((m) => m.const);
    out = { type: enumType(values, path), enum: values };
  } else if (members.length === 2 && members.some((m) => m.type === 'integer' || m.type === 'number') && members.some((m) => m.type === 'string')) {
    out = { 'x-kubernetes-int-or-string': true };
  } else {
    throw new SchemaConversionError(
      path,
      'a union other than literals, X | null or integer | string cannot be a structural schema; use one object with optional fields (and CEL rules for exclusivity)',
    );
  }
  for (const k of KEEP) if (s[k] !== undefined) out[k] = s[k];
  if (nullable) out.nullable = true;
  return out;
}

function convert(s: unknown, path: string): Json {
  if (!isObject(s)) throw new SchemaConversionError(path, 'not a schema');
  if (s.$ref !== undefined || s.$defs !== undefined) throw new SchemaConversionError(path, 'references ($ref, recursive types) are not allowed in structural schemas');
  if (s.anyOf !== undefined || s.oneOf !== undefined) return convertUnion(s, path);
  if (s.allOf !== undefined) throw new SchemaConversionError(path, 'intersections (allOf) are not supported; merge the objects into one');
  const out: Json = {};
  if (Array.isArray(s.type)) {
    const types = (s.type as string[]).filter((t) => t !== 'null');
    if (types.length !== 1) throw new SchemaConversionError(path, `several types (${(s.type as string[]).join(', ')}) are not allowed in structural schemas`);
    out.type = types[0];
    if (types.length !== (s.type as string[]).length) out.nullable = true;
  } else if (s.type !== undefined && s.type !== 'null') {
    out.type = s.type;
  }
  if ('const' in s) {
    out.enum = [s.const];
    out.type ??= enumType([s.const], path);
  }
  if (Array.isArray(s.enum)) {
    out.enum = s.enum;
    out.type ??= enumType(s.enum, path);
  }
  for (const k of KEEP) if (s[k] !== undefined) out[k] = s[k];
  for (const [k, v] of Object.entries(s)) if (k.startsWith('x-kubernetes-')) out[k] = v;
  if (typeof s.exclusiveMinimum === 'number') {
    out.minimum = s.exclusiveMinimum;
    out.exclusiveMinimum = true;
  } else if (s.exclusiveMinimum === true) out.exclusiveMinimum = true;
  if (typeof s.exclusiveMaximum === 'number') {
    out.maximum = s.exclusiveMaximum;
    out.exclusiveMaximum = true;
  } else if (s.exclusiveMaximum === true) out.exclusiveMaximum = true;
  if (s.uniqueItems === true) {
    throw new SchemaConversionError(path, "uniqueItems is not allowed in structural schemas; use listSet(items) (x-kubernetes-list-type: set) for scalar items");
  }
  if (Array.isArray(s.items) || s.prefixItems !== undefined) throw new SchemaConversionError(path, 'tuples are not supported; use an object');
  for (const k of Object.keys(s)) {
    if (IGNORED.has(k) || k.startsWith('~')) continue;
    if (!['type', 'const', 'enum', 'exclusiveMinimum', 'exclusiveMaximum', 'uniqueItems', 'properties', 'required', 'items', 'additionalProperties', 'patternProperties', 'anyOf', 'oneOf'].includes(k) && !(KEEP as readonly string[]).includes(k) && !k.startsWith('x-kubernetes-')) {
      throw new SchemaConversionError(path, `keyword ${k} is not supported in CustomResourceDefinition schemas`);
    }
  }
  // Unknown(), Any() and untyped schemas keep whatever they are given.
  if (out.type === undefined && !out['x-kubernetes-int-or-string'] && out.enum === undefined) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
    return out;
  }
  if (out.type === 'object') {
    const props = isObject(s.properties) ? s.properties : {};
    if (Object.keys(props).length > 0) {
      out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, convert(v, `${path}.${k}`)]));
    }
    if (Array.isArray(s.required) && s.required.length > 0) out.required = [...(s.required as string[])];
    const pattern = isObject(s.patternProperties) ? Object.entries(s.patternProperties) : [];
    if (pattern.length > 0) {
      if (pattern.length > 1 || !/^\^?\(?\.\*\)?\$?$/.test(pattern[0]![0])) {
        throw new SchemaConversionError(path, 'maps must have string keys of any form (Type.Record(Type.String(), X)); key patterns are not supported');
      }
      out.additionalProperties = convert(pattern[0]![1], `${path}[*]`);
    } else if (s.additionalProperties === true) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    } else if (isObject(s.additionalProperties)) {
      out.additionalProperties = convert(s.additionalProperties, `${path}[*]`);
    }
  }
  if (out.type === 'array') {
    if (!isObject(s.items)) throw new SchemaConversionError(path, 'arrays need an items schema');
    out.items = convert(s.items, `${path}[]`);
  }
  return out;
}

/** The structural OpenAPI v3 schema of a TypeBox schema. Throws SchemaConversionError for what cannot be one. */
export function toStructuralSchema(schema: TSchema): JSONSchemaProps {
  return convert(JSON.parse(JSON.stringify(schema)) as unknown, '') as JSONSchemaProps;
}

/** An integer or a string (`x-kubernetes-int-or-string`), like `maxUnavailable: 1` or `'25%'`. */
export function intOrString(opts: { description?: string; default?: number | string } = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({ 'x-kubernetes-int-or-string': true, ...opts });
}

/** A resource quantity (`500m`, `1Gi`, `2`): an int-or-string with Kubernetes' quantity pattern. */
export function quantity(opts: { description?: string; default?: number | string } = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
    ...opts,
  });
}

/** Any JSON object, kept as given (`x-kubernetes-preserve-unknown-fields`). */
export function preserveUnknownFields<T = Record<string, unknown>>(opts: { description?: string } = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...opts });
}

/** A whole Kubernetes object embedded in the field (`x-kubernetes-embedded-resource`): apiVersion, kind and metadata are checked. */
export function embeddedResource<T = { apiVersion?: string; kind?: string; metadata?: ObjectMeta; [k: string]: unknown }>(
  opts: { description?: string } = {},
): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, ...opts });
}

/** A list merged by key on server-side apply (`x-kubernetes-list-type: map`), like a Pod's containers by name. */
export function listMap<T extends TSchema>(items: T, keys: string[], opts: { description?: string; maxItems?: number } = {}): TUnsafe<Static<T>[]> {
  return Type.Unsafe<Static<T>[]>({ ...Type.Array(items), 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys, ...opts });
}

/** A list of unique scalars (`x-kubernetes-list-type: set`). */
export function listSet<T extends TSchema>(items: T, opts: { description?: string; maxItems?: number } = {}): TUnsafe<Static<T>[]> {
  return Type.Unsafe<Static<T>[]>({ ...Type.Array(items), 'x-kubernetes-list-type': 'set', ...opts });
}

/**
 * A list of `metav1.Condition`s as kubebuilder generates it (one per type,
 * merged by type on server-side apply), typed as Condition[] whose status
 * is 'True', 'False' or 'Unknown', for setStatusCondition.
 */
export function conditions(opts: { description?: string } = {}): TUnsafe<SchemaCondition[]> {
  return Type.Unsafe<SchemaCondition[]>({
    type: 'array',
    description: opts.description ?? 'Conditions of the object: the latest observations of its state.',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
    items: {
      type: 'object',
      required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
      properties: {
        lastTransitionTime: { type: 'string', format: 'date-time', description: 'When the condition last changed from one status to another.' },
        message: { type: 'string', maxLength: 32768, description: 'A human readable message with details about the transition.' },
        observedGeneration: { type: 'integer', format: 'int64', minimum: 0, description: 'The .metadata.generation the condition was set from.' },
        reason: { type: 'string', maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', description: "A programmatic identifier for the condition's last transition, in CamelCase." },
        status: { type: 'string', enum: ['True', 'False', 'Unknown'], description: 'status of the condition, one of True, False, Unknown.' },
        type: {
          type: 'string',
          maxLength: 316,
          pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
          description: 'type of condition in CamelCase or in foo.example.com/CamelCase.',
        },
      },
    },
  });
}
