/**
 * PATCH with the four content types: JSON patch, merge patch, strategic
 * merge patch and server-side apply. Patching itself is ../patch's job; this
 * handler applies it inside a guaranteed update so concurrent writers retry,
 * records managedFields, validates fields, and creates the object for an
 * apply to a missing name.
 */
import { apiVersionOf, type KubeObject } from '../../api/types.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { RequestScope } from '../context.js';
import type { ServedResource } from '../resources.js';
import { negotiateResponse } from '../output.js';
import { writeRendered } from './get.js';
import { BodyDecodeError, mediaType, readBody, decodeBody } from '../body.js';
import { dryRunOf } from './decode.js';
import { badRequest, methodNotAllowed, StatusError, unsupportedMediaType } from '../status.js';
import { isNotFound } from '../../client/errors.js';
import { applyPatch, serverSideApply } from '../patch/index.js';
import { openApiOf } from '../router.js';
import { checkFields, trackWrite } from './field-manager.js';
import { fieldValidationOf, invalidPatchError, patchErrorValue, strictPatchError, validateApplyFields, type FieldValidation } from './field-validation.js';
import { objectExceedsDepth } from '../nesting-depth.js';
import { admissionInfo, writeOptionsOf } from './admission-info.js';
import { decodeNullsAsGo, decodeNullsOf, objectMetaStruct } from '../go-json.js';

export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

export function patchKindOf(contentType: string | undefined): PatchKind {
  switch (mediaType(contentType)) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+json':
      return 'apply';
    default:
      throw unsupportedMediaType(mediaType(contentType) || '(none)');
  }
}

export interface PatchToOptions {
  fieldManager: string;
  force: boolean;
  /** RFC 3339 time of the managedFields entry of an apply. */
  now?: string;
  /** 'status' for the status subresource (apply owns status fields there). */
  subresource?: string;
}

/**
 * Applies `body` of `kind` to `cur` (undefined only for an apply that
 * creates), which is only read: every patch type works on its own copy, so
 * `cur` may be the store's frozen object. StatusErrors pass through; other
 * failures are 400.
 */
export async function applyPatchTo(r: ServedResource, cur: KubeObject | undefined, kind: PatchKind, body: unknown, opts: PatchToOptions): Promise<KubeObject> {
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const isCustomResource = !!r.customResource;
  try {
    let out: KubeObject;
    if (kind === 'apply') {
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('apply patches must be objects');
      out = serverSideApply(cur, body as KubeObject, { fieldManager: opts.fieldManager, force: opts.force, gvk, isCustomResource, now: opts.now, subresource: opts.subresource });
      // The applied nulls, as the result decodes into the Go type (custom resources: their metadata).
      if (!isCustomResource) decodeNullsOf(out, apiVersionOf(r.group, r.version), r.kind);
      else if (out.metadata && typeof out.metadata === 'object' && !Array.isArray(out.metadata)) decodeNullsAsGo(out.metadata as Record<string, unknown>, objectMetaStruct);
    } else {
      if (!cur) throw new Error('no object to patch');
      out = applyPatch(cur, kind, body, { gvk, isCustomResource });
    }
    // A JSON patch can nest the object deeper than any body may (an add at a deep path, copies into themselves).
    if (objectExceedsDepth(out)) throw invalidPatchError(patchErrorValue(kind, body, out), "couldn't get version/kind; json parse error: exceeded max depth");
    return out;
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw Object.assign(badRequest((err as Error).message), { cause: err });
  }
}

/**
 * The patch document, with a body its decoder refuses worded as patch.go's
 * applyJSPatch, strategicPatchObject and applyPatcher word it: `error decoding
 * patch: exceeded max depth` (JSON and merge patches, validated), `Invalid JSON
 * Patch` (merge patch, fieldValidation=Ignore), the bare error (strategic merge;
 * JSON patch with Ignore), `error decoding YAML: error converting YAML to JSON:
 * yaml: exceeded max depth of 128` (apply).
 */
export function decodePatch(buf: Buffer, kind: PatchKind, mode: FieldValidation): unknown {
  try {
    return decodeBody(buf, kind === 'apply' ? 'application/yaml' : 'application/json');
  } catch (err) {
    if (!(err instanceof BodyDecodeError)) throw err;
    const validated = mode !== 'Ignore';
    let message: string;
    switch (kind) {
      case 'json':
        message = validated ? `error decoding patch: ${err.decoderMessage}` : err.decoderMessage;
        break;
      case 'merge':
        message = validated ? `error decoding patch: ${err.decoderMessage}` : 'Invalid JSON Patch';
        break;
      case 'strategic':
        message = err.decoderMessage;
        break;
      case 'apply':
        message = err.json ? `error decoding YAML: error unmarshaling JSON: while decoding JSON: ${err.decoderMessage}` : `error decoding YAML: error converting YAML to JSON: ${err.decoderMessage}`;
        break;
    }
    throw Object.assign(badRequest(message), { cause: err });
  }
}

function checkApplyBody(s: RequestScope, body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('apply patches must be objects');
  const b = body as KubeObject;
  if (!b.apiVersion || !b.kind) throw badRequest('invalid object type: apiVersion and kind must be set in an apply patch');
  const want = s.r.group ? `${s.r.group}/${s.r.version}` : s.r.version;
  if (b.apiVersion !== want || b.kind !== s.r.kind) {
    throw badRequest(`the API version in the data (${b.apiVersion}) does not match the expected API version (${want})`);
  }
  if (b.metadata?.name && b.metadata.name !== s.name) throw badRequest(`the name of the object (${b.metadata.name}) does not match the name on the URL (${s.name})`);
  // Custom resources: their structural schema decides which fields are declared.
  validateApplyFields(openApiOf(s.server).swagger(), s.r, body, s.r.unknownFields ? (o) => s.r.unknownFields!(o) : undefined);
}

export async function handlePatch(s: RequestScope, subresource = ''): Promise<void> {
  if (!subresource && !s.r.verbs.includes('patch')) throw methodNotAllowed('patch', s.r);
  const kind = patchKindOf(s.req.headers['content-type']);
  negotiateResponse(s);
  const dryRun = dryRunOf(s);
  const mode = fieldValidationOf(s.query);
  const body = decodePatch(await readBody(s.req), kind, mode);
  if (body === undefined) throw badRequest('the request body is empty');
  const fieldManager = s.query.get('fieldManager') ?? '';
  if (kind === 'apply' && !fieldManager) throw badRequest('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  const force = s.query.get('force') === 'true';
  if (force && kind !== 'apply') throw badRequest('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  if (kind === 'apply') checkApplyBody(s, body);
  const opts = { dryRun, user: s.user, subresource: subresource || undefined, admission: admissionInfo(s, writeOptionsOf(s, 'PatchOptions')) };
  const patchOpts = (): PatchToOptions => ({ fieldManager, force, now: rfc3339(s.server.clock.now()), subresource: subresource || undefined });
  let validated = false;
  try {
    const out = await s.server.store.guaranteedUpdate(
      s.r,
      s.namespace,
      s.name,
      async (cur) => {
        const next = await applyPatchTo(s.r, cur, kind, body, patchOpts());
        if (kind !== 'apply') {
          // Validate once: retries of the same patch report the same problems.
          checkFields(s, next, undefined, validated ? 'Ignore' : mode, (problems) => strictPatchError(patchErrorValue(kind, body, next), problems));
          validated = true;
          trackWrite(s, cur, next, subresource);
        }
        return next;
      },
      opts,
    );
    writeRendered(s, 200, out);
  } catch (err) {
    if (!(kind === 'apply' && !subresource && isNotFound(err))) throw err;
    // Apply to a missing object creates it.
    const obj = await applyPatchTo(s.r, undefined, kind, body, patchOpts());
    obj.metadata = { ...(obj.metadata ?? {}), name: s.name };
    if (s.r.namespaced) obj.metadata.namespace = s.namespace;
    // patchToCreateOptions: the create an apply turns into carries CreateOptions.
    const created = await s.server.store.create(s.r, s.namespace, obj, { ...opts, admission: admissionInfo(s, { ...writeOptionsOf(s, 'CreateOptions') }) });
    writeRendered(s, 201, created);
  }
}
