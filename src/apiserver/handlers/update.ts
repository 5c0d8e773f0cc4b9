/** PUT: replace (200), or create when the resource allows it (201). Also PUT of /status. */
import type { RequestScope } from '../context.js';
import { negotiateResponse } from '../output.js';
import { writeRendered } from './get.js';
import { dryRunOf, readObjectAndText } from './decode.js';
import { badRequest, methodNotAllowed } from '../status.js';
import { readView } from '../store.js';
import { checkFields, trackWrite } from './field-manager.js';
import { admissionInfo, writeOptionsOf } from './admission-info.js';

export async function handleUpdate(s: RequestScope, subresource = ''): Promise<void> {
  if (!subresource && !s.r.verbs.includes('update')) throw methodNotAllowed('update', s.r);
  negotiateResponse(s);
  const dryRun = dryRunOf(s);
  const { obj, jsonText } = await readObjectAndText(s);
  const name = obj.metadata?.name;
  if (name !== undefined && name !== s.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${s.name})`);
  }
  obj.metadata = { ...(obj.metadata ?? {}), name: s.name };
  checkFields(s, obj, jsonText, undefined, undefined, true);
  // managedFields are computed against the object read here; a write racing
  // between this read and the store's may be attributed to the old state.
  const cur = await s.server.store.getStored(s.r, s.namespace, s.name);
  trackWrite(s, cur ? await readView(s.r, cur.object) : undefined, obj, subresource);
  const out = await s.server.store.update(s.r, s.namespace, s.name, obj, { dryRun, user: s.user, subresource: subresource || undefined, admission: admissionInfo(s, writeOptionsOf(s, 'UpdateOptions')) });
  writeRendered(s, out.created ? 201 : 200, out.object);
}
