/**
 * The errors patching produces, shaped as kube-apiserver's patch handler
 * shapes them (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go).
 */
import { StatusError, newStatus } from '../../client/errors.js';

/** 400: undecodable patches and malformed directives. */
export function patchBadRequest(message: string, cause?: unknown): StatusError {
  return new StatusError(newStatus(400, 'BadRequest', message), cause === undefined ? undefined : { cause });
}

/**
 * 422 as NewGenericServerResponse words it: a fixed message, the real reason
 * in `details.causes[0]` (kubectl prints "The request is invalid: ...").
 */
export function patchUnprocessable(message: string, cause?: unknown): StatusError {
  return new StatusError(
    newStatus(422, 'Invalid', 'the server rejected our request due to an error in our request', {
      causes: [{ reason: 'UnexpectedServerResponse', message }],
    }),
    cause === undefined ? undefined : { cause },
  );
}

/** 415 for patch types the resource does not accept (strategic merge on custom resources). */
export function patchUnsupportedMediaType(accepted: readonly string[]): StatusError {
  return new StatusError(
    newStatus(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`),
  );
}

/** A plain error from the merge algorithms that the caller maps to a Status. */
export class PatchError extends Error {
  constructor(message: string, readonly code: 400 | 422 | 500 = 400) {
    super(message);
    this.name = 'PatchError';
  }
}
