/**
 * Errors from the API. A `StatusError` carries the server's `Status` (reason,
 * code, details); a `NetworkError` means no usable HTTP response came back.
 * Use the `is*` helpers rather than comparing codes by hand.
 */
import type { Status } from '../api/types.js';

export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Forbidden'
  | 'Unauthorized'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Gone'
  | 'Expired'
  | 'TooManyRequests'
  | 'Timeout'
  | 'ServerTimeout'
  | 'ServiceUnavailable'
  | 'InternalError'
  | 'Unknown'
  | (string & {});

export class StatusError extends Error {
  readonly status: Status;
  constructor(status: Status, options?: { cause?: unknown }) {
    super(status.message || status.reason || `HTTP ${status.code ?? 'error'}`, options);
    this.name = 'StatusError';
    this.status = status;
  }
  get code(): number {
    return this.status.code ?? 0;
  }
  get reason(): string {
    return this.status.reason ?? '';
  }
}

/** The request never got an HTTP response (connection refused, reset, TLS, timeout). */
export class NetworkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NetworkError';
  }
}

/** Builds a failure Status like kube-apiserver's. */
export function newStatus(
  code: number,
  reason: StatusReason,
  message: string,
  details?: Status['details'],
): Status {
  return statusInGoOrder({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

type Details = NonNullable<Status['details']>;
type Cause = NonNullable<Details['causes']>[number];

function ordered<T extends object>(obj: T, keys: readonly (keyof T)[]): T {
  const out = {} as T;
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  for (const k of Object.keys(obj) as (keyof T)[]) if (!(k in out) && obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/**
 * The Status with its fields in the order Go's encoding/json writes the
 * metav1.Status struct (kind, apiVersion, metadata, status, message,
 * reason, details, code; details: name, group, kind, uid, causes,
 * retryAfterSeconds; causes: reason, message, field), as kube-apiserver's
 * bodies read.
 */
export function statusInGoOrder(s: Status): Status {
  const out = ordered(s, ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']);
  if (s.details) {
    const d = ordered(s.details, ['name', 'group', 'kind', 'uid', 'causes', 'retryAfterSeconds'] as (keyof Details)[]);
    if (d.causes) d.causes = d.causes.map((c) => ordered(c, ['reason', 'message', 'field'] as (keyof Cause)[]));
    out.details = d;
  }
  return out;
}

function reasonOf(err: unknown): string | undefined {
  return err instanceof StatusError ? err.status.reason : undefined;
}
function codeOf(err: unknown): number | undefined {
  return err instanceof StatusError ? err.status.code : undefined;
}

export function isStatusError(err: unknown): err is StatusError {
  return err instanceof StatusError;
}
export function isNetworkError(err: unknown): err is NetworkError {
  return err instanceof NetworkError;
}
export function isNotFound(err: unknown): boolean {
  return reasonOf(err) === 'NotFound' || (codeOf(err) === 404 && !reasonOf(err));
}
export function isAlreadyExists(err: unknown): boolean {
  return reasonOf(err) === 'AlreadyExists';
}
export function isConflict(err: unknown): boolean {
  return reasonOf(err) === 'Conflict' || (codeOf(err) === 409 && reasonOf(err) !== 'AlreadyExists');
}
/** 410: a resourceVersion or continue token too old for the server. */
export function isGone(err: unknown): boolean {
  return reasonOf(err) === 'Gone' || reasonOf(err) === 'Expired' || codeOf(err) === 410;
}
export function isResourceExpired(err: unknown): boolean {
  return reasonOf(err) === 'Expired' || isGone(err);
}
export function isInvalid(err: unknown): boolean {
  return reasonOf(err) === 'Invalid' || codeOf(err) === 422;
}
export function isBadRequest(err: unknown): boolean {
  return reasonOf(err) === 'BadRequest' || codeOf(err) === 400;
}
export function isForbidden(err: unknown): boolean {
  return reasonOf(err) === 'Forbidden' || codeOf(err) === 403;
}
export function isUnauthorized(err: unknown): boolean {
  return reasonOf(err) === 'Unauthorized' || codeOf(err) === 401;
}
export function isTooManyRequests(err: unknown): boolean {
  return reasonOf(err) === 'TooManyRequests' || codeOf(err) === 429;
}
export function isServerTimeout(err: unknown): boolean {
  return reasonOf(err) === 'ServerTimeout' || reasonOf(err) === 'Timeout' || codeOf(err) === 504;
}
export function isServiceUnavailable(err: unknown): boolean {
  return reasonOf(err) === 'ServiceUnavailable' || codeOf(err) === 503;
}
export function isInternalError(err: unknown): boolean {
  return reasonOf(err) === 'InternalError' || codeOf(err) === 500;
}
