/**
 * Turning HTTP failures into StatusErrors the way client-go does: a Status
 * body is used as is; any other body gets a synthesised Status whose reason
 * follows the code (apimachinery's NewGenericServerResponse).
 */
import type { Status } from '../api/types.js';
import { StatusError, newStatus, type StatusReason } from './errors.js';

/** What the request was about, for messages like `(get pods web)`. */
export interface RequestTarget {
  group?: string;
  resource?: string;
  name?: string;
}

/** Parses `body` as a Status when it is one. */
export function asStatus(body: string): Status | undefined {
  if (!body) return undefined;
  try {
    const v = JSON.parse(body) as Record<string, unknown>;
    if (v && typeof v === 'object' && v.kind === 'Status') return v as Status;
  } catch {
    // Not JSON: the caller synthesises a Status.
  }
  return undefined;
}

/** The error for a non-2xx response. */
export function responseError(
  code: number,
  method: string,
  body: string,
  contentType: string | undefined,
  retryAfterSeconds: number | undefined,
  target?: RequestTarget,
): StatusError {
  const status = asStatus(body);
  if (status) {
    if (!status.code) status.code = code;
    return new StatusError(status);
  }
  const isText = !!contentType && /^text\//i.test(contentType.trim());
  let serverMessage = isText ? body.trim() : 'unknown';
  if (serverMessage.length > 1024) serverMessage = serverMessage.slice(0, 1024) + '...';
  return new StatusError(genericServerResponse(code, method, serverMessage, retryAfterSeconds, target));
}

/** apimachinery's NewGenericServerResponse, with isUnexpectedResponse true. */
export function genericServerResponse(code: number, method: string, serverMessage: string, retryAfterSeconds?: number, target?: RequestTarget): Status {
  let reason: StatusReason = 'Unknown';
  let message = `the server responded with the status code ${code} but did not return more information`;
  switch (code) {
    case 409:
      reason = method === 'POST' ? 'AlreadyExists' : 'Conflict';
      message = 'the server reported a conflict';
      break;
    case 404:
      reason = 'NotFound';
      message = 'the server could not find the requested resource';
      break;
    case 400:
      reason = 'BadRequest';
      message = 'the server rejected our request for an unknown reason';
      break;
    case 401:
      reason = 'Unauthorized';
      message = 'the server has asked for the client to provide credentials';
      break;
    case 403:
      reason = 'Forbidden';
      message = serverMessage;
      break;
    case 405:
      reason = 'MethodNotAllowed';
      message = 'the server does not allow this method on the requested resource';
      break;
    case 406:
      reason = 'NotAcceptable';
      message = serverMessage;
      break;
    case 415:
      reason = 'UnsupportedMediaType';
      message = serverMessage;
      break;
    case 422:
      reason = 'Invalid';
      message = 'the server rejected our request due to an error in our request';
      break;
    case 429:
      reason = 'TooManyRequests';
      message = 'the server has received too many requests and has asked us to try again later';
      break;
    case 503:
      reason = 'ServiceUnavailable';
      message = 'the server is currently unable to handle the request';
      break;
    case 504:
      reason = 'Timeout';
      message = 'the server was unable to return a response in the time allotted, but may still be processing the request';
      break;
    default:
      if (code >= 500) {
        reason = 'InternalError';
        message = `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
      }
  }
  const qualified = target?.resource ? (target.group ? `${target.resource}.${target.group}` : target.resource) : '';
  if (qualified && target?.name) message = `${message} (${method.toLowerCase()} ${qualified} ${target.name})`;
  else if (qualified) message = `${message} (${method.toLowerCase()} ${qualified})`;
  return newStatus(code, reason, message, {
    group: target?.group ?? '',
    kind: target?.resource ?? '',
    name: target?.name ?? '',
    causes: [{ reason: 'UnexpectedServerResponse', message: serverMessage }],
    ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
  });
}

/** Parses `Warning` header values (RFC 7234) and returns the texts of code-299 warnings, as Kubernetes sends them. */
export function parseWarnings(values: string | string[] | undefined): string[] {
  if (!values) return [];
  const out: string[] = [];
  for (const header of Array.isArray(values) ? values : [values]) {
    const re = /\s*(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,|$)/y;
    let m: RegExpExecArray | null;
    while (re.lastIndex < header.length && (m = re.exec(header)) !== null) {
      if (m[1] === '299') out.push(m[3]!.replace(/\\(.)/g, '$1'));
    }
  }
  return out;
}
