/**
 * Validation of custom resources in tests, exactly as kcm's API server
 * does it on create and update: unknown fields pruned, defaults applied,
 * then the structural schema's checks (types, required, enums, bounds,
 * patterns, formats). CEL rules (`x-kubernetes-validations`) are not
 * evaluated here.
 *
 *   const { object, errors } = validateResource(StaticSite, { apiVersion: ..., spec: { replicas: -1 } });
 *   assert.deepEqual(errors, ['spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0']);
 */
import type { CustomResourceDefinition, JSONSchemaProps } from 'kubernetes-types/apiextensions/v1.js';
import { pruneAndDefault, unknownCustomResourceFields, validateCustomResource } from '../apiserver/crd/custom-resource.js';
import type { Schema } from '../apiserver/crd/schema.js';
import type { KubeObject } from '../api/types.js';
import { deepCopy } from '../util/json/deep-copy.js';

export interface ValidationResult<T> {
  /** The object as the API server would store it: pruned and defaulted. */
  object: T;
  /** `field: message` for every violation, as in the API server's 422 Status; empty when valid. */
  errors: string[];
  /** Fields the schema does not know, which the server drops (or refuses with fieldValidation=Strict). */
  unknownFields: string[];
}

/** Anything carrying a schema: a ResourceDefinition, a CRD (its storage version, or `version`), or a bare openAPIV3Schema. */
export type SchemaSource = { openAPIV3Schema: JSONSchemaProps } | CustomResourceDefinition | JSONSchemaProps;

function schemaOf(source: SchemaSource, version?: string): Schema {
  const s = source as Record<string, unknown>;
  if (s.kind === 'CustomResourceDefinition') {
    const crd = source as CustomResourceDefinition;
    const v = crd.spec.versions.find((x) => (version ? x.name === version : x.storage));
    if (!v?.schema?.openAPIV3Schema) throw new TypeError(`validateResource: ${crd.metadata?.name}: no schema for ${version ? `version ${version}` : 'the storage version'}`);
    return v.schema.openAPIV3Schema as Schema;
  }
  if (typeof s.openAPIV3Schema === 'object' && s.openAPIV3Schema !== null) return s.openAPIV3Schema as Schema;
  return source as Schema;
}

export function validateResource<T>(source: SchemaSource, obj: T, opts: { version?: string } = {}): ValidationResult<T> {
  const schema = schemaOf(source, opts.version);
  const object = deepCopy(obj) as unknown as KubeObject;
  const unknownFields = unknownCustomResourceFields(object, schema);
  pruneAndDefault(object, schema);
  const errors = validateCustomResource(object, schema).map((e) => e.message);
  return { object: object as unknown as T, errors, unknownFields };
}
