/**
 * The seam between admission policies and CEL: what a compiled policy
 * offers the validator (apiserver admission/plugin/cel ConditionEvaluator
 * and CompositedCompiler). compile.ts implements it over
 * src/apiserver/cel; tests may implement it directly.
 *
 * Every evaluator of one policy shares the policy's `variables`: each
 * `forInput` call evaluates a variable at most once, lazily, and charges
 * its cost to that call's budget, as upstream's composition context does.
 */
import type { CelAuthorizer } from '../../cel/library/authz.js';

/** What the expressions see; JSON values (objects at the matched version). */
export interface PolicyInput {
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
  /** The admission.k8s.io/v1 AdmissionRequest without uid, object and oldObject. */
  request: Record<string, unknown>;
  /** The param object (with apiVersion and kind), or null (no paramKind, or no paramRef in the binding). */
  params: Record<string, unknown> | null;
  /** The request's Namespace as CreateNamespaceObject trims it, or null (cluster-scoped, or a Namespace itself). */
  namespaceObject: Record<string, unknown> | null;
  /** The `authorizer` variable (and `authorizer.requestResource`), for expressions that declare it. */
  authorizer?: CelAuthorizer;
  /** The request's own check, bound to the request's resource (authorizer.requestResource). */
  requestResourceAuthorizer?: unknown;
}

/** One expression's outcome: a value, or an error message worded as upstream's EvaluationResult.Error. */
export type ExpressionOutcome =
  | { kind: 'value'; value: unknown }
  | { kind: 'error'; message: string };

/** Thrown (returned) when a forInput call as a whole fails: out of budget, or an internal failure. */
export interface ForInputFailure {
  failure: string;
  /** ErrOutOfBudget (upstream distinguishes it from internal errors for messageExpressions). */
  outOfBudget: boolean;
}

export interface ForInputResult {
  /** One entry per expression; undefined where there is no expression (a validation without messageExpression). */
  results: (ExpressionOutcome | undefined)[];
  remainingBudget: number;
}

/** A list of compiled expressions evaluated in order against one input (ConditionEvaluator). */
export interface ConditionEvaluator {
  forInput(input: PolicyInput, budget: number): ForInputResult | ForInputFailure;
}

/** A compiled policy (upstream's Validator inputs). */
export interface CompiledPolicy {
  /** matchConditions (names in order), or undefined when the policy has none. */
  matchConditions?: { names: readonly string[]; evaluator: ConditionEvaluator };
  /** spec.validations[*].expression (bool). */
  validations: ConditionEvaluator;
  /** spec.validations[*].messageExpression (string); entries without one are undefined. */
  messageExpressions: ConditionEvaluator;
  /** spec.auditAnnotations[*].valueExpression (string or null). */
  auditAnnotations: ConditionEvaluator;
  /** cel-go's name of a result value's type (`int`, `map(string, dyn)`), for upstream's messages. */
  typeName(value: unknown): string;
}

/** Compiles a policy; called once per policy generation. */
export type PolicyCompiler = (policy: ValidatingAdmissionPolicyLike) => CompiledPolicy;

/** The parts of a ValidatingAdmissionPolicy the compiler reads. */
export interface ValidatingAdmissionPolicyLike {
  metadata?: { name?: string };
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string } | null;
    failurePolicy?: string;
    matchConditions?: { name: string; expression: string }[];
    variables?: { name: string; expression: string }[];
    validations?: { expression: string; message?: string; messageExpression?: string; reason?: string }[];
    auditAnnotations?: { key: string; valueExpression: string }[];
  };
}

export function isFailure(r: ForInputResult | ForInputFailure): r is ForInputFailure {
  return 'failure' in r;
}

// k8s.io/apiserver/pkg/apis/cel/config.go
/** RuntimeCELCostBudget: the budget of one evaluation of a policy's validations (then their messages), or of its matchConditions. */
export const runtimeCELCostBudget = 10_000_000;
/** PerCallLimit: the cost limit of one expression. */
export const perCallLimit = 1_000_000;
/** MaxEvaluatedMessageExpressionSizeBytes. */
export const maxEvaluatedMessageExpressionSizeBytes = 5 * 1024;
