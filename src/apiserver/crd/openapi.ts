/**
 * OpenAPI for custom resources, as apiextensions-apiserver's builder
 * publishes it: one definition per served version named
 * `<reversed group>.<version>.<Kind>` (e.g. `com.example.v1.Widget`) with
 * `x-kubernetes-group-version-kind`, its List, and the REST paths, so that
 * `kubectl explain <kind>` and client-side validation see custom resources.
 *
 * The kind's schema differs between /openapi/v2 and /openapi/v3 as
 * upstream's (controller/openapi/builder): v2 is cut down to what swagger
 * 2.0 and kubectl's v2 reader can take, and is a bare `{type: object}` for a
 * version whose root preserves unknown fields; v3 publishes the structural
 * schema whole.
 */
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { SwaggerFragment } from '../openapi/index.js';
import { isPlainObject, type Schema } from './schema.js';
import { schemaOf } from './custom-resource.js';

const objectMetaRef = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const listMetaRef = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const statusRef = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status';
const patchRef = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
const deleteOptionsRef = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';

const apiVersionDescription = 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const kindDescription = 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** `example.com` -> `com.example` */
export function reversedGroup(group: string): string {
  return group.split('.').reverse().join('.');
}

export function definitionName(group: string, version: string, kind: string): string {
  return `${reversedGroup(group)}.${version}.${kind}`;
}

type Json = Record<string, unknown>;

/** Value-validation keywords a structural schema keeps (ValueValidation), in addition to the generic ones. */
const valueKeys = [
  'format', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required',
] as const;
const extensionKeys = [
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
] as const;

/** A nested value validation (inside allOf/anyOf/oneOf/not): value keywords, items and properties only. */
function nestedToKube(s: Schema): Json {
  const out: Json = {};
  for (const k of valueKeys) if (s[k] !== undefined && !(Array.isArray(s[k]) && k === 'required' && !(s[k] as unknown[]).length)) out[k] = s[k];
  if (s['x-kubernetes-validations'] !== undefined) out['x-kubernetes-validations'] = s['x-kubernetes-validations'];
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(s[j])) out[j] = (s[j] as Schema[]).map(nestedToKube);
  if (isPlainObject(s.not)) out.not = nestedToKube(s.not as Schema);
  if (isPlainObject(s.items)) out.items = nestedToKube(s.items as Schema);
  if (isPlainObject(s.properties)) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, nestedToKube(v)]));
  // int-or-string keeps its type in nested value validations (ForbiddenGenerics).
  if (s.type !== undefined) out.type = s.type;
  return out;
}

/**
 * The structural schema as apiextensions publishes it (Structural.Unfold and
 * ToKubeOpenAPI): only what a structural schema holds (no `example`, `$ref`,
 * `id`, ...), and `x-kubernetes-int-or-string` unfolded into
 * `anyOf: [{type: integer}, {type: string}]`.
 */
export function toKubeOpenApi(s: Schema): Json {
  const out: Json = {};
  if (s.type) out.type = s.type;
  if (s.nullable) out.nullable = true;
  if (s.description) out.description = s.description;
  if (s.title) out.title = s.title;
  if (s.default !== undefined) out.default = s.default;
  const ext = (s as Json).externalDocs;
  if (isPlainObject(ext)) out.externalDocs = ext;
  for (const k of valueKeys) {
    if (s[k] === undefined) continue;
    if (k === 'required' && !(s.required ?? []).length) continue;
    out[k] = s[k];
  }
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(s[j]) && (s[j] as Schema[]).length) out[j] = (s[j] as Schema[]).map(nestedToKube);
  if (isPlainObject(s.not)) out.not = nestedToKube(s.not as Schema);
  if (s['x-kubernetes-int-or-string']) {
    const intOrString = [{ type: 'integer' }, { type: 'string' }];
    const anyOf = out.anyOf as Json[] | undefined;
    const isPattern = (xs: Json[] | undefined) => xs?.length === 2 && xs[0]?.type === 'integer' && xs[1]?.type === 'string';
    const allOf = out.allOf as Json[] | undefined;
    if (!isPattern(anyOf) && !isPattern(allOf?.[0]?.anyOf as Json[] | undefined)) {
      if (!anyOf) out.anyOf = intOrString;
      else out.allOf = [{ anyOf: intOrString }, ...(allOf ?? [])];
    }
  }
  if (isPlainObject(s.items)) out.items = toKubeOpenApi(s.items as Schema);
  if (isPlainObject(s.properties)) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toKubeOpenApi(v)]));
  if (s.additionalProperties !== undefined) out.additionalProperties = isPlainObject(s.additionalProperties) ? toKubeOpenApi(s.additionalProperties as Schema) : s.additionalProperties;
  for (const k of extensionKeys) {
    const v = s[k];
    if (v === undefined || v === false || (Array.isArray(v) && !v.length)) continue;
    out[k] = v;
  }
  return out;
}

/**
 * What swagger 2.0 (and kubectl's v2 reader) can take of a published schema
 * (openapi/v2 ToStructuralOpenAPIV2): no allOf/anyOf/oneOf/not; nullable
 * and preserve-unknown-fields values lose their items and properties (and a
 * nullable one its type, a preserving object its type); an array left
 * without items loses its type; nullable fields are not required.
 */
export function toStructuralOpenApiV2(s: Json): Json {
  const out: Json = { ...s };
  delete out.allOf;
  delete out.anyOf;
  delete out.oneOf;
  delete out.not;
  if (out.nullable) {
    delete out.type;
    delete out.nullable;
    delete out.items;
    delete out.properties;
  }
  const preserve = out['x-kubernetes-preserve-unknown-fields'] === true;
  if (preserve) {
    delete out.items;
    delete out.properties;
  }
  if (out.items === undefined && out.type === 'array') delete out.type;
  if (preserve && out.type === 'object') delete out.type;
  const props = out.properties as Record<string, Json> | undefined;
  if (props) {
    const nullable = Object.keys(props).filter((k) => props[k]!.nullable === true);
    if (nullable.length && Array.isArray(out.required)) {
      out.required = (out.required as string[]).filter((r) => !nullable.includes(r));
      if (!(out.required as string[]).length) delete out.required;
    }
    out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toStructuralOpenApiV2(v)]));
  }
  if (isPlainObject(out.items)) out.items = toStructuralOpenApiV2(out.items as Json);
  if (isPlainObject(out.additionalProperties)) {
    const add = out.additionalProperties as Json;
    if (add.nullable === true) delete out.required;
    out.additionalProperties = toStructuralOpenApiV2(add);
  }
  return out;
}

const embeddedApiVersionDescription = 'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const embeddedKindDescription = 'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const metadataDescription = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/** Gives `x-kubernetes-embedded-resource` objects apiVersion, kind and metadata (addEmbeddedProperties); v2 skips objects preserving unknown fields. */
function addEmbeddedProperties(s: Json, v2: boolean): void {
  const props = s.properties as Record<string, Json> | undefined;
  for (const v of Object.values(props ?? {})) addEmbeddedProperties(v, v2);
  if (isPlainObject(s.items)) addEmbeddedProperties(s.items as Json, v2);
  if (isPlainObject(s.additionalProperties)) addEmbeddedProperties(s.additionalProperties as Json, v2);
  if (v2 && s['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (s['x-kubernetes-embedded-resource'] !== true) return;
  s.properties = {
    ...(props ?? {}),
    apiVersion: { description: embeddedApiVersionDescription, type: 'string' },
    kind: { description: embeddedKindDescription, type: 'string' },
    metadata: { description: metadataDescription, $ref: objectMetaRef },
  };
  const req = (s.required as string[] | undefined) ?? [];
  s.required = [...req, ...(['kind', 'apiVersion'] as const).filter((k) => !req.includes(k))];
}

/**
 * The definition of one version's kind (builder.buildKubeNative). Without a
 * schema, and in v2 when the root preserves unknown fields, it is a bare
 * `{type: object}` (anything else would make kubectl refuse unknown fields);
 * otherwise the published schema with apiVersion, kind and metadata added.
 */
export function kindDefinition(schema: Schema | undefined, gvk: { group: string; version: string; kind: string }, v2: boolean, crdPreserveUnknownFields = false): Json {
  let def: Json;
  if (!schema || (v2 && (schema['x-kubernetes-preserve-unknown-fields'] === true || crdPreserveUnknownFields))) {
    def = { type: 'object' };
  } else {
    def = toKubeOpenApi(schema);
    if (v2) def = toStructuralOpenApiV2(def);
    def.properties = {
      ...((def.properties as Json | undefined) ?? {}),
      metadata: { description: metadataDescription, $ref: objectMetaRef },
      apiVersion: { description: apiVersionDescription, type: 'string' },
      kind: { description: kindDescription, type: 'string' },
    };
    addEmbeddedProperties(def, v2);
  }
  def['x-kubernetes-group-version-kind'] = [gvk];
  return def;
}

function operation(action: string, kind: string, gvk: Record<string, string>, ok: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    operationId: `${action}${kind}`,
    consumes: ['*/*'],
    produces: ['application/json', 'application/yaml'],
    schemes: ['https'],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    responses: { '200': { description: 'OK', schema: { $ref: ok } }, '401': { description: 'Unauthorized' } },
    ...extra,
  };
}

/** The definitions and paths of every served version of `crds`. */
export function swaggerFragmentOf(crds: readonly CustomResourceDefinition[]): SwaggerFragment {
  const definitions: Record<string, Record<string, unknown>> = {};
  const v3Definitions: Record<string, Record<string, unknown>> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  for (const crd of crds) {
    const spec = crd.spec;
    if (!spec) continue;
    for (const v of spec.versions ?? []) {
      if (!v.served) continue;
      const kind = spec.names.kind;
      const gvk = { group: spec.group, version: v.name, kind };
      const name = definitionName(spec.group, v.name, kind);
      const schema = schemaOf(v);
      definitions[name] = kindDefinition(schema, gvk, true, spec.preserveUnknownFields === true);
      v3Definitions[name] = kindDefinition(schema, gvk, false);
      const listName = definitionName(spec.group, v.name, spec.names.listKind ?? `${kind}List`);
      definitions[listName] = {
        description: `${spec.names.listKind ?? `${kind}List`} is a list of ${kind}`,
        type: 'object',
        required: ['items'],
        properties: {
          apiVersion: { description: apiVersionDescription, type: 'string' },
          items: { description: `List of ${spec.names.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: { $ref: `#/definitions/${name}` } },
          kind: { description: kindDescription, type: 'string' },
          metadata: { description: 'Standard list metadata.', $ref: listMetaRef },
        },
        'x-kubernetes-group-version-kind': [{ ...gvk, kind: spec.names.listKind ?? `${kind}List` }],
      };
      const ref = `#/definitions/${name}`;
      const listRef = `#/definitions/${listName}`;
      const base = spec.scope === 'Namespaced' ? `/apis/${spec.group}/${v.name}/namespaces/{namespace}/${spec.names.plural}` : `/apis/${spec.group}/${v.name}/${spec.names.plural}`;
      // kubectl checks the operations for fieldValidation before it relies on server-side validation.
      const query = (name: string, description: string) => ({ in: 'query', name, type: 'string', uniqueItems: true, description });
      const writeParams = [
        query('dryRun', 'When present, indicates that modifications should not be persisted.'),
        query('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
        query('fieldValidation', 'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict'),
      ];
      const body = (r: string) => ({ parameters: [{ in: 'body', name: 'body', required: true, schema: { $ref: r } }, ...writeParams] });
      const delBody = { parameters: [{ in: 'body', name: 'body', schema: { $ref: deleteOptionsRef } }] };
      paths[base] = {
        get: operation('list', kind, gvk, listRef),
        post: operation('post', kind, gvk, ref, body(ref)),
        delete: operation('deletecollection', kind, gvk, statusRef, delBody),
      };
      paths[`${base}/{name}`] = {
        get: operation('get', kind, gvk, ref),
        put: operation('put', kind, gvk, ref, body(ref)),
        patch: operation('patch', kind, gvk, ref, { ...body(patchRef), consumes: ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'] }),
        delete: operation('delete', kind, gvk, statusRef, delBody),
      };
      if (v.subresources?.status) paths[`${base}/{name}/status`] = { get: operation('get', kind, gvk, ref), put: operation('put', kind, gvk, ref, body(ref)) };
    }
  }
  return { definitions, v3Definitions, paths };
}
