/**
 * Admission handlers for your own kinds (controller-runtime's
 * CustomDefaulter and CustomValidator): a defaulter mutates the object and
 * the answer is the JSON patch; a validator throws to deny and may return
 * warnings.
 *
 *   server.register('/default-staticsite', defaultingWebhook(StaticSite, (site) => { site.spec.replicas ??= 1; }));
 *   server.register('/validate-staticsite', validatingWebhook(StaticSite, {
 *     validateCreate: (site) => { if (site.spec.domain.endsWith('.local')) throw new Error('spec.domain: .local is not published'); },
 *   }));
 *
 * A thrown StatusError answers with its Status; any other error denies with
 * 403 Forbidden and the error's message, as controller-runtime's Denied.
 */
import type { Status } from 'kubernetes-types/meta/v1.js';
import { StatusError } from '../../client/errors.js';
import type { Logger } from '../../util/log/logger.js';
import type { ResourceKind, RuntimeObject } from '../kinds.js';
import { createJsonPatch } from './json-patch-diff.js';
import type { AdmissionRequest, AdmissionResponse, Operation } from './review-types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** What a handler is told besides the object. */
export interface AdmissionContext<T> {
  readonly request: AdmissionRequest<T>;
  readonly operation: Operation;
  readonly dryRun: boolean;
  readonly log: Logger;
}

/** Answers one AdmissionRequest. */
export type AdmissionHandler = (request: AdmissionRequest, log: Logger) => Promise<AdmissionResponse>;

export type Warnings = string[] | void;

export interface Validator<T> {
  validateCreate?(obj: T, ctx: AdmissionContext<T>): Warnings | Promise<Warnings>;
  validateUpdate?(oldObj: T, obj: T, ctx: AdmissionContext<T>): Warnings | Promise<Warnings>;
  validateDelete?(obj: T, ctx: AdmissionContext<T>): Warnings | Promise<Warnings>;
}

export type Defaulter<T> = (obj: T, ctx: AdmissionContext<T>) => void | Promise<void>;

/** A denial (403 Forbidden) with `message`, as controller-runtime's admission.Denied. */
export function denied(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { metadata: {}, status: 'Failure', message, reason: 'Forbidden', code: 403 } };
}

/** An answer for a request the handler cannot process (admission.Errored). */
export function errored(uid: string, code: number, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { metadata: {}, status: 'Failure', message, code } };
}

function fromError(uid: string, err: unknown): AdmissionResponse {
  if (err instanceof StatusError) {
    const s: Status = { ...err.status };
    delete (s as { kind?: string }).kind;
    delete (s as { apiVersion?: string }).apiVersion;
    return { uid, allowed: false, status: s };
  }
  return denied(uid, err instanceof Error ? err.message : String(err));
}

function checkKind(kind: ResourceKind, req: AdmissionRequest): AdmissionResponse | undefined {
  if (req.kind?.group === kind.group && req.kind?.kind === kind.kind) return undefined;
  return errored(req.uid, 400, `this webhook handles ${kind.kind}.${kind.group || 'core'}, not ${req.kind?.kind}.${req.kind?.group || 'core'}`);
}

function context<T>(req: AdmissionRequest, log: Logger): AdmissionContext<T> {
  return { request: req as AdmissionRequest<T>, operation: req.operation, dryRun: req.dryRun === true, log };
}

/** A mutating webhook that runs `defaulter` on created and updated objects and answers with the JSON patch. */
export function defaultingWebhook<T extends RuntimeObject>(kind: ResourceKind<T>, defaulter: Defaulter<T>): AdmissionHandler {
  return async (req, log) => {
    const bad = checkKind(kind, req);
    if (bad) return bad;
    if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return { uid: req.uid, allowed: true };
    if (req.object === undefined || req.object === null) return errored(req.uid, 400, 'there is no content to decode');
    const original = req.object;
    const obj = deepCopy(original) as T;
    try {
      await defaulter(obj, context<T>(req, log));
    } catch (err) {
      return fromError(req.uid, err);
    }
    const ops = createJsonPatch(original, obj);
    if (ops.length === 0) return { uid: req.uid, allowed: true };
    return { uid: req.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
  };
}

/** A validating webhook: `validator`'s methods throw to deny, and may return warnings. */
export function validatingWebhook<T extends RuntimeObject>(kind: ResourceKind<T>, validator: Validator<T>): AdmissionHandler {
  return async (req, log) => {
    const bad = checkKind(kind, req);
    if (bad) return bad;
    const ctx = context<T>(req, log);
    let warnings: Warnings = undefined;
    try {
      switch (req.operation) {
        case 'CREATE':
          warnings = await validator.validateCreate?.(req.object as T, ctx);
          break;
        case 'UPDATE':
          warnings = await validator.validateUpdate?.(req.oldObject as T, req.object as T, ctx);
          break;
        case 'DELETE':
          warnings = await validator.validateDelete?.(req.oldObject as T, ctx);
          break;
        case 'CONNECT':
          break;
        default: {
          const never: never = req.operation;
          return errored(req.uid, 400, `unknown operation ${String(never)}`);
        }
      }
    } catch (err) {
      return fromError(req.uid, err);
    }
    return { uid: req.uid, allowed: true, ...(warnings && warnings.length > 0 ? { warnings } : {}) };
  };
}
