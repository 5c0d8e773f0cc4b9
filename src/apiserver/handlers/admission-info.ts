/**
 * What a write request hands to admission besides the object: its options
 * (the meta.k8s.io/v1 CreateOptions, UpdateOptions, PatchOptions or
 * DeleteOptions an AdmissionReview carries, decoded from the query as
 * kube-apiserver decodes them) and where webhook warnings go (the
 * response's `Warning` headers).
 */
import type { RequestScope } from '../context.js';
import type { AdmissionRequestInfo } from '../admission/admission.js';
import { addWarnings } from './field-validation.js';

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** The options of a create, update or patch, as in the request's query. */
export function writeOptionsOf(s: RequestScope, kind: OptionsKind): Record<string, unknown> {
  const q = s.query;
  const out: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  const dryRun = q.getAll('dryRun');
  if (dryRun.length) out.dryRun = dryRun;
  if (kind === 'PatchOptions') {
    const force = q.get('force');
    if (force === 'true') out.force = true;
  }
  const fm = q.get('fieldManager');
  if (fm) out.fieldManager = fm;
  const fv = q.get('fieldValidation');
  if (fv) out.fieldValidation = fv;
  return out;
}

/** DeleteOptions as sent (body first, then the query), typed. */
export function deleteOptionsOf(body: unknown, query: URLSearchParams): Record<string, unknown> {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const out: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' };
  const grace = b.gracePeriodSeconds ?? query.get('gracePeriodSeconds') ?? undefined;
  if (grace !== undefined && grace !== null) out.gracePeriodSeconds = Number(grace);
  if (b.preconditions && typeof b.preconditions === 'object') out.preconditions = b.preconditions;
  const orphan = b.orphanDependents ?? query.get('orphanDependents') ?? undefined;
  if (orphan !== undefined && orphan !== null) out.orphanDependents = orphan === true || orphan === 'true';
  const policy = b.propagationPolicy ?? query.get('propagationPolicy') ?? undefined;
  if (policy !== undefined && policy !== null) out.propagationPolicy = policy;
  const dryRun = Array.isArray(b.dryRun) ? b.dryRun : query.getAll('dryRun');
  if (dryRun.length) out.dryRun = dryRun;
  return out;
}

/** The admission side of a request: options and a warning sink writing `Warning` headers. */
export function admissionInfo(s: RequestScope, options: Record<string, unknown>): AdmissionRequestInfo {
  return { options, warn: (m) => addWarnings(s.res, [m]), annotations: {} };
}
