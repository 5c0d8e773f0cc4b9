/** GET of one object (also the status subresource), and the rendering of every single-object response. */
import type { KubeObject } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import { includeObjectParam, negotiateResponse, writeObject } from '../output.js';
import { partialObjectMetadata, toTable } from '../table.js';

export async function handleGet(s: RequestScope): Promise<void> {
  negotiateResponse(s);
  writeRendered(s, 200, await s.server.store.getForRead(s.r, s.namespace, s.name));
}

/**
 * Writes one object of the request's resource in the negotiated rendering
 * (upstream's transformResponseObject, which get, create, update and patch
 * share): the object, its PartialObjectMetadata, or a one-row Table.
 */
export function writeRendered(s: RequestScope, code: number, obj: KubeObject): void {
  switch (s.rendering) {
    case 'object':
      return writeObject(s, code, obj);
    case 'metadata':
      return writeObject(s, code, partialObjectMetadata(obj));
    case 'table':
      return writeObject(s, code, toTable(s.r.group, s.r.resource, [obj], includeObjectParam(s.query), s.server.clock.now(), { resourceVersion: obj.metadata?.resourceVersion ?? '' }));
  }
}
