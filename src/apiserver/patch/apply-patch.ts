/**
 * The entry point the PATCH handler calls for json, merge and strategic merge
 * patches. Returns a new object; `original` is never changed. Failures are
 * StatusErrors worded as kube-apiserver's patch handler words them:
 * undecodable patch -> 400, JSON patch operation that does not apply -> 422,
 * strategic merge on a custom resource -> 415.
 */
import type { GroupVersionKind, KubeObject } from '../../api/types.js';
import { StatusError } from '../../client/errors.js';
import { applyJsonPatch, decodeJsonPatch } from './json-patch.js';
import { isObject } from './json-value.js';
import { applyMergePatch } from './merge-patch.js';
import { PatchError, patchBadRequest, patchUnprocessable, patchUnsupportedMediaType } from './patch-errors.js';
import { genericObjectSchema, schemaForKind } from './schema.js';
import { applyStrategicMergePatch } from './strategic-merge.js';

export type PatchType = 'json' | 'merge' | 'strategic';

export interface PatchOptions {
  gvk: GroupVersionKind;
  /** Custom resources accept json and merge patches only. */
  isCustomResource: boolean;
}

/** The patch content types a custom resource accepts, as apiextensions-apiserver lists them. */
export const customResourcePatchTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'] as const;

/** The limit kube-apiserver puts on the operations of one JSON patch. */
export const maxJsonPatchOperations = 10000;

export function applyPatch(original: KubeObject, type: PatchType, body: unknown, opts: PatchOptions): KubeObject {
  try {
    let out: unknown;
    switch (type) {
      case 'json': {
        const ops = decodeJsonPatch(body);
        if (ops.length > maxJsonPatchOperations) {
          throw new StatusError({
            kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 413, reason: 'RequestEntityTooLarge',
            message: `Request entity too large: The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${ops.length}`,
          });
        }
        out = applyJsonPatch(original, ops);
        break;
      }
      case 'merge':
        out = applyMergePatch(original, body);
        break;
      case 'strategic':
        if (opts.isCustomResource) throw patchUnsupportedMediaType(customResourcePatchTypes);
        out = applyStrategicMergePatch(original, body, schemaForKind(opts.gvk) ?? genericObjectSchema());
        break;
      default:
        throw patchUnsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
    }
    if (!isObject(out)) throw patchUnprocessable(`the patched document is not an object: ${JSON.stringify(out)}`);
    return out as KubeObject;
  } catch (err) {
    throw toStatusError(err, type);
  }
}

/** Maps PatchError to the Status kube-apiserver returns; other errors pass through. */
export function toStatusError(err: unknown, type: PatchType | 'apply'): unknown {
  if (!(err instanceof PatchError)) return err;
  // For every patch type the 422s are NewGenericServerResponse(422, ...) upstream.
  void type;
  return err.code === 422 ? patchUnprocessable(err.message, err) : patchBadRequest(err.message, err);
}
