/**
 * Content negotiation and response writing. Negotiation follows
 * kube-apiserver (protobuf/negotiate.ts): JSON by default; protobuf
 * (`application/vnd.kubernetes.protobuf`) for built-in kinds when the Accept
 * header prefers it; a metadata-only (`as=PartialObjectMetadata[List]`) or
 * Table (`as=Table`, JSON only) rendering in meta.k8s.io/v1; 406 when
 * nothing acceptable is left. Errors (Status) are protobuf too when the
 * client prefers protobuf.
 */
import type { ServerResponse } from 'node:http';
import type { Status } from '../api/types.js';
import { apiVersionOf } from '../api/types.js';
import { newStatus, statusInGoOrder } from '../client/errors.js';
import { badRequest, StatusError } from './status.js';
import type { IncludeObject } from './table.js';
import type { RequestScope } from './context.js';
import type { ServedResource } from './resources.js';
import { escapeAsGo, stringifyAsGo } from './go-json.js';
import { jsonTextOf } from './storage/stored-object.js';
import { encodeKubernetesProtobuf, messageNameFor, protobufMediaType } from './protobuf/envelope.js';
import { negotiateMedia, notAcceptableMessage, type MediaChoice, type Rendering } from './protobuf/negotiate.js';

export type { Rendering };

/** The rendering the Accept header asks for, assuming a built-in kind (the handlers refine it with negotiateResponse). */
export function negotiate(accept: string | undefined): Rendering {
  return negotiateMedia(accept, { protobuf: true })?.rendering ?? 'object';
}

const negotiated = new WeakMap<RequestScope, MediaChoice>();

/**
 * Negotiates the response of a resource request and sets `s.rendering`;
 * throws 406 NotAcceptable when the Accept header leaves nothing this
 * endpoint can send. Handlers call it before acting, as upstream does.
 */
export function negotiateResponse(s: RequestScope, stream = false, noTable = false): MediaChoice {
  let c = negotiated.get(s);
  if (c) return c;
  c = negotiateMedia(s.req.headers.accept, { protobuf: servesProtobuf(s.r), stream, noTable });
  if (!c) throw new StatusError(newStatus(406, 'NotAcceptable', notAcceptableMessage(stream)));
  negotiated.set(s, c);
  s.rendering = c.rendering;
  return c;
}

/** Custom resources are never protobuf; built-in kinds are when the schema has their message. */
function servesProtobuf(r: ServedResource): boolean {
  return !r.customResource && messageNameFor(apiVersionOf(r.group, r.version), r.kind) !== undefined;
}

/** Writes an object, list or Status in the negotiated encoding (JSON for kinds without a protobuf message). */
export function writeObject(s: RequestScope, code: number, body: unknown): void {
  if (negotiateResponse(s).encoding === 'protobuf') {
    const bytes = encodeKubernetesProtobuf(body);
    if (bytes) return writeProtobuf(s.res, code, bytes);
  }
  writeJson(s.res, code, body);
}

export function writeProtobuf(res: ServerResponse, code: number, bytes: Uint8Array): void {
  res.writeHead(code, { 'Content-Type': protobufMediaType, 'Content-Length': bytes.length, 'Cache-Control': 'no-cache, private' });
  res.end(bytes);
}

export function includeObjectParam(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

/**
 * Writes a JSON body as kube-apiserver's JSON serializer does: Go's
 * json.Encoder (compact, one trailing newline), or json.MarshalIndent with
 * two spaces and no trailing newline when the request asks for pretty output
 * (see prettyRequested). `contentType` defaults to application/json.
 */
export function writeJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  const req = requestOf(res);
  const pretty = !!req && prettyRequested(req);
  // A stored object just written (or a view of it) is the text it was stored as: no second encoding.
  const stored = pretty ? undefined : jsonTextOf(body);
  const text = pretty ? stringifyAsGo(body, 2) : (stored !== undefined ? escapeAsGo(stored) : stringifyAsGo(body)) + '\n';
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

/** JSON always indented, as upstream's WriteRawJSON (GET /version) writes it. */
export function writeRawJson(res: ServerResponse, code: number, body: unknown): void {
  const text = stringifyAsGo(body, 2);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

interface RequestLike {
  url?: string;
  headers: { accept?: string; 'user-agent'?: string };
}

function requestOf(res: ServerResponse): RequestLike | undefined {
  return (res as { req?: RequestLike }).req;
}

/**
 * Whether a response is pretty-printed, as upstream's negotiation decides
 * (isPrettyPrint and the Accept parameter `pretty=1`): a non-empty `pretty`
 * query parameter read as Go's strconv.ParseBool (invalid means false) wins;
 * else the chosen Accept clause's `pretty=1`, or a user agent starting with
 * `curl`, `Wget` or `Mozilla/5.0` (browsers and command-line HTTP tools).
 * Watch streams are never pretty.
 */
export function prettyRequested(req: RequestLike): boolean {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if (q >= 0 && url.includes('pretty', q)) {
    const v = new URLSearchParams(url.slice(q + 1)).get('pretty');
    if (v) return goParseBool(v);
  }
  const accept = req.headers.accept;
  if (accept?.includes('pretty') && negotiateMedia(accept, { protobuf: true, noTransform: false })?.pretty) return true;
  const ua = req.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

function goParseBool(v: string): boolean {
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

/** Writes an error; protobuf when the request's Accept header prefers it (no transformation), else JSON. */
export function writeStatus(res: ServerResponse, status: Status): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const accept = requestOf(res)?.headers.accept;
  if (accept?.includes('protobuf') && negotiateMedia(accept, { protobuf: true, noTransform: true })?.encoding === 'protobuf') {
    const bytes = encodeKubernetesProtobuf({ ...status, apiVersion: 'v1', kind: 'Status' });
    if (bytes) return writeProtobuf(res, status.code ?? 500, bytes);
  }
  writeJson(res, status.code ?? 500, statusInGoOrder(status));
}

export function writeText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}
