/**
 * API errors as kube-apiserver words them (apimachinery/pkg/api/errors).
 * Every failure a handler produces is a StatusError carrying a `Status`; the
 * router writes `status.code` and the Status JSON.
 */
import type { Status } from '../api/types.js';
import { StatusError, newStatus, statusInGoOrder } from '../client/errors.js';

export { StatusError };

/** The group/resource pair as errors name it: `deployments.apps`, `pods`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** `Deployment.apps`, `Pod`: how Invalid errors name the kind. */
export function qualifiedKind(group: string, kind: string): string {
  return group ? `${kind}.${group}` : kind;
}

function fail(code: number, reason: string, message: string, details?: Status['details']): StatusError {
  return new StatusError(newStatus(code, reason, message, details));
}

function details(gr: GroupResource, name: string | undefined): NonNullable<Status['details']> {
  const d: NonNullable<Status['details']> = { kind: gr.resource };
  if (name) d.name = name;
  if (gr.group) d.group = gr.group;
  return d;
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return fail(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, details(gr, name));
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return fail(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, details(gr, name));
}

/** The optimistic-concurrency conflict of an update with a stale resourceVersion. */
export function conflictModified(gr: GroupResource, name: string): StatusError {
  return conflict(gr, name, 'the object has been modified; please apply your changes to the latest version and try again');
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return fail(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, details(gr, name));
}

/** A field error as produced by validation (src/api/validation.ts FieldError). */
export interface FieldErrorLike {
  type: string;
  field: string;
  message: string;
}

/** 422 Invalid: `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be ...`. */
export function invalid(group: string, kind: string, name: string, errs: readonly FieldErrorLike[]): StatusError {
  const msgs = errs.map((e) => e.message);
  const agg = msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
  const d: NonNullable<Status['details']> = {
    name,
    kind,
    causes: errs.map((e) => ({ reason: e.type, message: stripField(e), field: e.field })),
  };
  if (group) d.group = group;
  return fail(422, 'Invalid', `${qualifiedKind(group, kind)} "${name}" is invalid: ${agg}`, d);
}

/** apimachinery's causes carry the message without the leading `field: `. */
function stripField(e: FieldErrorLike): string {
  const prefix = `${e.field}: `;
  return e.field && e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}

export function badRequest(message: string): StatusError {
  return fail(400, 'BadRequest', message);
}

/** 403 as NewForbidden: `pods "x" is forbidden: <why>`. */
export function forbidden(gr: GroupResource, name: string, why: string): StatusError {
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  return fail(403, 'Forbidden', `${subject} is forbidden: ${why}`, details(gr, name));
}

export function methodNotAllowed(verb: string, gr: GroupResource): StatusError {
  return fail(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualifiedResource(gr)}"`, details(gr, ''));
}

export function notSupported(message: string, code = 501): StatusError {
  return fail(code, code === 501 ? 'NotImplemented' : 'BadRequest', message);
}

/** 410 Expired, e.g. a compacted continue token or resourceVersion. */
export function expired(message: string): StatusError {
  return fail(410, 'Expired', message);
}

/** 410 Gone as a watch from a compacted revision reports it. */
export function gone(message: string): StatusError {
  return fail(410, 'Gone', message);
}

export function tooManyRequests(message: string, causes?: NonNullable<Status['details']>['causes'], retryAfterSeconds?: number): StatusError {
  const d: NonNullable<Status['details']> = {};
  if (causes) d.causes = causes;
  if (retryAfterSeconds !== undefined) d.retryAfterSeconds = retryAfterSeconds;
  return fail(429, 'TooManyRequests', message, causes || retryAfterSeconds !== undefined ? d : undefined);
}

export function requestEntityTooLarge(message: string): StatusError {
  return fail(413, 'RequestEntityTooLarge', message);
}

export function unsupportedMediaType(contentType: string): StatusError {
  return fail(415, 'UnsupportedMediaType', `the body of the request was in an unknown format (${contentType}) - accepted media types include: application/json, application/yaml`);
}

export function notAcceptable(message: string): StatusError {
  return fail(406, 'NotAcceptable', message);
}

export function internalError(err: unknown): StatusError {
  const msg = err instanceof Error ? err.message : String(err);
  return new StatusError(
    newStatus(500, 'InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] }),
    { cause: err },
  );
}

/** A success Status (delete of an object that is gone at once). */
export function successStatus(d?: Status['details']): Status {
  return statusInGoOrder({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(d ? { details: d } : {}) });
}

/** Turns anything thrown into a StatusError; unknown errors become 500. */
export function toStatusError(err: unknown): StatusError {
  return err instanceof StatusError ? err : internalError(err);
}
