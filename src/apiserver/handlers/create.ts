/** POST: create (201). */
import type { RequestScope } from '../context.js';
import { writeJson } from '../output.js';
import { dryRunOf, readObject } from './decode.js';
import { methodNotAllowed } from '../status.js';

export async function handleCreate(s: RequestScope): Promise<void> {
  if (!s.r.verbs.includes('create')) throw methodNotAllowed('create', s.r);
  const dryRun = dryRunOf(s);
  const obj = await readObject(s);
  const created = await s.server.store.create(s.r, s.namespace, obj, { dryRun, user: s.user });
  writeJson(s.res, 201, created);
}
