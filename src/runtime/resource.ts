/**
 * Custom resources defined once, in TypeScript: from one `defineResource`
 * come the static type of the objects, the CustomResourceDefinition, and
 * the ResourceKind the manager, builder and client use.
 *
 *   export const StaticSite = defineResource({
 *     group: 'sites.example.com', version: 'v1', kind: 'StaticSite', shortNames: ['site'],
 *     spec: Type.Object({ image: Type.String({ default: 'nginx:1.27' }), replicas: Type.Integer({ minimum: 0, default: 1 }) }),
 *     status: Type.Object({ availableReplicas: Type.Optional(Type.Integer()) }),
 *     printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }],
 *     scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.availableReplicas' },
 *   });
 *   export type StaticSite = ObjectOf<typeof StaticSite>;   // { apiVersion?, kind?, metadata?, spec: {...}, status?: {...} }
 *   const crd = StaticSite.crd();                           // apiextensions.k8s.io/v1 CustomResourceDefinition
 *
 * The spec is required on objects (the CRD says so); status is optional and
 * served through the status subresource.
 */
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  CustomResourceSubresourceScale,
  JSONSchemaProps,
} from 'kubernetes-types/apiextensions/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type { Static, TSchema } from 'typebox';
import { defineKind, type ResourceKind } from './kinds.js';
import { toStructuralSchema } from './schema.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** An object of a custom resource: Kubernetes metadata, a spec, an optional status. */
export interface CustomObject<Spec, Status> {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type PrinterColumn = CustomResourceColumnDefinition;

/** A CEL rule on a schema node (`x-kubernetes-validations`). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface ResourceSpec<S extends TSchema, St extends TSchema | undefined> {
  group: string;
  version: string;
  kind: string;
  /** Default: the lower-cased kind, pluralised as kubebuilder does (`Policy` -> `policies`). */
  plural?: string;
  /** Default: the lower-cased kind. */
  singular?: string;
  /** Default: `<Kind>List`. */
  listKind?: string;
  shortNames?: string[];
  /** `kubectl get all` shows kinds in the `all` category. */
  categories?: string[];
  /** Default `Namespaced`. */
  scope?: 'Namespaced' | 'Cluster';
  spec: S;
  status?: St;
  description?: string;
  /** Extra `kubectl get` columns (Name is always first; add `.metadata.creationTimestamp` for Age). */
  printerColumns?: PrinterColumn[];
  /** The scale subresource (`kubectl scale`, HorizontalPodAutoscalers). */
  scale?: CustomResourceSubresourceScale;
  /** CEL rules on the whole object (self is the object). */
  validations?: ValidationRule[];
  /** Default true. */
  served?: boolean;
  /** Default true: the version objects are stored in. */
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
}

/** A defined custom resource: a ResourceKind plus its schema and CustomResourceDefinition. */
export interface ResourceDefinition<T extends CustomObject<unknown, unknown>> extends ResourceKind<T> {
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** The version's `openAPIV3Schema`: structural, with defaults. */
  readonly openAPIV3Schema: JSONSchemaProps;
  /** The version as a CRD lists it. */
  readonly crdVersion: CustomResourceDefinitionVersion;
  /** The CustomResourceDefinition serving this version (combine versions with customResourceDefinition()). */
  crd(): CustomResourceDefinition;
}

/** kubebuilder's default plural (flect.Pluralize of the lower-cased kind), for regular English nouns. */
export function pluralize(word: string): string {
  const w = word.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(w)) return `${w}es`;
  if (/[^aeiou]y$/.test(w)) return `${w.slice(0, -1)}ies`;
  return `${w}s`;
}

export function defineResource<S extends TSchema, St extends TSchema | undefined = undefined>(
  def: ResourceSpec<S, St>,
): ResourceDefinition<CustomObject<Static<S>, St extends TSchema ? Static<St> : never>> {
  const plural = def.plural ?? pluralize(def.kind);
  const singular = def.singular ?? def.kind.toLowerCase();
  const namespaced = (def.scope ?? 'Namespaced') === 'Namespaced';
  const kind = defineKind<CustomObject<Static<S>, St extends TSchema ? Static<St> : never>>({ group: def.group, version: def.version, kind: def.kind, plural, namespaced });
  if (!def.group.includes('.')) throw new TypeError(`defineResource ${def.kind}: group ${JSON.stringify(def.group)} must be a domain name with a dot (e.g. example.com)`);
  const properties: Record<string, JSONSchemaProps> = { spec: toStructuralSchema(def.spec) };
  if (def.status) properties.status = toStructuralSchema(def.status);
  const schema: JSONSchemaProps = {
    type: 'object',
    ...(def.description ? { description: def.description } : {}),
    properties: {
      apiVersion: {
        type: 'string',
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
      },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents. In CamelCase.' },
      metadata: { type: 'object' },
      ...properties,
    },
    required: ['spec'],
  };
  if (def.validations?.length) (schema as Record<string, unknown>)['x-kubernetes-validations'] = def.validations;
  const version: CustomResourceDefinitionVersion = {
    name: def.version,
    served: def.served ?? true,
    storage: def.storage ?? true,
    schema: { openAPIV3Schema: schema },
  };
  if (def.deprecated) version.deprecated = true;
  if (def.deprecationWarning) version.deprecationWarning = def.deprecationWarning;
  if (def.status || def.scale) {
    version.subresources = {};
    if (def.status) version.subresources.status = {};
    if (def.scale) version.subresources.scale = def.scale;
  }
  if (def.printerColumns?.length) version.additionalPrinterColumns = def.printerColumns;
  const shortNames = def.shortNames ?? [];
  const categories = def.categories ?? [];
  const listKind = def.listKind ?? `${def.kind}List`;
  type Def = ResourceDefinition<CustomObject<Static<S>, St extends TSchema ? Static<St> : never>>;
  const defined: Def = Object.freeze({
    ...kind,
    plural,
    singular,
    listKind,
    shortNames: Object.freeze([...shortNames]),
    categories: Object.freeze([...categories]),
    openAPIV3Schema: schema,
    crdVersion: version,
    crd: () => customResourceDefinition(defined as unknown as ResourceDefinition<CustomObject<unknown, unknown>>),
  });
  return defined;
}

/**
 * The CustomResourceDefinition serving one or more versions of one kind
 * (same group, kind, plural and scope). Exactly one version must be the
 * storage version; without conversion webhooks the versions must share a
 * schema shape (the API server converts between them by apiVersion only).
 */
export function customResourceDefinition(...versions: ResourceDefinition<CustomObject<unknown, unknown>>[]): CustomResourceDefinition {
  const [first] = versions;
  if (!first) throw new TypeError('customResourceDefinition: give at least one version');
  for (const v of versions) {
    if (v.group !== first.group || v.kind !== first.kind || v.plural !== first.plural || v.namespaced !== first.namespaced) {
      throw new TypeError(`customResourceDefinition: ${v.kind}.${v.group}/${v.version} does not match ${first.kind}.${first.group} (group, kind, plural and scope must agree)`);
    }
  }
  const storage = versions.filter((v) => v.crdVersion.storage);
  if (storage.length !== 1) throw new TypeError(`customResourceDefinition ${first.plural}.${first.group}: exactly one version must have storage: true (have ${storage.length})`);
  const names: CustomResourceDefinition['spec']['names'] = { kind: first.kind, listKind: first.listKind, plural: first.plural, singular: first.singular };
  if (first.shortNames.length) names.shortNames = [...first.shortNames];
  if (first.categories.length) names.categories = [...first.categories];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${first.plural}.${first.group}` },
    spec: {
      group: first.group,
      names,
      scope: first.namespaced ? 'Namespaced' : 'Cluster',
      versions: versions.map((v) => deepCopy(v.crdVersion)),
    },
  };
}
