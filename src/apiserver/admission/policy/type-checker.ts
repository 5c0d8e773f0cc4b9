/**
 * Type checking of a ValidatingAdmissionPolicy's expressions against the
 * schemas of the kinds it matches (apiserver admission/plugin/policy/
 * validating/typechecking.go), for the validatingadmissionpolicy-status
 * controller's `status.typeChecking.expressionWarnings`:
 *
 * - the kinds: every group/version/resource its matchConstraints'
 *   resourceRules name without wildcards (resources with `*` or a
 *   subresource skipped), resolved to kinds, at most 10, sorted;
 * - for each kind with a schema, `object`/`oldObject` typed by it and
 *   `params` by the paramKind's schema (a paramKind without a schema
 *   leaves `params` undeclared, as upstream), variables compiled first;
 * - each validation's expression and messageExpression compiled against
 *   every kind; the errors become one warning per field
 *   (`spec.validations[0].expression`), each line `<gvk>: <cel errors>`.
 *
 * Schemas come from a SchemaResolver: openApiV3SchemaResolver reads the
 * server's /openapi/v3 (as upstream's ClientDiscoveryResolver does for
 * custom resources; upstream reads built-in kinds from compiled-in
 * definitions, which /openapi/v3 serves too). A kind without a schema is
 * not checked. Type checking never changes how the policy is enforced.
 *
 * Depends only on src/apiserver/cel (and cel-env.ts), no server state.
 */
import type { Schema } from '../../crd/schema.js';
import { assignTypeNames, schemaDeclType, type DeclType } from '../../cel/types.js';
import { compileExpression, newPolicyEnvironment, requestResourceAuthorizerVar, requestResourceIdent, rewriteQualifiedVariables } from './cel-env.js';
import type { CelType } from '../../cel/types.js';
import { DynType } from '../../cel/types.js';
import { celTypeOfEngineName } from './cel-env.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** schema.GroupVersionKind String(). */
export function gvkString(g: GroupVersionKind): string {
  return `${g.group}/${g.version}, Kind=${g.kind}`;
}

/** Resolves the OpenAPI schema of a kind (refs inlined); undefined when the server has none (ErrSchemaNotFound). */
export interface SchemaResolver {
  resolveSchema(gvk: GroupVersionKind): Promise<Schema | undefined>;
}

/** RESTMapper.KindsFor for a fully specified resource; empty when unknown. `refresh` forgets cached discovery. */
export interface KindResolver {
  kindsFor(gvr: GroupVersionResource): Promise<GroupVersionKind[]>;
  refresh?(): void;
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** The parts of a policy the type checker reads. */
export interface TypeCheckedPolicy {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string } | null;
    matchConstraints?: { resourceRules?: { apiGroups?: string[]; apiVersions?: string[]; resources?: string[] }[] } | null;
    variables?: { name: string; expression: string }[];
    validations?: { expression: string; messageExpression?: string }[];
  };
}

const maxTypesToCheck = 10;

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** typesToCheck: the kinds to check the expressions against, sorted by group, version, kind. */
export async function typesToCheck(policy: TypeCheckedPolicy, kinds: KindResolver): Promise<GroupVersionKind[]> {
  const rules = policy.spec?.matchConstraints?.resourceRules ?? [];
  const found = new Map<string, GroupVersionKind>();
  let refreshed = false;
  const sorted = () => [...found.values()].sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
  for (const rule of rules) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    if (groups.length === 0 || groups.some((g) => g.includes('*'))) continue;
    if (versions.length === 0 || versions.some((v) => v.includes('*'))) continue;
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    if (resources.length === 0) continue;
    let count = 0;
    for (const group of [...groups].sort()) {
      for (const version of [...versions].sort()) {
        for (const resource of [...resources].sort()) {
          const gvr = { group, version, resource };
          let resolved = await kinds.kindsFor(gvr);
          if (resolved.length === 0) {
            if (refreshed) continue;
            kinds.refresh?.();
            refreshed = true;
            resolved = await kinds.kindsFor(gvr);
            if (resolved.length === 0) continue;
          }
          for (const k of resolved) {
            if (!k.kind) continue;
            found.set(gvkString(k), k);
            count++;
            if (count === maxTypesToCheck) return sorted();
          }
        }
      }
    }
  }
  return sorted();
}

let typeNameCounter = 0;

/** The declared type of a kind's schema, named uniquely (generateUniqueTypeName). */
function declTypeOf(schema: Schema, kind: string): DeclType | undefined {
  const t = schemaDeclType(schema, true);
  if (!t) return undefined;
  typeNameCounter = (typeNameCounter + 1) % 1_000_000_000;
  return assignTypeNames(t, `${kind}${typeNameCounter}`);
}

function paramsGVK(policy: TypeCheckedPolicy): GroupVersionKind | undefined {
  const pk = policy.spec?.paramKind;
  if (!pk) return undefined;
  const av = pk.apiVersion ?? '';
  const parts = av.split('/');
  if (parts.length > 2) return undefined;
  const [group, version] = parts.length === 1 ? ['', parts[0]!] : [parts[0]!, parts[1]!];
  return { group, version, kind: pk.kind ?? '' };
}

export interface TypeCheckerDeps {
  schemas: SchemaResolver;
  kinds: KindResolver;
}

/** Compiles `expression` in the environment of one kind; the issues text, or undefined when it compiles. */
type KindChecker = (expression: string) => string | undefined;

function kindChecker(objectType: DeclType, paramsType: DeclType | undefined, variables: readonly { name: string; expression: string }[]): KindChecker {
  class Variables {}
  const fields: Record<string, CelType> = {};
  const shape = { hasParams: !!paramsType, hasAuthorizer: true, variablesClass: Variables, objectType, ...(paramsType ? { paramsType } : {}) };
  for (const v of variables) {
    const env = newPolicyEnvironment({ ...shape, variableFields: { ...fields } });
    const c = compileExpression(env, v.expression, undefined);
    fields[v.name] = 'program' in c ? celTypeOfEngineName(c.program.outputType) : DynType;
  }
  const env = newPolicyEnvironment({ ...shape, variableFields: fields });
  return (expression) => {
    const source = rewriteQualifiedVariables(expression);
    const r = env.compile(source);
    if (!r.error) return undefined;
    return source === expression ? r.error.message : r.error.message.split(requestResourceIdent).join(requestResourceAuthorizerVar);
  };
}

/** TypeChecker.Check: the warnings to publish (empty when every expression checks). */
export async function typeCheck(policy: TypeCheckedPolicy, deps: TypeCheckerDeps): Promise<ExpressionWarning[]> {
  const checkers: { gvk: GroupVersionKind; check: KindChecker }[] = [];
  const pgvk = paramsGVK(policy);
  let paramsType: DeclType | undefined;
  if (pgvk) {
    const s = await deps.schemas.resolveSchema(pgvk);
    paramsType = s ? declTypeOf(s, pgvk.kind) : undefined;
  }
  for (const gvk of await typesToCheck(policy, deps.kinds)) {
    const s = await deps.schemas.resolveSchema(gvk);
    const t = s ? declTypeOf(s, gvk.kind) : undefined;
    if (!t) continue;
    checkers.push({ gvk, check: kindChecker(t, paramsType, policy.spec?.variables ?? []) });
  }
  const results = (expression: string): string => {
    const lines: string[] = [];
    for (const c of checkers) {
      const issues = c.check(expression);
      if (issues !== undefined) lines.push(`${gvkString(c.gvk)}: ${issues}\n`);
    }
    return lines.join('\n');
  };
  const warnings: ExpressionWarning[] = [];
  (policy.spec?.validations ?? []).forEach((v, i) => {
    const w = results(v.expression);
    if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (!v.messageExpression) return;
    const m = results(v.messageExpression);
    if (m) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
  });
  return warnings;
}

// ---------------------------------------------------------------------------
// Schemas from /openapi/v3
// ---------------------------------------------------------------------------

type OpenAPISchema = Record<string, unknown>;

const refPrefix = '#/components/schemas/';

function refOf(s: OpenAPISchema): string | undefined {
  if (typeof s.$ref === 'string') return s.$ref;
  const allOf = s.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && typeof (allOf[0] as OpenAPISchema)?.$ref === 'string') return (allOf[0] as OpenAPISchema).$ref as string;
  return undefined;
}

const copied = [
  'format', 'description', 'nullable', 'default', 'enum', 'required', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type',
] as const;

/**
 * An OpenAPI v3 component schema as a structural schema, refs inlined
 * (resolver.PopulateRefs: a ref back to a schema being inlined becomes an
 * object that preserves unknown fields). Built-in int-or-string fields
 * (`format: int-or-string`) get x-kubernetes-int-or-string.
 */
export function populateRefs(schema: OpenAPISchema, schemas: Readonly<Record<string, OpenAPISchema>>, visiting: Set<string> = new Set()): Schema {
  const ref = refOf(schema);
  if (ref !== undefined) {
    const name = ref.startsWith(refPrefix) ? ref.slice(refPrefix.length) : ref;
    const target = schemas[name];
    if (!target || visiting.has(name)) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    visiting.add(name);
    const { $ref: _r, allOf: _a, ...rest } = schema;
    const out = populateRefs({ ...target, ...rest }, schemas, visiting);
    visiting.delete(name);
    return out;
  }
  const out: Record<string, unknown> = {};
  const type = schema.type;
  if (typeof type === 'string') out.type = type;
  else if (Array.isArray(type)) out.type = type.find((t) => t !== 'null');
  for (const k of copied) if (schema[k] !== undefined) out[k] = schema[k];
  if (out.format === 'int-or-string') out['x-kubernetes-int-or-string'] = true;
  const props = schema.properties;
  if (props && typeof props === 'object') {
    const p: Record<string, Schema> = {};
    for (const [k, v] of Object.entries(props as Record<string, OpenAPISchema>)) p[k] = populateRefs(v, schemas, visiting);
    out.properties = p;
  }
  if (schema.items && typeof schema.items === 'object') out.items = populateRefs(schema.items as OpenAPISchema, schemas, visiting);
  const ap = schema.additionalProperties;
  if (typeof ap === 'boolean') out.additionalProperties = ap;
  else if (ap && typeof ap === 'object') out.additionalProperties = populateRefs(ap as OpenAPISchema, schemas, visiting);
  return out as Schema;
}

function hasGVK(s: OpenAPISchema, gvk: GroupVersionKind): boolean {
  const list = s['x-kubernetes-group-version-kind'];
  return Array.isArray(list) && list.some((x: { group?: string; version?: string; kind?: string }) => (x.group ?? '') === gvk.group && x.version === gvk.version && x.kind === gvk.kind);
}

/**
 * Schemas read from the server's /openapi/v3 through `get` (a GET
 * returning parsed JSON). The index is read once per call; group-version
 * documents are cached by their hashed URL.
 */
export function openApiV3SchemaResolver(get: (path: string) => Promise<unknown>): SchemaResolver {
  const docs = new Map<string, Promise<Record<string, OpenAPISchema>>>();
  return {
    async resolveSchema(gvk) {
      const index = (await get('/openapi/v3')) as { paths?: Record<string, { serverRelativeURL?: string }> };
      const gvPath = gvk.group ? `apis/${gvk.group}/${gvk.version}` : `api/${gvk.version}`;
      const url = index.paths?.[gvPath]?.serverRelativeURL;
      if (!url) return undefined;
      let doc = docs.get(url);
      if (!doc) {
        doc = get(url).then((d) => ((d as { components?: { schemas?: Record<string, OpenAPISchema> } }).components?.schemas ?? {}));
        docs.set(url, doc);
        doc.catch(() => docs.delete(url));
        if (docs.size > 200) docs.delete(docs.keys().next().value!);
      }
      const schemas = await doc;
      const name = Object.keys(schemas).find((n) => hasGVK(schemas[n]!, gvk));
      if (!name) return undefined;
      return populateRefs({ $ref: `${refPrefix}${name}` }, schemas);
    },
  };
}
