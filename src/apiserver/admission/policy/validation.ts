/**
 * The CEL part of ValidatingAdmissionPolicy validation at create and update
 * (pkg/apis/admissionregistration/validation validateVariable,
 * validateValidation, validateMessageExpression, validateAuditAnnotation):
 * every variable (in order, each seeing the ones before), validation
 * expression, messageExpression and auditAnnotation valueExpression is
 * compiled in the policy environment, and each failure becomes a field
 * error such as
 * `spec.validations[0].expression: Invalid value: "object.x(": compilation failed: ERROR: ...`
 * or `... must evaluate to bool but got int`.
 *
 * For the registry's policy strategy (src/apiserver/registry/
 * admissionregistration.ts) to call; matchConditions are checked there with
 * the webhook engine, as upstream checks them with its stateless compiler.
 */
import { DynType, type CelType } from '../../cel/types.js';
import { celTypeOfEngineName, compileExpression, newPolicyEnvironment, type ReturnTypes } from './cel-env.js';
import type { ValidatingAdmissionPolicyLike } from './evaluator.js';

/** A CEL compile failure at a field (cel.Error's type and detail). */
export interface PolicyExpressionError {
  field: string;
  expression: string;
  type: 'Invalid' | 'Required' | 'Internal';
  detail: string;
}

/** Compile errors of a policy's variables, validations, messageExpressions and auditAnnotations. */
export function validatePolicyExpressions(policy: ValidatingAdmissionPolicyLike): PolicyExpressionError[] {
  const spec = policy.spec ?? {};
  const hasParams = !!spec.paramKind;
  const errs: PolicyExpressionError[] = [];
  class Variables {}
  const fields: Record<string, CelType> = {};
  const env = (hasAuthorizer: boolean) => newPolicyEnvironment({ hasParams, hasAuthorizer, variableFields: { ...fields }, variablesClass: Variables });
  const check = (field: string, expression: string, e: ReturnType<typeof env>, returnTypes: ReturnTypes) => {
    const c = compileExpression(e, expression, returnTypes);
    if ('error' in c) errs.push({ field, expression, type: 'Invalid', detail: c.error });
    return c;
  };
  (spec.variables ?? []).forEach((v, i) => {
    if (!v?.expression?.trim()) return;
    const c = check(`spec.variables[${i}].expression`, v.expression, env(true), undefined);
    if (v.name) fields[v.name] = 'program' in c ? celTypeOfEngineName(c.program.outputType) : DynType;
  });
  const withAuthz = env(true);
  const withoutAuthz = env(false);
  (spec.validations ?? []).forEach((v, i) => {
    if (v?.expression?.trim()) check(`spec.validations[${i}].expression`, v.expression, withAuthz, ['bool']);
    if (v?.messageExpression?.trim()) check(`spec.validations[${i}].messageExpression`, v.messageExpression, withoutAuthz, ['string']);
  });
  (spec.auditAnnotations ?? []).forEach((a, i) => {
    const trimmed = a?.valueExpression?.trim() ?? '';
    if (!trimmed || trimmed.length > 5 * 1024) return;
    const c = compileExpression(withAuthz, trimmed, ['string', 'null_type']);
    if ('error' in c) errs.push({ field: `spec.auditAnnotations[${i}].valueExpression`, expression: a.valueExpression, type: 'Invalid', detail: c.error });
  });
  return errs;
}
