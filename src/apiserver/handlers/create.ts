/** POST: create (201), with field validation and managedFields. */
import type { RequestScope } from '../context.js';
import { writeJson } from '../output.js';
import { dryRunOf, readObjectAndText } from './decode.js';
import { methodNotAllowed } from '../status.js';
import { checkFields, trackWrite } from './field-manager.js';

export async function handleCreate(s: RequestScope): Promise<void> {
  if (!s.r.verbs.includes('create')) throw methodNotAllowed('create', s.r);
  const dryRun = dryRunOf(s);
  const { obj, jsonText } = await readObjectAndText(s);
  checkFields(s, obj, jsonText);
  trackWrite(s, undefined, obj);
  const created = await s.server.store.create(s.r, s.namespace, obj, { dryRun, user: s.user });
  writeJson(s.res, 201, created);
}
