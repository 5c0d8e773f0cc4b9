/**
 * The CustomResourceDefinition strategy: apiextensions.k8s.io/v1 defaults,
 * validation of the definition (names, group, scope, versions with exactly
 * one storage version, schemas, subresources, printer columns, conversion:
 * conversion-validation.ts), and the status bookkeeping the registry does
 * (`status.storedVersions`: the storage version is added when it changes;
 * a stored version must stay in spec.versions).
 *
 * Differences from kube-apiserver (deliberate): the cleanup finalizer `customresourcecleanup.apiextensions.k8s.io`
 * is added on create rather than on the first DELETE, so that the generic
 * delete path keeps the CRD until its objects are gone.
 */
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeObject } from '../../api/types.js';
import { invalid, isDNS1035Label, isDNS1123Subdomain, notSupported, required, duplicate, type FieldError } from '../../api/validation.js';
import type { Strategy } from '../registry/strategy.js';
import { isPlainObject, type Schema } from './schema.js';
import { unchangedSchema, validateSchemaRules } from '../cel/crd/schema-rules.js';
import { allowInvalidCABundleOnUpdate, defaultConversion, hasRecognizedReviewVersionOrNone, validateConversion, validateStoredVersions } from './conversion-validation.js';

export const cleanupFinalizer = 'customresourcecleanup.apiextensions.k8s.io';

type Crd = CustomResourceDefinition & KubeObject;
type Obj = Record<string, unknown>;

/** The storage version's name, or undefined when not exactly one is marked. */
export function storageVersionOf(crd: CustomResourceDefinition): string | undefined {
  const st = (crd.spec?.versions ?? []).filter((v) => v.storage);
  return st.length === 1 ? st[0]!.name : undefined;
}

/** apiextensions v1 defaulting of a CRD (SetDefaults_CustomResourceDefinition*). Mutates obj. */
export function defaultCrd(obj: KubeObject): void {
  const crd = obj as Obj;
  if (!isPlainObject(crd.spec)) return;
  const spec = crd.spec as Obj;
  const names = (isPlainObject(spec.names) ? spec.names : (spec.names = {})) as Obj;
  if (typeof names.kind === 'string' && names.kind && !names.listKind) names.listKind = `${names.kind}List`;
  if (typeof names.kind === 'string' && names.kind && !names.singular) names.singular = names.kind.toLowerCase();
  defaultConversion(spec);
  if (spec.preserveUnknownFields === undefined) spec.preserveUnknownFields = false;
  for (const v of Array.isArray(spec.versions) ? (spec.versions as Obj[]) : []) {
    if (!isPlainObject(v)) continue;
    for (const col of Array.isArray(v.additionalPrinterColumns) ? (v.additionalPrinterColumns as Obj[]) : []) {
      if (isPlainObject(col) && col.priority === undefined) col.priority = 0;
    }
  }
}

const columnTypes = ['boolean', 'date', 'integer', 'number', 'string'];

/**
 * ValidateCustomResourceDefinition, the parts that matter for serving; with
 * `old`, the spec part of ValidateCustomResourceDefinitionUpdate (conversion
 * rules relaxed as upstream relaxes them for existing objects).
 */
export function validateCrd(crd: Crd, old?: Crd): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec;
  if (!spec) return [required('spec', '')];
  const names = spec.names ?? ({} as NonNullable<typeof spec.names>);
  const group = spec.group ?? '';
  const name = crd.metadata?.name ?? '';
  if (name !== `${names.plural ?? ''}.${group}`) errs.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  if (!group) errs.push(required('spec.group', ''));
  else {
    for (const m of isDNS1123Subdomain(group)) errs.push(invalid('spec.group', group, m));
    if (group.split('.').length < 2) errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) errs.push(required('spec.scope', ''));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') errs.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  errs.push(...validateNames(names, 'spec.names'));
  if (spec.preserveUnknownFields) errs.push(invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  const versions = spec.versions ?? [];
  if (versions.length === 0) errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  else {
    const storage = versions.filter((v) => v.storage).length;
    if (storage !== 1) errs.push(invalid('spec.versions', new GoVersions(versions.map((v) => v.name)), 'must have exactly one version marked as storage version'));
    if (!versions.some((v) => v.served)) errs.push(invalid('spec.versions', new GoVersions(versions.map((v) => v.name)), 'must have at least one version served'));
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (!v.name) errs.push(required(`${p}.name`, ''));
    else {
      for (const m of isDNS1035Label(v.name)) errs.push(invalid(`${p}.name`, v.name, m));
      if (seen.has(v.name)) errs.push(duplicate(`${p}.name`, v.name));
      seen.add(v.name);
    }
    const schema = v.schema?.openAPIV3Schema as Schema | undefined;
    if (!schema) errs.push(required(`${p}.schema.openAPIV3Schema`, 'schemas are required'));
    else {
      const structural = validateStructural(schema, `${p}.schema.openAPIV3Schema`, true);
      errs.push(...structural);
      // x-kubernetes-validations: compiled and costed when the schema is otherwise valid (cost limits relaxed for an unchanged schema)
      if (structural.length === 0) errs.push(...validateSchemaRules(schema, `${p}.schema.openAPIV3Schema`, { suppressPerExpressionCost: unchangedSchema(old, v.name, schema) }));
    }
    const scale = v.subresources?.scale;
    if (scale) {
      const sp = `${p}.subresources.scale`;
      if (!scale.specReplicasPath) errs.push(required(`${sp}.specReplicasPath`, ''));
      else if (!/^\.spec(\.[^.[\]]+)+$/.test(scale.specReplicasPath)) errs.push(invalid(`${sp}.specReplicasPath`, scale.specReplicasPath, 'should be a json path under .spec'));
      if (!scale.statusReplicasPath) errs.push(required(`${sp}.statusReplicasPath`, ''));
      else if (!/^\.status(\.[^.[\]]+)+$/.test(scale.statusReplicasPath)) errs.push(invalid(`${sp}.statusReplicasPath`, scale.statusReplicasPath, 'should be a json path under .status'));
      if (scale.labelSelectorPath && !/^\.(spec|status)(\.[^.[\]]+)+$/.test(scale.labelSelectorPath)) {
        errs.push(invalid(`${sp}.labelSelectorPath`, scale.labelSelectorPath, 'should be a json path under either .spec or .status'));
      }
    }
    (v.additionalPrinterColumns ?? []).forEach((c, j) => {
      const cp = `${p}.additionalPrinterColumns[${j}]`;
      if (!c.name) errs.push(required(`${cp}.name`, ''));
      if (!c.type) errs.push(required(`${cp}.type`, ''));
      else if (!columnTypes.includes(c.type)) errs.push(notSupported(`${cp}.type`, c.type, columnTypes));
      if (!c.jsonPath) errs.push(required(`${cp}.JSONPath`, ''));
      if ((c.priority ?? 0) < 0) errs.push(invalid(`${cp}.priority`, c.priority, 'must be greater than or equal to 0'));
    });
  });
  errs.push(
    ...validateConversion(spec, {
      requireRecognizedVersion: !old || hasRecognizedReviewVersionOrNone(old.spec),
      // An invalid caBundle passes on create (the CRD is not established yet), and on update unless it was valid before.
      allowInvalidCABundle: !old || allowInvalidCABundleOnUpdate(old),
    }),
  );
  // ValidateCustomResourceDefinitionStoredVersions (status as PrepareForCreate/PrepareForUpdate left it).
  errs.push(...validateStoredVersions(crd.status?.storedVersions ?? [], versions));
  return errs;
}

/** Renders a version list as Go prints []CustomResourceDefinitionVersion names. */
class GoVersions {
  constructor(readonly names: string[]) {}
  toJSON(): string[] {
    return this.names;
  }
}

function validateNames(n: NonNullable<CustomResourceDefinition['spec']>['names'], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const label = (v: string | undefined, field: string, req: boolean) => {
    if (!v) {
      if (req) errs.push(required(`${path}.${field}`, ''));
      return;
    }
    for (const m of isDNS1035Label(v)) errs.push(invalid(`${path}.${field}`, v, m));
  };
  label(n.plural, 'plural', true);
  label(n.singular, 'singular', true);
  if (!n.kind) errs.push(required(`${path}.kind`, ''));
  else if (isDNS1035Label(n.kind.toLowerCase()).length) errs.push(invalid(`${path}.kind`, n.kind, 'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?'));
  if (!n.listKind) errs.push(required(`${path}.listKind`, ''));
  else if (isDNS1035Label(n.listKind.toLowerCase()).length) errs.push(invalid(`${path}.listKind`, n.listKind, 'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?'));
  if (n.kind && n.listKind === n.kind) errs.push(invalid(`${path}.listKind`, n.listKind, 'kind and listKind may not be the same'));
  (n.shortNames ?? []).forEach((s, i) => {
    for (const m of isDNS1035Label(s)) errs.push(invalid(`${path}.shortNames[${i}]`, s, m));
  });
  (n.categories ?? []).forEach((c, i) => {
    for (const m of isDNS1035Label(c)) errs.push(invalid(`${path}.categories[${i}]`, c, m));
  });
  return errs;
}

/** The structural-schema rules that matter most: a type everywhere a value has structure, object at the root. */
export function validateStructural(s: Schema, path: string, root = false): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(s as unknown)) return [invalid(path, s, 'must be an object')];
  const typed = !!s.type || s['x-kubernetes-int-or-string'] || s['x-kubernetes-preserve-unknown-fields'];
  if (root) {
    if (!s.type) errs.push(required(`${path}.type`, 'must not be empty at the root'));
    else if (s.type !== 'object') errs.push(invalid(`${path}.type`, s.type, 'must be object at the root'));
  } else if (!typed) errs.push(required(`${path}.type`, 'must not be empty for specified object fields'));
  if (s.type && !['array', 'boolean', 'integer', 'number', 'object', 'string'].includes(s.type)) {
    errs.push(notSupported(`${path}.type`, s.type, ['array', 'boolean', 'integer', 'number', 'object', 'string']));
  }
  if (s.pattern !== undefined) {
    try {
      new RegExp(s.pattern, 'u');
    } catch (err) {
      errs.push(invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(err as Error).message}`));
    }
  }
  if (s.type === 'array' && !s.items) errs.push(required(`${path}.items`, 'must be specified'));
  if (s['x-kubernetes-list-type'] === 'map' && !(s['x-kubernetes-list-map-keys'] ?? []).length) {
    errs.push(required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
  }
  for (const [k, p] of Object.entries(s.properties ?? {})) errs.push(...validateStructural(p, `${path}.properties[${k}]`));
  if (s.items) errs.push(...validateStructural(s.items, `${path}.items`));
  if (isPlainObject(s.additionalProperties)) errs.push(...validateStructural(s.additionalProperties, `${path}.additionalProperties`));
  return errs;
}

/**
 * Wraps the registry's CRD strategy with full validation and status
 * bookkeeping. `base` keeps metadata validation and generation tracking.
 */
export function newCrdStrategy(base: Strategy): Strategy {
  return {
    ...base,
    defaults(obj) {
      base.defaults(obj);
      defaultCrd(obj);
    },
    prepareForCreate(obj) {
      base.prepareForCreate(obj);
      const crd = obj as Crd;
      const stored = storageVersionOf(crd);
      (obj as Obj).status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: stored ? [stored] : [] };
      const m = crd.metadata!;
      if (!(m.finalizers ?? []).includes(cleanupFinalizer)) (m as { finalizers?: string[] }).finalizers = [...(m.finalizers ?? []), cleanupFinalizer];
    },
    prepareForUpdate(newObj, oldObj) {
      base.prepareForUpdate(newObj, oldObj);
      addStoredVersion(newObj as Crd);
    },
    prepareForStatusUpdate(newObj, oldObj) {
      base.prepareForStatusUpdate?.(newObj, oldObj);
    },
    validate(obj) {
      return [...base.validate(obj).filter((e) => !e.field.startsWith('spec')), ...validateCrd(obj as Crd)];
    },
    validateUpdate(newObj, oldObj) {
      const errs = [...base.validateUpdate(newObj, oldObj).filter((e) => !e.field.startsWith('spec') && e.field !== 'metadata.name'), ...validateCrd(newObj as Crd, oldObj as Crd)];
      const n = newObj as Crd;
      const o = oldObj as Crd;
      if (n.spec?.group !== o.spec?.group) errs.push(invalid('spec.group', n.spec?.group, 'field is immutable'));
      if (n.spec?.scope !== o.spec?.scope) errs.push(invalid('spec.scope', n.spec?.scope, 'field is immutable'));
      return errs;
    },
  };
}

/** Upstream's strategy records a new storage version in status.storedVersions. */
function addStoredVersion(crd: Crd): void {
  const v = storageVersionOf(crd);
  if (!v) return;
  const st = ((crd as Obj).status ??= {}) as Obj;
  const list = Array.isArray(st.storedVersions) ? (st.storedVersions as string[]) : [];
  if (!list.includes(v)) st.storedVersions = [...list, v];
}
