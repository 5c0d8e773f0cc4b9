/**
 * One evaluation of a compiled policy for one binding and param
 * (apiserver admission/plugin/policy/validating/validator.go): the
 * matchConditions first, then every validation with its message, then the
 * audit annotations, each failure turned into a decision by the policy's
 * failurePolicy.
 */
import { isFailure, maxEvaluatedMessageExpressionSizeBytes, runtimeCELCostBudget, type CompiledPolicy, type ExpressionOutcome, type PolicyInput } from './evaluator.js';

export type PolicyDecisionAction = 'admit' | 'deny';
export type PolicyDecisionEvaluation = 'admit' | 'deny' | 'error';

export interface PolicyDecision {
  action: PolicyDecisionAction;
  evaluation: PolicyDecisionEvaluation;
  message: string;
  /** A validation's reason (Invalid when it sets none); empty for errors. */
  reason: string;
}

export type AuditAnnotationAction = 'publish' | 'exclude' | 'error';

export interface PolicyAuditAnnotation {
  key: string;
  action: AuditAnnotationAction;
  value: string;
  error: string;
}

export interface ValidateResult {
  /** One per validation (or a single one for a failure of the whole evaluation); empty when matchConditions excluded the request. */
  decisions: PolicyDecision[];
  auditAnnotations: PolicyAuditAnnotation[];
}

/** The parts of a policy the validator reads besides the compiled expressions. */
export interface ValidatorSpec {
  failurePolicy: string;
  validations: readonly { expression: string; message?: string; reason?: string }[];
  auditAnnotations: readonly { key: string; valueExpression: string }[];
}

export interface ValidatorInputs {
  /** For matchConditions and validations: with the authorizer, the namespace trimmed by CreateNamespaceObject. */
  withAuthorizer: PolicyInput;
  /** For messageExpressions: the same without the authorizer. */
  withoutAuthorizer: PolicyInput;
  /** For auditAnnotations: params only (no authorizer) and the namespace untrimmed, as upstream passes them. */
  forAuditAnnotations: PolicyInput;
}

const actionForError = (f: string): PolicyDecisionAction => (f === 'Ignore' ? 'admit' : 'deny');
const auditActionForError = (f: string): AuditAnnotationAction => (f === 'Ignore' ? 'exclude' : 'error');

function errorDecision(f: string, message: string): PolicyDecision {
  return { action: actionForError(f), evaluation: 'error', message, reason: '' };
}

/** utilerrors.NewAggregate(errs).Error(). */
function aggregate(messages: string[]): string {
  return messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`;
}

/** matchconditions.Matcher.Match: true, false, or the error that applies the failurePolicy. */
function matchConditions(policy: CompiledPolicy, failurePolicy: string, input: PolicyInput): { matches: boolean } | { error: string } {
  const mc = policy.matchConditions;
  if (!mc) return { matches: true };
  const r = mc.evaluator.forInput(input, runtimeCELCostBudget);
  if (isFailure(r)) return failurePolicy === 'Ignore' ? { matches: false } : { error: r.failure };
  const errors: string[] = [];
  for (const res of r.results) {
    if (!res) continue;
    if (res.kind === 'error') errors.push(res.message);
    else if (res.value === false) return { matches: false };
  }
  if (errors.length > 0) return failurePolicy === 'Ignore' ? { matches: false } : { error: aggregate(errors) };
  return { matches: true };
}

/** The message of a failed validation: messageExpression's string, else message, else the expression. */
function failureMessage(v: { expression: string; message?: string }, messageResult: ExpressionOutcome | undefined): string {
  let message = '';
  if (messageResult?.kind === 'value' && typeof messageResult.value === 'string') {
    message = messageResult.value.trim();
    if (Buffer.byteLength(message) > maxEvaluatedMessageExpressionSizeBytes) message = '';
    if (message.includes('\n')) message = '';
  }
  if (message === '' && v.message) message = v.message.trim();
  if (message === '') message = `failed expression: ${v.expression.trim()}`;
  return message;
}

export function validate(policy: CompiledPolicy, spec: ValidatorSpec, inputs: ValidatorInputs): ValidateResult {
  const f = spec.failurePolicy || 'Fail';
  const m = matchConditions(policy, f, inputs.withAuthorizer);
  if ('error' in m) return { decisions: [errorDecision(f, m.error)], auditAnnotations: [] };
  if (!m.matches) return { decisions: [], auditAnnotations: [] };

  const evals = policy.validations.forInput(inputs.withAuthorizer, runtimeCELCostBudget);
  if (isFailure(evals)) return { decisions: [errorDecision(f, evals.failure)], auditAnnotations: [] };
  const messages = policy.messageExpressions.forInput(inputs.withoutAuthorizer, evals.remainingBudget);
  const decisions: PolicyDecision[] = spec.validations.map((v, i): PolicyDecision => {
    const res = evals.results[i];
    if (!res) return errorDecision(f, 'Invalid type sent to validator, expected ValidationCondition');
    if (res.kind === 'error') return errorDecision(f, res.message);
    if (isFailure(messages)) return errorDecision(f, `failed messageExpression: ${messages.failure}`);
    if (res.value === true) return { action: 'admit', evaluation: 'admit', message: '', reason: '' };
    return { action: 'deny', evaluation: 'deny', reason: v.reason || 'Invalid', message: failureMessage(v, messages.results[i]) };
  });

  const audits = policy.auditAnnotations.forInput(inputs.forAuditAnnotations, runtimeCELCostBudget);
  if (isFailure(audits)) return { decisions: [errorDecision(f, audits.failure)], auditAnnotations: [] };
  const auditAnnotations: PolicyAuditAnnotation[] = [];
  spec.auditAnnotations.forEach((a, i) => {
    const res = audits.results[i];
    if (!res) return;
    const out: PolicyAuditAnnotation = { key: a.key, action: 'exclude', value: '', error: '' };
    if (res.kind === 'error') {
      out.action = auditActionForError(f);
      out.error = res.message;
    } else if (typeof res.value === 'string') {
      const value = res.value.trim();
      if (value) {
        out.action = 'publish';
        out.value = value;
      }
    } else if (res.value !== null && res.value !== undefined) {
      out.action = 'error';
      out.error = `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${policy.typeName(res.value)}. Return type must be either string or null.`;
    }
    auditAnnotations.push(out);
  });
  return { decisions, auditAnnotations };
}
