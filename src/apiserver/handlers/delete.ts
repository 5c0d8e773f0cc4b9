/**
 * DELETE of one object and DELETE of a collection. Status 200; 202 only when
 * the object lingers and the legacy orphanDependents=false was sent, as
 * upstream's handler does.
 */
import type { RequestScope } from '../context.js';
import { apiVersionOf, type KubeObject } from '../../api/types.js';
import { negotiateResponse, writeObject } from '../output.js';
import { readJsonBody } from './decode.js';
import { decodeTyped } from './field-validation.js';
import { openApiOf } from '../router.js';
import { deleteObject, parseDeleteOptions, type DeleteRequest } from '../deletion.js';
import { deleteNamespace } from '../namespaces.js';
import { methodNotAllowed } from '../status.js';
import { readList } from './list.js';
import { admissionInfo, deleteOptionsOf } from './admission-info.js';
import { isNotFound } from '../../client/errors.js';

function isNamespaces(s: RequestScope): boolean {
  return s.r.group === '' && s.r.resource === 'namespaces';
}

/** The DeleteOptions body (undefined when empty), decoded into its Go type (meta/v1 DeleteOptions). */
async function readDeleteOptions(s: RequestScope): Promise<unknown> {
  const body = await readJsonBody(s);
  if (body && typeof body === 'object' && !Array.isArray(body)) decodeTyped(openApiOf(s.server).swagger(), { group: '', version: 'v1', kind: 'DeleteOptions' }, body as KubeObject);
  return body;
}

export async function handleDelete(s: RequestScope): Promise<void> {
  if (!s.r.verbs.includes('delete')) throw methodNotAllowed('delete', s.r);
  negotiateResponse(s);
  const body = await readDeleteOptions(s);
  const req = parseDeleteOptions(body, s.query, s.user);
  req.admission = admissionInfo(s, deleteOptionsOf(body, s.query));
  // Mutating admission sees a DELETE too (without objects), as upstream's delete handler runs it.
  await s.server.store.deps.admission.admit({ operation: 'DELETE', resource: s.r, subresource: '', namespace: s.r.namespaced ? s.namespace : '', name: s.name, object: undefined, oldObject: undefined, user: s.user, dryRun: req.dryRun, request: req.admission });
  const result = isNamespaces(s) ? await deleteNamespace(s.server, s.r, s.name, req) : await deleteObject(s.server.store, s.r, s.namespace, s.name, req);
  const code = !result.deleted && req.orphanDependents === false ? 202 : 200;
  writeObject(s, code, result.body);
}

export async function handleDeleteCollection(s: RequestScope): Promise<void> {
  if (!s.r.verbs.includes('deletecollection')) throw methodNotAllowed('deletecollection', s.r);
  negotiateResponse(s);
  const body = await readDeleteOptions(s);
  const req: DeleteRequest = parseDeleteOptions(body, s.query, s.user);
  req.admission = admissionInfo(s, deleteOptionsOf(body, s.query));
  await s.server.store.deps.admission.admit({ operation: 'DELETE', resource: s.r, subresource: '', namespace: s.r.namespaced ? s.namespace : '', name: '', object: undefined, oldObject: undefined, user: s.user, dryRun: req.dryRun, request: req.admission });
  const page = await readList(s, { paginate: false });
  const items = [];
  for (const obj of page.items) {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    try {
      const out = isNamespaces(s) ? await deleteNamespace(s.server, s.r, name, req) : await deleteObject(s.server.store, s.r, ns, name, req);
      items.push(out.object);
    } catch (err) {
      // Gone meanwhile: nothing left to delete.
      if (isNotFound(err)) continue;
      throw err;
    }
  }
  writeObject(s, 200, { kind: s.r.listKind, apiVersion: apiVersionOf(s.r.group, s.r.version), metadata: { resourceVersion: String(s.server.storage.currentRevision()) }, items });
}
