/**
 * Status conditions (`metav1.Condition`) with apimachinery's meta helpers'
 * semantics: one condition per type; `lastTransitionTime` moves only when
 * the status changes; reason, message and observedGeneration are updated in
 * place. Conditions set here always carry `observedGeneration`, and are
 * validated as the API server validates them, so a bad reason fails in the
 * controller (with the field and why) instead of as a 422 on the status write.
 *
 *   const status = (widget.status ??= {});
 *   setStatusCondition(status, { type: 'Ready', status: 'True', reason: 'Available', message: '3 of 3 replicas', observedGeneration: widget.metadata!.generation! });
 */
import type { Condition } from 'kubernetes-types/meta/v1.js';
import { isQualifiedName, invalid, notSupported, regexError, required, tooLong, type FieldError } from '../api/validation.js';
import { realClock, rfc3339, type Clock } from '../util/clock/clock.js';

export type { Condition };
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** What a controller sets: `observedGeneration` is required; `lastTransitionTime` is filled in when the status changes. */
export interface NewCondition {
  type: string;
  status: ConditionStatus;
  /** CamelCase, e.g. `MinimumReplicasAvailable`. */
  reason: string;
  message?: string;
  /** The metadata.generation this condition was computed from. */
  observedGeneration: number;
  lastTransitionTime?: string;
}

/** Anything holding a condition list: usually an object's `status`. */
export interface ConditionHolder {
  conditions?: Condition[];
}

const REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const REASON_RE = new RegExp(`^${REASON_FMT}$`);
const REASON_MSG = regexError(
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
  REASON_FMT,
  'my_name',
  'MY_NAME',
  'MyName',
  'ReasonA,ReasonB',
  'ReasonA:ReasonB',
);
const MAX_REASON_LEN = 1024;
const MAX_MESSAGE_LEN = 32 * 1024;
const STATUSES: readonly ConditionStatus[] = ['False', 'True', 'Unknown'];

/** The API server's checks of one condition (metav1 validation.ValidateCondition); empty when valid. */
export function validateCondition(c: Condition | NewCondition, path = 'status.conditions'): FieldError[] {
  const errs: FieldError[] = [];
  for (const msg of isQualifiedName(c.type ?? '')) errs.push(invalid(`${path}.type`, c.type, msg));
  if (!STATUSES.includes(c.status as ConditionStatus)) errs.push(notSupported(`${path}.status`, c.status, STATUSES));
  if (c.observedGeneration !== undefined && c.observedGeneration < 0) {
    errs.push(invalid(`${path}.observedGeneration`, c.observedGeneration, 'must be greater than or equal to zero'));
  }
  if ('lastTransitionTime' in c && c.lastTransitionTime !== undefined && Number.isNaN(Date.parse(c.lastTransitionTime))) {
    errs.push(invalid(`${path}.lastTransitionTime`, c.lastTransitionTime, 'must be an RFC 3339 time'));
  }
  if (!c.reason) errs.push(required(`${path}.reason`, 'must be set'));
  else {
    if (!REASON_RE.test(c.reason)) errs.push(invalid(`${path}.reason`, c.reason, REASON_MSG));
    if (Buffer.byteLength(c.reason, 'utf8') > MAX_REASON_LEN) errs.push(tooLong(`${path}.reason`, c.reason, MAX_REASON_LEN));
  }
  // Go's len(): the limits count UTF-8 bytes.
  if (Buffer.byteLength(c.message ?? '', 'utf8') > MAX_MESSAGE_LEN) errs.push(tooLong(`${path}.message`, c.message, MAX_MESSAGE_LEN));
  return errs;
}

/** A condition the API server would refuse. */
export class InvalidConditionError extends Error {
  constructor(readonly errors: readonly FieldError[]) {
    super(`invalid condition: ${errors.map((e) => e.message).join('; ')}`);
    this.name = 'InvalidConditionError';
  }
}

export function findStatusCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Sets or adds the condition of `cond.type` on `holder.conditions` (created
 * when absent). Returns whether anything changed. Throws
 * InvalidConditionError for a condition the API server would refuse.
 */
export function setStatusCondition(holder: ConditionHolder, cond: NewCondition, opts: { clock?: Clock } = {}): boolean {
  const errs = validateCondition(cond);
  if (!Number.isInteger(cond.observedGeneration)) errs.push(required('status.conditions.observedGeneration', 'must be the generation the condition was computed from'));
  if (errs.length > 0) throw new InvalidConditionError(errs);
  const now = () => cond.lastTransitionTime ?? rfc3339((opts.clock ?? realClock).now());
  const list = (holder.conditions ??= []);
  const existing = list.find((c) => c.type === cond.type);
  if (!existing) {
    list.push({ type: cond.type, status: cond.status, observedGeneration: cond.observedGeneration, lastTransitionTime: now(), reason: cond.reason, message: cond.message ?? '' });
    return true;
  }
  let changed = false;
  if (existing.status !== cond.status) {
    existing.status = cond.status;
    existing.lastTransitionTime = now();
    changed = true;
  }
  if (existing.reason !== cond.reason) {
    existing.reason = cond.reason;
    changed = true;
  }
  if (existing.message !== (cond.message ?? '')) {
    existing.message = cond.message ?? '';
    changed = true;
  }
  if (existing.observedGeneration !== cond.observedGeneration) {
    existing.observedGeneration = cond.observedGeneration;
    changed = true;
  }
  return changed;
}

/** Removes the condition of `type`; returns whether one was there. */
export function removeStatusCondition(holder: ConditionHolder, type: string): boolean {
  const list = holder.conditions;
  if (!list) return false;
  const i = list.findIndex((c) => c.type === type);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'True';
}

export function isStatusConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'False';
}

/** Whether the condition of `type` has this status. */
export function isStatusConditionPresentAndEqual(conditions: readonly Condition[] | undefined, type: string, status: ConditionStatus): boolean {
  return findStatusCondition(conditions, type)?.status === status;
}
