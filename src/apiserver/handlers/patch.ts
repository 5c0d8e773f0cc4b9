/**
 * PATCH with the four content types: JSON patch, merge patch, strategic
 * merge patch and server-side apply. Patching itself is ../patch's job; this
 * handler applies it inside a guaranteed update so concurrent writers retry,
 * and creates the object for an apply to a missing name.
 */
import type { KubeObject } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import type { ServedResource } from '../resources.js';
import { writeJson } from '../output.js';
import { mediaType, readBody, decodeBody } from '../body.js';
import { dryRunOf } from './decode.js';
import { badRequest, methodNotAllowed, StatusError, unsupportedMediaType } from '../status.js';
import { isNotFound } from '../../client/errors.js';

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

/** The shape ../patch exports; loaded lazily so the server runs before it exists. */
interface PatchModule {
  applyPatch(original: KubeObject, type: 'json' | 'merge' | 'strategic', body: unknown, opts: { gvk: { group: string; version: string; kind: string }; isCustomResource: boolean }): KubeObject;
  serverSideApply?(current: KubeObject | undefined, applied: KubeObject, opts: { fieldManager: string; force: boolean; gvk: { group: string; version: string; kind: string }; isCustomResource: boolean; now?: string }): KubeObject;
}

const patchModulePath = '../patch/index.js';
let patchModule: Promise<PatchModule> | undefined;

function loadPatch(): Promise<PatchModule> {
  patchModule ??= import(patchModulePath).then((m) => m as PatchModule).catch((err: unknown) => {
    patchModule = undefined;
    throw new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 501, reason: 'NotImplemented', message: `patch is not available: ${(err as Error).message}` }, { cause: err });
  });
  return patchModule;
}

/** Applies `body` of `kind` to `cur` (a fresh copy). */
export async function applyPatchTo(r: ServedResource, cur: KubeObject | undefined, kind: PatchKind, body: unknown, opts: { fieldManager: string; force: boolean }): Promise<KubeObject> {
  const mod = await loadPatch();
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  try {
    if (kind === 'apply') {
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('apply patches must be objects');
      if (!mod.serverSideApply) throw new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 501, reason: 'NotImplemented', message: 'server-side apply is not available yet' });
      return mod.serverSideApply(cur, body as KubeObject, { ...opts, gvk, isCustomResource: false });
    }
    if (!cur) throw new Error('no object to patch');
    return mod.applyPatch(cur, kind, body, { gvk, isCustomResource: false });
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw Object.assign(badRequest((err as Error).message), { cause: err });
  }
}

export async function handlePatch(s: RequestScope, subresource = ''): Promise<void> {
  if (!subresource && !s.r.verbs.includes('patch')) throw methodNotAllowed('patch', s.r);
  const kind = patchKindOf(s.req.headers['content-type']);
  const dryRun = dryRunOf(s);
  const body = decodeBody(await readBody(s.req), kind === 'apply' ? 'application/yaml' : 'application/json');
  if (body === undefined) throw badRequest('the request body is empty');
  const fieldManager = s.query.get('fieldManager') ?? '';
  if (kind === 'apply' && !fieldManager) throw badRequest('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  const force = s.query.get('force') === 'true';
  if (force && kind !== 'apply') throw badRequest('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  const opts = { dryRun, user: s.user, subresource: subresource || undefined };
  try {
    const out = await s.server.store.guaranteedUpdate(s.r, s.namespace, s.name, (cur) => applyPatchTo(s.r, cur, kind, body, { fieldManager, force }), opts);
    writeJson(s.res, 200, out);
  } catch (err) {
    if (!(kind === 'apply' && !subresource && isNotFound(err))) throw err;
    // Apply to a missing object creates it.
    const obj = await applyPatchTo(s.r, undefined, kind, body, { fieldManager, force });
    obj.metadata = { ...(obj.metadata ?? {}), name: s.name };
    if (s.r.namespaced) obj.metadata.namespace = s.namespace;
    const created = await s.server.store.create(s.r, s.namespace, obj, opts);
    writeJson(s.res, 201, created);
  }
}
