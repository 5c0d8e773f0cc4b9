/**
 * Compilation of the x-kubernetes-validations rules of one schema node
 * (apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go): each
 * rule against `self` (the node's declared type) and `oldSelf` (the same
 * type, or optional of it for `optionalOldSelf` rules), with its static
 * cost estimate, the worst-case number of times it can run (its
 * cardinality) and its messageExpression. Environments are built once per
 * distinct schema node and cached, so a CRD's rules compile once.
 */
import { createHash } from 'node:crypto';
import type { Schema } from '../../crd/schema.js';
import { CelEnvironment, perCallLimit, type Program } from '../env.js';
import { declTypeSizes, estimateCost } from '../estimator.js';
import { assignTypeNames, maxRequestSizeBytes, optionalOf, type DeclType } from '../types.js';
import { FieldPathError, validFieldPath } from './field-path.js';

/** An x-kubernetes-validations entry (apiextensions/v1 ValidationRule). */
export interface ValidationRule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** apiservercel.Error: the kind of a compilation failure and cel-go's detail. */
export interface RuleError {
  readonly type: 'Invalid' | 'Required' | 'InternalError';
  readonly detail: string;
}

/** CompilationResult: what one rule compiled to. An empty rule has neither program nor error. */
export interface RuleCompilation {
  readonly program?: Program;
  readonly error?: RuleError;
  /** The rule references `oldSelf` (a transition rule). */
  readonly usesOldSelf: boolean;
  /** The worst-case cost of one evaluation (checker estimate's max). */
  readonly maxCost: number;
  /** How often the rule may run at most, from the node's minimum serialized size. */
  readonly maxCardinality: number;
  readonly messageExpression?: Program;
  readonly messageExpressionError?: RuleError;
  readonly messageExpressionMaxCost: number;
  /** The rule's fieldPath, validated and normalized (`spec.foo`); empty when unset or invalid. */
  readonly normalizedFieldPath: string;
}

/** The environments of one schema node: `oldSelf` as the node's type, and as optional of it. */
interface NodeEnvironments {
  readonly declType: DeclType;
  readonly env: CelEnvironment;
  optionalEnv?: CelEnvironment;
}

const envCache = new Map<string, NodeEnvironments>();
const maxCachedEnvs = 2000;

/** A type name that is stable for a schema, so recompiling the same CRD reuses its types. */
function selfTypeName(key: string): string {
  return `selfType${createHash('sha1').update(key).digest('hex').slice(0, 12)}`;
}

function environmentsFor(declType: DeclType, nodeSchema: Schema, isResourceRoot: boolean): NodeEnvironments {
  const key = `${isResourceRoot ? 'r' : 'n'}:${JSON.stringify(nodeSchema)}`;
  let e = envCache.get(key);
  if (!e) {
    const scoped = assignTypeNames(declType, selfTypeName(key));
    const env = new CelEnvironment({
      declTypes: [scoped],
      variables: [
        { name: 'self', type: scoped.celType },
        { name: 'oldSelf', type: scoped.celType },
      ],
    });
    e = { declType: scoped, env };
    if (envCache.size >= maxCachedEnvs) envCache.delete(envCache.keys().next().value!);
    envCache.set(key, e);
  }
  return e;
}

function optionalEnvironment(e: NodeEnvironments): CelEnvironment {
  e.optionalEnv ??= new CelEnvironment({
    declTypes: [e.declType],
    variables: [
      { name: 'self', type: e.declType.celType },
      { name: 'oldSelf', type: optionalOf(e.declType.celType) },
    ],
  });
  return e.optionalEnv;
}

/** maxCardinality: how many times data of this minimum size fits in a request. */
export function maxCardinality(minSerializedSize: number): number {
  return Math.floor(maxRequestSizeBytes / (minSerializedSize + 1));
}

/** The compiled rules of a node, and the named DeclType their programs evaluate `self` against. */
export interface NodeCompilation {
  readonly declType: DeclType;
  readonly rules: readonly RuleCompilation[];
}

/**
 * Compile: every rule of `rules` (the node's x-kubernetes-validations)
 * against `declType`, the DeclType of `nodeSchema` (SchemaDeclType).
 */
export function compileRules(nodeSchema: Schema, declType: DeclType, rules: readonly ValidationRule[], isResourceRoot: boolean, limit = perCallLimit): NodeCompilation {
  const envs = environmentsFor(declType, nodeSchema, isResourceRoot);
  const sizes = declTypeSizes(envs.declType);
  const cardinality = maxCardinality(envs.declType.minSerializedSize);
  const results = rules.map((rule) => compileRule(nodeSchema, rule, rule.optionalOldSelf ? optionalEnvironment(envs) : envs.env, sizes, cardinality, limit));
  return { declType: envs.declType, rules: results };
}

function compileRule(s: Schema, rule: ValidationRule, env: CelEnvironment, sizes: ReturnType<typeof declTypeSizes>, cardinality: number, _limit: number): RuleCompilation {
  const empty = { usesOldSelf: false, maxCost: 0, maxCardinality: 0, messageExpressionMaxCost: 0, normalizedFieldPath: '' };
  const src = rule.rule ?? '';
  if (src.trim() === '') return empty;
  const c = env.compile(src);
  if (c.error) return { ...empty, error: { type: 'Invalid', detail: `compilation failed: ${c.error.message}` } };
  const program = c.program;
  if (program.outputType !== 'bool') return { ...empty, error: { type: 'Invalid', detail: 'cel expression must evaluate to a bool' } };
  const usesOldSelf = program.references('oldSelf');
  const maxCost = estimateCost(program.ast, sizes).max;
  let result: RuleCompilation = { program, usesOldSelf, maxCost, maxCardinality: cardinality, messageExpressionMaxCost: 0, normalizedFieldPath: '' };
  if (rule.messageExpression) {
    const m = env.compile(rule.messageExpression);
    if (m.error) return { ...result, messageExpressionError: { type: 'Invalid', detail: `messageExpression compilation failed: ${m.error.message}` } };
    if (m.program.outputType !== 'string') return { ...result, messageExpressionError: { type: 'Invalid', detail: 'messageExpression must evaluate to a string' } };
    result = { ...result, messageExpression: m.program, messageExpressionMaxCost: estimateCost(m.program.ast, sizes).max };
  }
  if (rule.fieldPath) {
    try {
      result = { ...result, normalizedFieldPath: validFieldPath(rule.fieldPath, s).path };
    } catch (err) {
      if (!(err instanceof FieldPathError)) throw err;
    }
  }
  return result;
}
