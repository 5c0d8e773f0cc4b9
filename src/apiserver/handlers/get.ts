/** GET of one object (also the status subresource). */
import type { RequestScope } from '../context.js';
import { includeObjectParam, negotiateResponse, writeObject } from '../output.js';
import { partialObjectMetadata, toTable } from '../table.js';

export async function handleGet(s: RequestScope): Promise<void> {
  negotiateResponse(s);
  const obj = await s.server.store.get(s.r, s.namespace, s.name);
  switch (s.rendering) {
    case 'object':
      return writeObject(s, 200, obj);
    case 'metadata':
      return writeObject(s, 200, partialObjectMetadata(obj));
    case 'table':
      return writeObject(s, 200, toTable(s.r.group, s.r.resource, [obj], includeObjectParam(s.query), s.server.clock.now(), { resourceVersion: obj.metadata?.resourceVersion ?? '' }));
  }
}
