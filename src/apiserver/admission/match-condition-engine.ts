/**
 * The CEL engine of admission webhooks' matchConditions
 * (apiserver pkg/admission/plugin/webhook/matchconditions with
 * plugin/cel's filter compiler): expressions over `object` and
 * `oldObject` (dyn), `request` (kubernetes.AdmissionRequest),
 * `namespaceObject` (null for webhooks), `authorizer` and
 * `authorizer.requestResource`, each required to be a bool, evaluated in
 * order within RuntimeCELCostBudgetMatchConditions (2,500,000) and
 * PerCallLimit per expression.
 *
 * `installMatchConditionEngine()` installs it behind the webhook
 * admission's seam (webhook/match-conditions.ts), which both the dispatch
 * of webhooks and the validation of webhook configurations
 * (`webhooks[0].matchConditions[0].expression: Invalid value: "...":
 * compilation failed: ERROR: ...`) use. The environment is the policy
 * plugin's (policy/cel-env.ts) without params and variables, as upstream
 * shares one compiler between them.
 */
import { CelAuthorizer, CelResourceCheck, type AuthzCheckAttributes, type AuthzDecision } from '../cel/library/authz.js';
import { perCallLimit, runtimeCelCostBudgetMatchConditions } from '../cel/env.js';
import type { Activation } from '../cel/interpreter.js';
import { toCel } from '../cel/values.js';
import type { UserInfo } from '../request-info.js';
import { compileExpression, newPolicyEnvironment, requestResourceIdent, requestType, type Compiled } from './policy/cel-env.js';
import { setMatchConditionEngine, type CompiledMatchConditions, type MatchConditionEngine, type MatchConditionInput } from './webhook/match-conditions.js';

/** Answers the `authorizer` checks of one request's user (synchronously). */
export type MatchConditionAuthorizer = (user: UserInfo, attrs: AuthzCheckAttributes) => AuthzDecision;

/** AlwaysAllow, what the embedded server's default authorization is. */
const allowAll: MatchConditionAuthorizer = () => ({ decision: 'allow', reason: '' });

class NoVariables {}

const env = newPolicyEnvironment({ hasParams: false, hasAuthorizer: true, variableFields: {}, variablesClass: NoVariables });

/** Compiles one expression of the matchConditions environment (bool required). */
function compile(expression: string): Compiled {
  return compileExpression(env, expression, ['bool']);
}

/** The engine: compile checks for configurations, compiled conditions for the dispatcher. */
export function newMatchConditionEngine(authorize: MatchConditionAuthorizer = allowAll): MatchConditionEngine {
  return {
    check(expression) {
      const c = compile(expression);
      return 'error' in c ? { type: 'Invalid', detail: c.error } : undefined;
    },
    compile(conditions) {
      const compiled = conditions.map((c) => ({ name: c.name, result: compile(c.expression) }));
      const matcher: CompiledMatchConditions = {
        async evaluate(input: MatchConditionInput) {
          return evaluate(compiled, input, authorize);
        },
      };
      return matcher;
    },
  };
}

function evaluate(compiled: readonly { name: string; result: Compiled }[], input: MatchConditionInput, authorize: MatchConditionAuthorizer): { matches: boolean } | { error: string } {
  const authorizer = new CelAuthorizer((attrs) => authorize(input.user, attrs));
  const req = input.request as Record<string, unknown>;
  const resource = (req.resource ?? {}) as Record<string, string>;
  const vars: Record<string, unknown> = {
    object: toCel(input.object),
    oldObject: toCel(input.oldObject),
    request: toCel(req, requestType),
    namespaceObject: null,
    authorizer,
    [requestResourceIdent]: new CelResourceCheck(authorizer, {
      group: resource.group ?? '',
      resource: resource.resource ?? '',
      subresource: (req.subResource as string | undefined) ?? '',
      namespace: (req.namespace as string | undefined) ?? '',
      name: (req.name as string | undefined) ?? '',
    }),
  };
  const activation: Activation = { resolve: (name) => (Object.prototype.hasOwnProperty.call(vars, name) ? vars[name] : undefined) };
  let remaining = runtimeCelCostBudgetMatchConditions;
  const errors: string[] = [];
  for (const c of compiled) {
    if ('error' in c.result) {
      errors.push(`compilation error: ${c.result.error}`);
      continue;
    }
    const res = c.result.program.evaluate(activation, { costLimit: perCallLimit });
    if (res.cost > remaining) return { error: 'validation failed due to running out of cost budget, no further validation rules will be run' };
    remaining -= res.cost;
    if (res.error) {
      errors.push(`expression '${c.result.expression}' resulted in error: ${res.error.message}`);
      continue;
    }
    // any false condition skips the webhook, whatever errors others had
    if (res.value === false) return { matches: false };
  }
  if (errors.length) return { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
  return { matches: true };
}

/** Installs the engine for the webhook admission plugin and the configurations' validation. */
export function installMatchConditionEngine(authorize?: MatchConditionAuthorizer): void {
  setMatchConditionEngine(newMatchConditionEngine(authorize));
}
