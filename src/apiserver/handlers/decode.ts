/** Reading and checking the object in a write request's body. */
import type { KubeObject } from '../../api/types.js';
import { apiVersionOf, parseApiVersion } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import { decodeBody, mediaType, readBody, requireObject } from '../body.js';
import { badRequest } from '../status.js';
import { isDryRun } from '../deletion.js';

/** The body as JSON (or YAML) of any shape; undefined when empty. */
export async function readJsonBody(s: RequestScope): Promise<unknown> {
  const buf = await readBody(s.req);
  return decodeBody(buf, s.req.headers['content-type']);
}

/**
 * The body as an object of `kind` in `group/version` (apiVersion and kind
 * may be omitted), with namespace and name checked against the URL.
 */
export async function readObject(s: RequestScope, expect: { group: string; version: string; kind: string } = s.r): Promise<KubeObject> {
  return (await readObjectAndText(s, expect)).obj;
}

/** readObject, plus the body text when it was JSON (for duplicate-field detection). */
export async function readObjectAndText(s: RequestScope, expect: { group: string; version: string; kind: string } = s.r): Promise<{ obj: KubeObject; jsonText?: string }> {
  const buf = await readBody(s.req);
  const ct = s.req.headers['content-type'];
  const obj = requireObject(decodeBody(buf, ct)) as KubeObject;
  const mt = mediaType(ct);
  const jsonText = mt === '' || mt === 'application/json' ? buf.toString('utf8') : undefined;
  checkTypeMeta(obj, expect);
  const ns = obj.metadata?.namespace;
  if (s.r.namespaced && ns && s.namespace && ns !== s.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (obj.metadata !== undefined && (obj.metadata === null || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata))) {
    throw badRequest('metadata must be an object');
  }
  return { obj, jsonText };
}

export function checkTypeMeta(obj: KubeObject, expect: { group: string; version: string; kind: string }): void {
  if (obj.apiVersion !== undefined && obj.apiVersion !== '') {
    if (typeof obj.apiVersion !== 'string') throw badRequest('apiVersion must be a string');
    const gv = parseApiVersion(obj.apiVersion);
    if (gv.group !== expect.group || gv.version !== expect.version) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(expect.group, expect.version)})`);
    }
  }
  if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== expect.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${expect.kind})`);
  }
}

export function dryRunOf(s: RequestScope): boolean {
  return isDryRun(s.query.getAll('dryRun'));
}
