/**
 * What one CustomResourceDefinition serves: a ServedResource per served
 * version, each with the custom-resource strategy of apiextensions-apiserver
 * (pkg/registry/customresource): pruning and defaulting from the version's
 * schema, schema validation, status and scale subresources, generation
 * bumped on every change but metadata and status, and printer columns.
 *
 * All versions share one storage key space (`/registry/<group>/<plural>/`);
 * objects are stored at the storage version and converted between versions
 * by the CRD's conversion strategy (conversion.ts: None rewrites apiVersion,
 * Webhook calls the conversion webhook): ServedResource.toStorage on writes,
 * fromStorage on reads. Objects read from storage are pruned and defaulted
 * with the schema of the version they were stored at, as upstream's storage
 * decoder does: a default added to a CRD later shows on the next read,
 * without a write.
 */
import type { CustomResourceDefinition, CustomResourceDefinitionVersion, CustomResourceColumnDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import type { KubeObject } from '../../api/types.js';
import { ALL_VERBS } from '../../api/registry.js';
import { parseTime } from '../../util/clock/clock.js';
import { newStatus } from '../../client/errors.js';
import { StatusError } from '../status.js';
import type { ServedResource, SubresourceInfo } from '../resources.js';
import type { ScaleAccess, Strategy } from '../registry/strategy.js';
import { newStrategy, meta } from '../registry/generic.js';
import { ageColumn, humanDuration, nameColumn, type TableColumn } from '../table.js';
import { isPlainObject, type Schema } from './schema.js';
import { validateValue } from './schema-validation.js';
import { prune } from './schema-pruning.js';
import { applyDefaults } from './schema-defaulting.js';
import { evaluateJsonPath, getPath, parseJsonPath, setPath } from './json-path.js';
import { storageVersionOf } from './crd-strategy.js';
import { customResourceCodec, newCustomResourceConverter, type ConversionDeps } from './conversion.js';
import { withValidationRules } from '../cel/crd/strategy.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Obj = Record<string, unknown>;

/** The schema of `version` (openAPIV3Schema), or undefined. */
export function schemaOf(v: CustomResourceDefinitionVersion): Schema | undefined {
  const s = v.schema?.openAPIV3Schema as Schema | undefined;
  return isPlainObject(s) ? s : undefined;
}

/** Prunes unknown fields and applies defaults, as decoding a custom resource does. Mutates obj. */
export function pruneAndDefault(obj: KubeObject, schema: Schema | undefined): void {
  if (!schema) return;
  prune(obj, schema);
  applyDefaults(obj, schema);
}

/**
 * The fields of a custom resource its schema does not know (outside
 * apiVersion, kind and metadata): what pruning would drop, as dotted paths
 * with list indexes, sorted as upstream's PruneWithOptions returns them.
 * These are the `unknown field "spec.foo"` of strict decoding.
 */
export function unknownCustomResourceFields(obj: KubeObject, schema: Schema | undefined): string[] {
  if (!schema) return [];
  return prune(deepCopy(obj), schema).sort();
}

/** Schema errors of a custom resource; metadata, apiVersion and kind are checked elsewhere. */
export function validateCustomResource(obj: KubeObject, schema: Schema | undefined): ReturnType<typeof validateValue> {
  if (!schema) return [];
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = obj;
  const s: Schema = { ...schema, required: (schema.required ?? []).filter((r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind') };
  return validateValue(rest, s, '');
}

function withoutMeta(o: KubeObject): Obj {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

function withoutMetaAndStatus(o: KubeObject): Obj {
  const { status: _s, ...rest } = withoutMeta(o);
  return rest;
}

function notFoundPath(path: string): StatusError {
  return new StatusError(newStatus(500, 'InternalError', `Internal error occurred: the spec replicas field ${JSON.stringify(path)} does not exist`));
}

/** Scale access through the CRD's specReplicasPath / statusReplicasPath / labelSelectorPath. */
export function customScaleAccess(scale: NonNullable<NonNullable<CustomResourceDefinitionVersion['subresources']>['scale']>): ScaleAccess {
  return {
    get(obj): Scale {
      const m = obj.metadata ?? {};
      const replicas = getPath(obj, scale.specReplicasPath);
      if (replicas === undefined) throw notFoundPath(scale.specReplicasPath);
      const statusReplicas = getPath(obj, scale.statusReplicasPath);
      const selector = scale.labelSelectorPath ? getPath(obj, scale.labelSelectorPath) : undefined;
      const metadata: Scale['metadata'] = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
      for (const k of Object.keys(metadata!) as (keyof NonNullable<Scale['metadata']>)[]) if (metadata![k] === undefined) delete metadata![k];
      return {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata,
        spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
        status: { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0, selector: typeof selector === 'string' ? selector : '' },
      };
    },
    set(obj, replicas) {
      setPath(obj as Obj, scale.specReplicasPath, replicas);
    },
    selector(obj) {
      const s = scale.labelSelectorPath ? getPath(obj, scale.labelSelectorPath) : undefined;
      return typeof s === 'string' ? s : '';
    },
  };
}

/** The strategy of one served version of a CRD. */
export function customResourceStrategy(crd: CustomResourceDefinition, v: CustomResourceDefinitionVersion): Strategy {
  const spec = crd.spec!;
  const schema = schemaOf(v);
  const hasStatus = !!v.subresources?.status;
  const scale = v.subresources?.scale ? customScaleAccess(v.subresources.scale) : undefined;
  // x-kubernetes-validations (CEL) rules run after schema validation, on create and update (compiled once per schema)
  return withValidationRules(newStrategy({
    group: spec.group,
    kind: spec.names.kind,
    resource: spec.names.plural,
    namespaced: spec.scope === 'Namespaced',
    hasStatus,
    tracksGeneration: true,
    generationSource: hasStatus ? withoutMetaAndStatus : withoutMeta,
    ...(scale ? { scale } : {}),
    defaults: (obj) => pruneAndDefault(obj, schema),
    prepareForCreate(obj) {
      // A custom resource with a status subresource drops status on create.
      if (hasStatus) delete obj.status;
    },
    prepareForStatusUpdate(newObj, oldObj) {
      // Only status changes (and managedFields, which track that write).
      const status = newObj.status;
      const managedFields = newObj.metadata?.managedFields;
      for (const k of Object.keys(newObj)) delete newObj[k];
      Object.assign(newObj, deepCopy(oldObj));
      if (status !== undefined) newObj.status = status;
      else delete newObj.status;
      if (managedFields !== undefined) meta(newObj).managedFields = managedFields;
    },
    validate: (obj) => validateCustomResource(obj, schema) as never,
  }), schema);
}

/** Printer columns of a version: its additionalPrinterColumns, or Age when it has none. */
export function printerColumns(v: CustomResourceDefinitionVersion): { columns: TableColumn[]; exact: boolean } {
  const defs = v.additionalPrinterColumns ?? [];
  if (defs.length === 0) return { columns: [nameColumn, ageColumn], exact: true };
  return { columns: [nameColumn, ...defs.map(printerColumn)], exact: true };
}

function printerColumn(d: CustomResourceColumnDefinition): TableColumn {
  let steps: ReturnType<typeof parseJsonPath> | undefined;
  try {
    steps = parseJsonPath(d.jsonPath);
  } catch {
    steps = undefined; // an unparsable path prints empty cells, as upstream's convertor does after logging
  }
  return {
    name: d.name,
    type: d.type as TableColumn['type'],
    ...(d.format ? { format: d.format } : {}),
    description: d.description ?? '',
    priority: d.priority ?? 0,
    cell(obj, now) {
      const found = steps ? evaluateJsonPath(obj, steps) : [];
      if (found.length === 0) return null as unknown as string;
      const v = found[0];
      if (d.type === 'date' && typeof v === 'string') {
        const t = parseTime(v);
        return t === undefined ? v : humanDuration(now - t);
      }
      if (v !== null && typeof v === 'object') return JSON.stringify(v);
      return v as string | number | boolean;
    },
  };
}

const statusVerbs = ['get', 'patch', 'update'];

/**
 * The resources a CRD serves (one per served version), storage version
 * marked. Empty when it serves none. `deps` reach the conversion webhook.
 */
export function servedResourcesOf(crd: CustomResourceDefinition, deps: ConversionDeps = {}): ServedResource[] {
  const spec = crd.spec;
  if (!spec) return [];
  const names = crd.status?.acceptedNames?.plural ? crd.status.acceptedNames : spec.names;
  const storage = storageVersionOf(crd);
  // Objects are stored at the storage version: reading them prunes and defaults with its schema.
  const storageVersion = (spec.versions ?? []).find((v) => v.name === storage);
  const storageSchema = storageVersion ? schemaOf(storageVersion) : undefined;
  // The synchronous approximation of fromStorage (same-version reads); serving uses fromStorage.
  const decode = storageSchema ? (obj: KubeObject) => pruneAndDefault(obj, storageSchema) : undefined;
  const converter = newCustomResourceConverter(crd, deps);
  const schemas = new Map((spec.versions ?? []).map((v) => [v.name, schemaOf(v)] as const));
  const out: ServedResource[] = [];
  for (const v of spec.versions ?? []) {
    if (!v.served) continue;
    const subresources = new Map<string, SubresourceInfo>();
    if (v.subresources?.status) subresources.set('status', { name: 'status', kind: names.kind, group: spec.group, version: v.name, verbs: statusVerbs });
    if (v.subresources?.scale) subresources.set('scale', { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: statusVerbs });
    const strategy = customResourceStrategy({ ...crd, spec: { ...spec, names } }, v);
    const schema = schemaOf(v);
    const codec = storage ? customResourceCodec(converter, schemas, v.name, storage) : undefined;
    out.push({
      group: spec.group,
      version: v.name,
      resource: names.plural,
      singular: names.singular ?? names.kind.toLowerCase(),
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      namespaced: spec.scope === 'Namespaced',
      shortNames: [...(names.shortNames ?? [])],
      categories: [...(names.categories ?? [])],
      verbs: [...ALL_VERBS],
      subresources,
      strategy,
      allowCreateOnUpdate: false,
      returnDeletedObject: false,
      virtual: false,
      customResource: true,
      storageVersion: v.name === storage,
      ...(decode ? { decode } : {}),
      ...(codec ? { fromStorage: codec.fromStorage, toStorage: codec.toStorage, convert: codec.convert } : {}),
      ...(schema ? { unknownFields: (obj: KubeObject) => unknownCustomResourceFields(obj, schema) } : {}),
    });
  }
  return out;
}
