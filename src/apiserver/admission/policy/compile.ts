/**
 * Compiling a ValidatingAdmissionPolicy's expressions (environment and
 * compile errors: cel-env.ts) and evaluating them (apiserver
 * admission/plugin/cel activation.go, composition.go): each expression
 * with the per-call cost limit, charged to the shared budget
 * (`validation failed due to running out of cost budget, ...` ends the
 * whole evaluation); a runtime error reads `expression '<expr>' resulted
 * in error: <cel-go message>`, a compile error `compilation error:
 * <detail>`; each variable is evaluated at most once per evaluation, its
 * cost charged to the budget too. Compiled once per policy generation.
 */
import { perCallLimit } from '../../cel/env.js';
import { CelEvalError } from '../../cel/errors.js';
import { DynType, type CelType } from '../../cel/types.js';
import { toCel, fromJsonDyn } from '../../cel/values.js';
import { UnsignedInt, Duration } from '@marcbachmann/cel-js/evaluator';
import { Optional } from '@marcbachmann/cel-js';
import type { Activation, LazyFields, Run } from '../../cel/interpreter.js';
import type { CompiledPolicy, ConditionEvaluator, ExpressionOutcome, ForInputFailure, ForInputResult, PolicyInput, ValidatingAdmissionPolicyLike } from './evaluator.js';
import { celTypeOfEngineName, compileExpression, namespaceType, newPolicyEnvironment, requestResourceIdent, requestType, type Compiled } from './cel-env.js';

/** The namespace as upstream's reflection over a Go struct shows it: every declared field present (zero values). */
function namespaceWithZeroValues(ns: Record<string, unknown>): Record<string, unknown> {
  const m = (ns.metadata ?? {}) as Record<string, unknown>;
  const spec = (ns.spec ?? {}) as Record<string, unknown>;
  const status = (ns.status ?? {}) as Record<string, unknown>;
  const zeroTime = '0001-01-01T00:00:00Z';
  return {
    metadata: {
      name: m.name ?? '',
      generateName: m.generateName ?? '',
      namespace: m.namespace ?? '',
      labels: m.labels ?? {},
      annotations: m.annotations ?? {},
      uid: m.uid ?? '',
      creationTimestamp: m.creationTimestamp ?? zeroTime,
      ...(m.deletionGracePeriodSeconds !== undefined ? { deletionGracePeriodSeconds: m.deletionGracePeriodSeconds } : {}),
      ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
      generation: m.generation ?? 0,
      resourceVersion: m.resourceVersion ?? '',
      finalizers: m.finalizers ?? [],
    },
    spec: { finalizers: spec.finalizers ?? [] },
    status: {
      conditions: ((status.conditions ?? []) as Record<string, unknown>[]).map((c) => ({
        status: c.status ?? '',
        type: c.type ?? '',
        lastTransitionTime: c.lastTransitionTime ?? zeroTime,
        message: c.message ?? '',
        reason: c.reason ?? '',
      })),
      phase: status.phase ?? '',
    },
  };
}

/** cel-go's name of a runtime value's type (ref.Val.Type()), as upstream prints it in messages. */
export function runtimeTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null_type';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
  }
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  if (v instanceof Optional) return 'optional_type';
  return 'map';
}

/** One evaluation's composition state: the lazily evaluated `variables` and the cost they spent. */
class CompositionContext {
  cost = 0;
  getAndResetCost(): number {
    const c = this.cost;
    this.cost = 0;
    return c;
  }
}

/** Builds the `variables` value class of one policy: fields evaluated on first read, once per evaluation. */
function variablesClassFor(compiled: ReadonlyMap<string, Compiled>) {
  return class PolicyVariables implements LazyFields {
    readonly #cache = new Map<string, { value: unknown } | { error: CelEvalError }>();
    activation: Activation | undefined;
    context: CompositionContext | undefined;

    lazyField(name: string, _run: Run): unknown {
      const c = compiled.get(name);
      if (!c) return undefined;
      let hit = this.#cache.get(name);
      if (!hit) {
        if ('error' in c) hit = { error: new CelEvalError(`composited variable ${JSON.stringify(name)} fails to compile: ${c.error}`) };
        else {
          const r = c.program.evaluate(this.activation!, { costLimit: perCallLimit });
          this.context!.cost += r.cost;
          hit = r.error ? { error: new CelEvalError(`composited variable ${JSON.stringify(name)} fails to evaluate: ${r.error.message}`) } : { value: r.value };
        }
        this.#cache.set(name, hit);
      }
      if ('error' in hit) throw hit.error;
      return hit.value;
    }
  };
}

type VariablesClass = ReturnType<typeof variablesClassFor>;

const outOfBudget = 'validation failed due to running out of cost budget, no further validation rules will be run';

function activationFor(input: PolicyInput, variables: InstanceType<VariablesClass>): Activation {
  const request = toCel(input.request, requestType);
  const namespace = input.namespaceObject ? toCel(namespaceWithZeroValues(input.namespaceObject), namespaceType) : null;
  const object = fromJsonDyn(input.object);
  const oldObject = fromJsonDyn(input.oldObject);
  const params = fromJsonDyn(input.params);
  return {
    resolve(name) {
      switch (name) {
        case 'object':
          return object;
        case 'oldObject':
          return oldObject;
        case 'params':
          return params;
        case 'request':
          return request;
        case 'namespaceObject':
          return namespace;
        case 'authorizer':
          return input.authorizer;
        case requestResourceIdent:
          return input.requestResourceAuthorizer;
        case 'variables':
          return variables;
        default:
          return undefined;
      }
    },
  };
}

function conditionEvaluator(list: readonly (Compiled | undefined)[], Variables: VariablesClass): ConditionEvaluator {
  return {
    forInput(input: PolicyInput, budget: number): ForInputResult | ForInputFailure {
      const results: (ExpressionOutcome | undefined)[] = new Array(list.length).fill(undefined);
      if (list.length === 0) return { results, remainingBudget: budget };
      const context = new CompositionContext();
      const variables = new Variables();
      const activation = activationFor(input, variables);
      variables.activation = activation;
      variables.context = context;
      let remaining = budget;
      for (const [i, c] of list.entries()) {
        if (!c) continue;
        if ('error' in c) {
          results[i] = { kind: 'error', message: `compilation error: ${c.error}` };
          continue;
        }
        const r = c.program.evaluate(activation, { costLimit: perCallLimit });
        const compositionCost = context.getAndResetCost();
        if (compositionCost > remaining) return { failure: outOfBudget, outOfBudget: true };
        remaining -= compositionCost;
        if (r.cost > remaining) return { failure: outOfBudget, outOfBudget: true };
        remaining -= r.cost;
        results[i] = r.error ? { kind: 'error', message: `expression '${c.expression}' resulted in error: ${r.error.message}` } : { kind: 'value', value: r.value };
      }
      return { results, remainingBudget: remaining };
    },
  };
}

// ---------------------------------------------------------------------------
// The policy compiler
// ---------------------------------------------------------------------------

/** compilePolicy: every expression of the policy, compiled once. */
export function compilePolicy(policy: ValidatingAdmissionPolicyLike): CompiledPolicy {
  const spec = policy.spec ?? {};
  const hasParams = !!spec.paramKind;
  // Variables first, each compiled against the ones before it (CompileAndStoreVariables).
  const compiledVariables = new Map<string, Compiled>();
  const fields: Record<string, CelType> = {};
  const Variables = variablesClassFor(compiledVariables);
  for (const v of spec.variables ?? []) {
    const env = newPolicyEnvironment({ hasParams, hasAuthorizer: true, variableFields: { ...fields }, variablesClass: Variables });
    const c = compileExpression(env, v.expression, undefined);
    fields[v.name] = 'program' in c ? celTypeOfEngineName(c.program.outputType) : DynType;
    compiledVariables.set(v.name, c);
  }
  const withAuthz = newPolicyEnvironment({ hasParams, hasAuthorizer: true, variableFields: fields, variablesClass: Variables });
  const withoutAuthz = newPolicyEnvironment({ hasParams, hasAuthorizer: false, variableFields: fields, variablesClass: Variables });
  const validations = (spec.validations ?? []).map((v) => compileExpression(withAuthz, v.expression, ['bool']));
  const messages = (spec.validations ?? []).map((v) => (v.messageExpression ? compileExpression(withoutAuthz, v.messageExpression, ['string']) : undefined));
  const audits = (spec.auditAnnotations ?? []).map((a) => compileExpression(withAuthz, a.valueExpression, ['string', 'null_type']));
  const conditions = spec.matchConditions ?? [];
  const out: CompiledPolicy = {
    validations: conditionEvaluator(validations, Variables),
    messageExpressions: conditionEvaluator(messages, Variables),
    auditAnnotations: conditionEvaluator(audits, Variables),
    typeName: runtimeTypeName,
  };
  if (conditions.length > 0) {
    out.matchConditions = {
      names: conditions.map((c) => c.name),
      evaluator: conditionEvaluator(
        conditions.map((c) => compileExpression(withAuthz, c.expression, ['bool'])),
        Variables,
      ),
    };
  }
  return out;
}
