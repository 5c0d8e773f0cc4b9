/**
 * What every write handler does around the store: field validation of the
 * incoming object and `metadata.managedFields` bookkeeping.
 *
 * The manager of a non-apply write is the `fieldManager` parameter or the
 * user agent up to its first '/' (kube-apiserver's default). Managed fields
 * are computed on the defaulted object, as upstream's field manager sees the
 * decoded (defaulted) object, so `kubectl create` owns the defaulted fields.
 */
import type { KubeObject } from '../../api/types.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { RequestScope } from '../context.js';
import { defaultFieldManager, recordUpdate } from '../patch/index.js';
import { openApiOf } from '../router.js';
import { badRequest } from '../status.js';
import { addWarnings, fieldValidationOf, validateFields, type FieldValidation } from './field-validation.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** The manager name for a non-apply write; 400 when `fieldManager` is longer than 128 characters. */
export function fieldManagerOf(s: RequestScope): string {
  const fm = s.query.get('fieldManager');
  if (fm && fm.length > 128) throw badRequest(`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes`);
  return defaultFieldManager(fm, s.req.headers['user-agent']);
}

/**
 * Validates `obj`'s fields per the request's `fieldValidation` (Strict
 * throws: a create/update body's 400 unless `strictError` says otherwise;
 * Warn adds Warning headers; both Warn and Ignore prune unknown fields of
 * built-in kinds from `obj`). Custom resources are checked against their
 * structural schema (ServedResource.unknownFields).
 */
export function checkFields(
  s: RequestScope,
  obj: KubeObject,
  jsonText?: string,
  mode: FieldValidation = fieldValidationOf(s.query),
  strictError?: (problems: string[]) => Error,
  /** readObjectAndText decoded `obj` into its kind's Go type already: do not do it again. */
  decoded = false,
): void {
  const gvk = { group: s.r.group, version: s.r.version, kind: s.r.kind };
  const unknownFieldsOf = s.r.unknownFields ? (o: KubeObject) => s.r.unknownFields!(o) : undefined;
  const warnings = validateFields({
    doc: openApiOf(s.server).swagger(),
    gvk,
    obj,
    jsonText,
    mode,
    prune: !s.r.customResource,
    typed: !s.r.customResource && !decoded,
    ...(unknownFieldsOf ? { unknownFieldsOf } : {}),
    ...(strictError ? { strictError } : {}),
  });
  addWarnings(s.res, warnings);
}

/**
 * Records the write of `updated` (replacing `old`, undefined for a create)
 * in `updated.metadata.managedFields`. Ownership is computed on a defaulted
 * copy; `updated` itself only gets its managedFields replaced (some defaults
 * depend on what the store sets later, e.g. a Job's selector on its uid).
 */
export function trackWrite(s: RequestScope, old: KubeObject | undefined, updated: KubeObject, subresource?: string): void {
  const copy = deepCopy(updated);
  s.r.strategy.defaults(copy);
  const gvk = { group: s.r.group, version: s.r.version, kind: s.r.kind };
  recordUpdate(old, copy, fieldManagerOf(s), rfc3339(s.server.clock.now()), { gvk, isCustomResource: !!s.r.customResource, subresource: subresource || undefined });
  const m = { ...(updated.metadata ?? {}) };
  if (copy.metadata?.managedFields) m.managedFields = copy.metadata.managedFields;
  else delete m.managedFields;
  updated.metadata = m;
}
