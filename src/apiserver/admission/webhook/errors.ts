/**
 * The errors admission webhooks produce, worded as upstream's
 * (apiserver pkg/util/webhook/error.go, admission/plugin/webhook/errors):
 *
 * - a webhook that could not be called (transport failure, timeout, bad
 *   answer) is ErrCallingWebhook; with failurePolicy Fail the request gets
 *   `Internal error occurred: failed calling webhook "<name>": <reason>`
 *   (500 InternalError), with Ignore it goes on;
 * - a webhook that answered allowed: false is a rejection: its result
 *   Status, code at least 400, message prefixed with
 *   `admission webhook "<name>" denied the request`;
 * - a dry-run request to a webhook that may have side effects is a 400.
 */
import type { Status } from '../../../api/types.js';
import { newStatus, statusInGoOrder, StatusError } from '../../../client/errors.js';
import { deepCopy } from '../../../util/json/deep-copy.js';

/** ErrCallingWebhook: the webhook gave no usable answer. */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhookName: string,
    /** Go's Reason text (`failed to call webhook: Post ...`). */
    readonly reason: string,
  ) {
    super(`failed calling webhook ${JSON.stringify(webhookName)}: ${reason}`);
    this.name = 'CallingWebhookError';
  }

  /** apierrors.NewInternalError(err): what failurePolicy Fail answers. */
  toStatusError(): StatusError {
    return new StatusError(newStatus(500, 'InternalError', `Internal error occurred: ${this.message}`, { causes: [{ message: this.message }] }), { cause: this });
  }
}

/** ToStatusErr: a webhook's refusal as the request's error. */
export function webhookRejection(webhookName: string, result: Status | undefined | null): StatusError {
  const deniedBy = `admission webhook ${JSON.stringify(webhookName)} denied the request`;
  const r: Status = result && typeof result === 'object' ? deepCopy(result) : { status: 'Failure' };
  if (typeof r.code !== 'number' || r.code < 400) r.code = 400;
  if (!r.status || r.status === 'Success') r.status = 'Failure';
  if (r.message) r.message = `${deniedBy}: ${r.message}`;
  else if (r.reason) r.message = `${deniedBy}: ${r.reason}`;
  else r.message = `${deniedBy} without explanation`;
  return new StatusError(statusInGoOrder({ ...r, kind: 'Status', apiVersion: 'v1', metadata: r.metadata ?? {} }));
}

/** NewDryRunUnsupportedErr. */
export function dryRunUnsupported(webhookName: string): StatusError {
  return new StatusError(newStatus(400, 'BadRequest', `admission webhook ${JSON.stringify(webhookName)} does not support dry run`));
}
