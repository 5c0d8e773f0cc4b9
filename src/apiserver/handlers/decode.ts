/** Reading and checking the object in a write request's body. */
import type { KubeObject } from '../../api/types.js';
import { apiVersionOf, parseApiVersion } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import { BodyDecodeError, decodeBody, mediaType, objectDecodeError, readBody } from '../body.js';
import { badRequest } from '../status.js';
import { isDryRun } from '../deletion.js';
import { openApiOf } from '../router.js';
import { decodeTyped } from './field-validation.js';

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
  const obj = decodeObjectBody(buf, ct, expect) as KubeObject;
  const mt = mediaType(ct);
  const jsonText = mt === '' || mt === 'application/json' ? buf.toString('utf8') : undefined;
  checkTypeMeta(obj, expect);
  if (obj.metadata === null) delete obj.metadata; // Go decodes a null struct as the struct left out
  if (obj.metadata !== undefined && (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata))) {
    // The Go type decides the wording: ObjectMeta inside a built-in kind, alone for a custom resource (its metadata is decoded by itself).
    const into = s.r.customResource ? 'Go value' : `Go struct field ${expect.kind}.metadata`;
    throw badRequest(`${expect.kind} in version "${expect.version}" cannot be handled as a ${expect.kind}: json: cannot unmarshal ${goJsonKind(obj.metadata)} into ${into} of type v1.ObjectMeta`);
  }
  // A built-in kind decodes into its Go type (custom resources: their schema decides, in checkFields).
  const custom = s.r.customResource && expect.group === s.r.group && expect.kind === s.r.kind;
  if (!custom) decodeTyped(openApiOf(s.server).swagger(), expect, obj);
  const ns = obj.metadata?.namespace;
  if (s.r.namespaced && typeof ns === 'string' && ns && s.namespace && ns !== s.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  return { obj, jsonText };
}

/** Go's name for the kind of a JSON value in unmarshal errors. */
function goJsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return 'object';
}

/**
 * The object of a create or update body, refused as the create and update
 * handlers refuse it: kube-apiserver first reads apiVersion and kind into a
 * small struct with Go's JSON decoder, so a body that is not a JSON object
 * fails there (transformDecodeError's `the object provided is unrecognized`).
 * A null body decodes as an empty object.
 */
function decodeObjectBody(buf: Buffer, contentType: string | undefined, expect: { kind: string }): Record<string, unknown> {
  let v: unknown;
  try {
    v = decodeBody(buf, contentType);
  } catch (err) {
    if (err instanceof BodyDecodeError && err.format !== 'protobuf') throw objectDecodeError(err, expect.kind);
    throw err;
  }
  if (v === undefined) throw objectDecodeError(new BodyDecodeError('unexpected end of JSON input', 'json', true, buf), expect.kind);
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw objectDecodeError(new BodyDecodeError(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type ${typeMetaStruct}`, 'json', true, buf), expect.kind);
  }
  const o = v as Record<string, unknown>;
  for (const f of ['apiVersion', 'kind'] as const) {
    if (o[f] !== undefined && o[f] !== null && typeof o[f] !== 'string') {
      throw objectDecodeError(new BodyDecodeError(`json: cannot unmarshal ${goJsonKind(o[f])} into Go struct field .${f} of type string`, 'json', true, buf), expect.kind);
    }
    if (o[f] === null) delete o[f];
  }
  return o;
}

/** How Go prints the struct SimpleMetaFactory.Interpret decodes apiVersion and kind into. */
const typeMetaStruct = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

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
