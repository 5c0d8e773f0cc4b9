/**
 * OpenAPI for custom resources, as apiextensions-apiserver's builder
 * publishes it: one definition per served version named
 * `<reversed group>.<version>.<Kind>` (e.g. `com.example.v1.Widget`) with
 * `x-kubernetes-group-version-kind`, its List, and the REST paths, so that
 * `kubectl explain <kind>` and client-side validation see custom resources.
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

/** The v2 form of a structural schema: drops what swagger 2.0 cannot say (nullable, extensions kubectl does not read). */
function toSwagger(s: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'nullable' || k === 'x-kubernetes-validations') continue;
    if (k === 'properties' && isPlainObject(v)) out.properties = Object.fromEntries(Object.entries(v as Record<string, Schema>).map(([n, p]) => [n, toSwagger(p)]));
    else if ((k === 'items' || k === 'not') && isPlainObject(v)) out[k] = toSwagger(v as Schema);
    else if (k === 'additionalProperties' && isPlainObject(v)) out[k] = toSwagger(v as Schema);
    else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) out[k] = (v as Schema[]).map(toSwagger);
    else out[k] = v;
  }
  if (s['x-kubernetes-int-or-string']) {
    delete out.type;
    out.format = 'int-or-string';
  }
  return out;
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
  const paths: Record<string, Record<string, unknown>> = {};
  for (const crd of crds) {
    const spec = crd.spec;
    if (!spec) continue;
    for (const v of spec.versions ?? []) {
      if (!v.served) continue;
      const kind = spec.names.kind;
      const gvk = { group: spec.group, version: v.name, kind };
      const name = definitionName(spec.group, v.name, kind);
      const schema = schemaOf(v) ?? { type: 'object' };
      const def = toSwagger(schema);
      def.type = 'object';
      def.properties = {
        ...((def.properties as Record<string, unknown> | undefined) ?? {}),
        apiVersion: { description: apiVersionDescription, type: 'string' },
        kind: { description: kindDescription, type: 'string' },
        metadata: { description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata", $ref: objectMetaRef },
      };
      def['x-kubernetes-group-version-kind'] = [gvk];
      definitions[name] = def;
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
  return { definitions, paths };
}
