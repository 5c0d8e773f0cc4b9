/** POST: create (201), with field validation and managedFields. */
import type { RequestScope } from '../context.js';
import { negotiateResponse } from '../output.js';
import { writeRendered } from './get.js';
import { dryRunOf, readObjectAndText } from './decode.js';
import { methodNotAllowed } from '../status.js';
import { checkFields, trackWrite } from './field-manager.js';
import { admissionInfo, writeOptionsOf } from './admission-info.js';

export async function handleCreate(s: RequestScope): Promise<void> {
  if (!s.r.verbs.includes('create')) throw methodNotAllowed('create', s.r);
  negotiateResponse(s);
  const dryRun = dryRunOf(s);
  const { obj, jsonText } = await readObjectAndText(s);
  checkFields(s, obj, jsonText, undefined, undefined, true);
  trackWrite(s, undefined, obj);
  // obj was decoded for this request: the store may change it rather than copy it.
  const created = await s.server.store.create(s.r, s.namespace, obj, { dryRun, user: s.user, owned: true, admission: admissionInfo(s, writeOptionsOf(s, 'CreateOptions')) });
  writeRendered(s, 201, created);
}
