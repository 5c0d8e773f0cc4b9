/**
 * The CEL environment of ValidatingAdmissionPolicy expressions (apiserver
 * admission/plugin/cel compile.go and composition.go), shared by the
 * admission plugin (compile.ts, evaluation) and the status controller's
 * type checker (type-checker.ts):
 *
 * - the variables `object`, `oldObject` (dyn, or the matched kind's type
 *   when type checking), `request` (kubernetes.AdmissionRequest),
 *   `namespaceObject` (kubernetes.Namespace), `params` (with a paramKind),
 *   `authorizer` and `authorizer.requestResource` (not for
 *   messageExpressions), and `variables` (kubernetes.variables: one field
 *   per spec.variables entry, typed by its expression);
 * - return types: validations and matchConditions bool, messageExpressions
 *   string, auditAnnotations string or null (`must evaluate to bool but got
 *   int`); other compile errors read `compilation failed: ERROR: ...`.
 *
 * Depends on src/apiserver/cel only (no server state), so that the
 * controller side can type-check with it.
 */
import { CelEnvironment, type Program, type VariableDecl } from '../../cel/env.js';
import { authorizerTypeName } from '../../cel/library/authz.js';
import { DynType, TimestampType, celGoTypeName, declBool, declDyn, declInt, declString, listOf, mapOf, newListDecl, newMapDecl, newObjectDecl, objectType, type CelType, type DeclField, type DeclType } from '../../cel/types.js';

// ---------------------------------------------------------------------------
// Declared types of `request` and `namespaceObject` (BuildRequestType, BuildNamespaceType)
// ---------------------------------------------------------------------------

function declTimestamp(): DeclType {
  return { name: 'timestamp', celType: TimestampType, maxElements: 32, minSerializedSize: 21 };
}

function obj(name: string, fields: [string, DeclType, boolean][]): DeclType {
  const m = new Map<string, DeclField>();
  for (const [n, type, required] of fields) m.set(n, { name: n, property: n === 'UID' ? 'uid' : n, type, required });
  return newObjectDecl(name, m);
}

const maxUint = 2 ** 64;
const stringList = () => newListDecl(declString(), maxUint);
const stringMap = () => newMapDecl(declString(), declString(), maxUint);

export function buildRequestType(): DeclType {
  const gvk = obj('kubernetes.GroupVersionKind', [
    ['group', declString(), true],
    ['version', declString(), true],
    ['kind', declString(), true],
  ]);
  const gvr = obj('kubernetes.GroupVersionResource', [
    ['group', declString(), true],
    ['version', declString(), true],
    ['resource', declString(), true],
  ]);
  const userInfo = obj('kubernetes.UserInfo', [
    ['username', declString(), false],
    ['uid', declString(), false],
    ['groups', stringList(), false],
    ['extra', newMapDecl(declString(), stringList(), maxUint), false],
  ]);
  return obj('kubernetes.AdmissionRequest', [
    ['kind', gvk, true],
    ['resource', gvr, true],
    ['subResource', declString(), false],
    ['requestKind', gvk, true],
    ['requestResource', gvr, true],
    ['requestSubResource', declString(), false],
    ['name', declString(), true],
    ['namespace', declString(), false],
    ['operation', declString(), true],
    ['userInfo', userInfo, true],
    ['dryRun', declBool(), false],
    ['options', declDyn(), false],
  ]);
}

export function buildNamespaceType(): DeclType {
  const spec = obj('kubernetes.NamespaceSpec', [['finalizers', stringList(), true]]);
  const condition = obj('kubernetes.NamespaceCondition', [
    ['status', declString(), true],
    ['type', declString(), true],
    ['lastTransitionTime', declTimestamp(), true],
    ['message', declString(), true],
    ['reason', declString(), true],
  ]);
  const status = obj('kubernetes.NamespaceStatus', [
    ['conditions', newListDecl(condition, maxUint), true],
    ['phase', declString(), true],
  ]);
  const metadata = obj('kubernetes.NamespaceMetadata', [
    ['name', declString(), true],
    ['generateName', declString(), true],
    ['namespace', declString(), true],
    ['labels', stringMap(), true],
    ['annotations', stringMap(), true],
    ['UID', declString(), true],
    ['creationTimestamp', declTimestamp(), true],
    ['deletionGracePeriodSeconds', declInt(), true],
    ['deletionTimestamp', declTimestamp(), true],
    ['generation', declInt(), true],
    ['resourceVersion', declString(), true],
    ['finalizers', stringList(), true],
  ]);
  return obj('kubernetes.Namespace', [
    ['metadata', metadata, true],
    ['spec', spec, true],
    ['status', status, true],
  ]);
}

export const requestType = buildRequestType();
export const namespaceType = buildNamespaceType();

// ---------------------------------------------------------------------------
// Types by name
// ---------------------------------------------------------------------------

/**
 * convertCelTypeToDeclType for a variable's output type (the engine's
 * spelling): primitives, lists and maps keep their type, everything else
 * (object types, optionals, type) is dyn.
 */
export function celTypeOfEngineName(name: string | undefined): CelType {
  if (!name) return DynType;
  const n = name.trim();
  switch (n) {
    case 'bool':
    case 'int':
    case 'uint':
    case 'double':
    case 'string':
    case 'bytes':
    case 'dyn':
      return { kind: 'primitive', name: n };
    case 'null':
      return { kind: 'primitive', name: 'null_type' };
    case 'google.protobuf.Timestamp':
      return TimestampType;
    case 'google.protobuf.Duration':
      return { kind: 'primitive', name: 'duration' };
  }
  const inner = (prefix: string): string | undefined => (n.startsWith(`${prefix}<`) && n.endsWith('>') ? n.slice(prefix.length + 1, -1) : undefined);
  const l = inner('list');
  if (l !== undefined) return listOf(celTypeOfEngineName(l));
  const m = inner('map');
  if (m !== undefined) {
    let depth = 0;
    for (let i = 0; i < m.length; i++) {
      const c = m[i];
      if (c === '<') depth++;
      else if (c === '>') depth--;
      else if (c === ',' && depth === 0) return mapOf(celTypeOfEngineName(m.slice(0, i)), celTypeOfEngineName(m.slice(i + 1)));
    }
  }
  return DynType;
}

/** cel-go's Type.String() of a checked output type (`int`, `list(string)`, `null_type`). */
export function outputTypeString(engineName: string): string {
  if (engineName === 'null') return 'null_type';
  return celGoTypeName(engineName);
}

// ---------------------------------------------------------------------------
// Environments
// ---------------------------------------------------------------------------

export const variablesTypeName = 'kubernetes.variables';
export const requestResourceAuthorizerVar = 'authorizer.requestResource';
/**
 * The engine has no qualified variable names, so `authorizer.requestResource`
 * is compiled as this identifier of the same length (error positions stay
 * right) and spelled back in messages.
 */
export const requestResourceIdent = 'authorizer_requestResource';

/** Replaces `authorizer.requestResource` (outside string literals) with requestResourceIdent. */
export function rewriteQualifiedVariables(src: string): string {
  if (!src.includes(requestResourceAuthorizerVar)) return src;
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      // A string literal (raw, triple-quoted or plain), copied as is.
      const triple = src.startsWith(c.repeat(3), i);
      const close = triple ? c.repeat(3) : c;
      const raw = i > 0 && /[rR]/.test(src[i - 1]!);
      let j = i + close.length;
      while (j < src.length && !src.startsWith(close, j)) j += !raw && src[j] === '\\' ? 2 : 1;
      j = Math.min(src.length, j + close.length);
      out += src.slice(i, j);
      i = j;
      continue;
    }
    if (src.startsWith(requestResourceAuthorizerVar, i) && (i === 0 || !/[\w.]/.test(src[i - 1]!)) && !/\w/.test(src[i + requestResourceAuthorizerVar.length] ?? '')) {
      out += requestResourceIdent;
      i += requestResourceAuthorizerVar.length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

export interface EnvShape {
  hasParams: boolean;
  hasAuthorizer: boolean;
  /** The variables declared so far, with their types. */
  variableFields: Readonly<Record<string, CelType>>;
  /** The class of `variables` values for this policy. */
  variablesClass: new () => object;
  /** The declared type of `object` and `oldObject` (type checking); dyn when absent. */
  objectType?: DeclType;
  /** The declared type of `params` (type checking); dyn when absent. */
  paramsType?: DeclType;
}

export function newPolicyEnvironment(s: EnvShape): CelEnvironment {
  const variables: VariableDecl[] = [
    { name: 'object', type: s.objectType ? s.objectType.celType : DynType },
    { name: 'oldObject', type: s.objectType ? s.objectType.celType : DynType },
    { name: 'namespaceObject', type: objectType(namespaceType.name) },
    { name: 'request', type: objectType(requestType.name) },
    { name: 'variables', type: objectType(variablesTypeName) },
  ];
  if (s.hasParams) variables.push({ name: 'params', type: s.paramsType ? s.paramsType.celType : DynType });
  if (s.hasAuthorizer) {
    variables.push({ name: 'authorizer', type: objectType(authorizerTypeName) });
    variables.push({ name: requestResourceIdent, type: objectType('kubernetes.authorization.ResourceCheck') });
  }
  return new CelEnvironment({
    variables,
    declTypes: [requestType, namespaceType, ...(s.objectType ? [s.objectType] : []), ...(s.paramsType ? [s.paramsType] : [])],
    objectTypes: [{ name: variablesTypeName, ctor: s.variablesClass, fields: s.variableFields }],
  });
}


/** A compile result as upstream's CompilationResult: a program, or a cel.Error detail. */
export type Compiled = { program: Program; expression: string } | { error: string; expression: string };

/** The accepted output types of an expression kind, in cel-go's names; undefined: any. */
export type ReturnTypes = readonly string[] | undefined;

export function compileExpression(env: CelEnvironment, expression: string, returnTypes: ReturnTypes): Compiled {
  const source = rewriteQualifiedVariables(expression);
  const r = env.compile(source);
  if (r.error) {
    const detail = source === expression ? r.error.message : r.error.message.split(requestResourceIdent).join(requestResourceAuthorizerVar);
    return { error: `compilation failed: ${detail}`, expression };
  }
  if (returnTypes) {
    const got = outputTypeString(r.program.outputType);
    if (!returnTypes.includes(got)) {
      const reason = returnTypes.length === 1 ? `must evaluate to ${returnTypes[0]} but got ${got}` : `must evaluate to one of [${returnTypes.join(' ')}] but got ${got}`;
      return { error: reason, expression };
    }
  }
  return { program: r.program, expression };
}

