/**
 * Serves /openapi/v2 and /openapi/v3[/<group-version>] as kube-apiserver does:
 *
 * - /openapi/v2: JSON, or protobuf (gnostic's openapi.v2.Document, see
 *   openapi-v2-proto.ts) for a client that asks for
 *   `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (client-go's
 *   and kubectl's Accept) or its `.v1.0+protobuf` spelling. The Accept header
 *   is negotiated as kube-openapi does (goautoneg: clauses by q, then
 *   specificity, in header order otherwise; the first one naming a served type
 *   wins, even at q=0); nothing served -> 406. The protobuf answer's
 *   Content-Type is `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`:
 *   the `@` form is not a valid media type and client-go rejects it. Both
 *   representations carry the ETag of the JSON bytes (kube-openapi reuses it,
 *   the response varies by Accept).
 * - /openapi/v3: the index `{ paths: { "apis/apps/v1": { serverRelativeURL } } }`,
 *   each URL carrying `?hash=<etag>`; a document fetched with its current hash is
 *   immutable (Cache-Control: public, immutable), otherwise served with its ETag.
 *   JSON only.
 * - ETag / If-None-Match -> 304; gzip when the client accepts it.
 *
 * Documents (and the protobuf bytes) are built lazily and cached until
 * `invalidate()` (call it when the extra schemas, e.g. custom resources',
 * change).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { builtinSwagger, withLazyPaths, type SwaggerDocument } from './openapi-data.js';
import { parseAccept } from '../accept.js';
import { encodeOpenApiV2Proto } from './openapi-v2-proto.js';
import { convertGroupVersion, groupVersionsOf } from './openapi-v3.js';

/** Definitions and paths to add to the built-in document (custom resources). */
export interface SwaggerFragment {
  definitions?: Record<string, Record<string, unknown>>;
  /** Definitions as /openapi/v3 publishes them where they differ from the v2 ones (custom resources' schemas). */
  v3Definitions?: Record<string, Record<string, unknown>>;
  paths?: Record<string, Record<string, unknown>>;
}

export interface OpenApiHandlerOptions {
  /** Called when documents are rebuilt; its definitions and paths override the built-in ones. */
  extraSchemas?: () => SwaggerFragment | undefined;
}

/** Returns true when it handled the request (the path is under /openapi/). */
export interface OpenApiHandler {
  (req: IncomingMessage, res: ServerResponse): boolean;
  /** Drops the cached documents; the next request rebuilds them. */
  invalidate(): void;
  /** The merged v2 document (shared; treat as read-only). */
  swagger(): SwaggerDocument;
}

interface Encoded {
  body: Buffer;
  gz?: Buffer;
  etag: string;
}

const jsonType = 'application/json';
/** What kube-openapi answers with for either protobuf subtype it accepts. */
export const openApiV2ProtobufType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

function encode(value: unknown): Encoded {
  const body = Buffer.from(JSON.stringify(value));
  const etag = createHash('sha512').update(body).digest('hex').toUpperCase();
  return { body, etag };
}

const v2Representations: { type: string; subType: string; as: 'json' | 'protobuf' }[] = [
  { type: 'application', subType: 'json', as: 'json' },
  { type: 'application', subType: 'com.github.proto-openapi.spec.v2@v1.0+protobuf', as: 'protobuf' },
  { type: 'application', subType: 'com.github.proto-openapi.spec.v2.v1.0+protobuf', as: 'protobuf' },
];

/**
 * The representation of /openapi/v2 that kube-openapi's handler picks for an
 * Accept header (absent means `*\/*`), or undefined (406).
 */
export function negotiateOpenApiV2(accept: string | undefined): 'json' | 'protobuf' | undefined {
  for (const c of parseAccept(accept || '*/*')) {
    for (const r of v2Representations) {
      if ((c.type === r.type || c.type === '*') && (c.subType === r.subType || c.subType === '*')) return r.as;
    }
  }
  return undefined;
}

/** True when the Accept header admits JSON (absent, `*\/*`, `application/*`, `application/json`). */
export function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const [mt, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) return false;
    const t = (mt ?? '').trim().toLowerCase();
    return t === '*/*' || t === 'application/*' || t === 'application/json' || t === '';
  });
}

export function createOpenApiHandler(opts: OpenApiHandlerOptions = {}): OpenApiHandler {
  let doc: SwaggerDocument | undefined;
  let v3Overrides: Record<string, Record<string, unknown>> | undefined;
  let v2: Encoded | undefined;
  let v2Proto: Encoded | undefined;
  let v3Docs = new Map<string, Encoded>();
  let v3Index: Encoded | undefined;

  const swagger = (): SwaggerDocument => {
    if (doc) return doc;
    const base = builtinSwagger();
    const extra = opts.extraSchemas?.();
    v3Overrides = extra?.v3Definitions;
    if (extra) {
      // A copy that keeps the built-in paths unread until something needs them (see builtinSwagger).
      const merged = Object.defineProperties({}, Object.getOwnPropertyDescriptors(base)) as SwaggerDocument;
      merged.definitions = { ...base.definitions, ...(extra.definitions ?? {}) };
      doc = withLazyPaths(merged, () => ({ ...base.paths, ...(extra.paths ?? {}) }));
    } else doc = base;
    return doc;
  };
  const v3Doc = (gv: string): Encoded | undefined => {
    let e = v3Docs.get(gv);
    if (!e) {
      if (!groupVersionsOf(swagger()).includes(gv)) return undefined;
      const d = swagger();
      e = encode(convertGroupVersion(d, gv, v3Overrides));
      v3Docs.set(gv, e);
    }
    return e;
  };
  const index = (): Encoded => {
    if (v3Index) return v3Index;
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const gv of groupVersionsOf(swagger())) paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${v3Doc(gv)!.etag}` };
    return (v3Index = encode({ paths }));
  };

  const send = (req: IncomingMessage, res: ServerResponse, e: Encoded, immutable: boolean, contentType = jsonType): void => {
    res.setHeader('Content-Type', contentType);
    res.setHeader('ETag', `"${e.etag}"`);
    res.setHeader('Vary', 'Accept, Accept-Encoding');
    res.setHeader('Cache-Control', immutable ? 'public, immutable' : 'no-cache, private');
    const inm = req.headers['if-none-match'];
    if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${e.etag}"`)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    let body = e.body;
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && e.body.length > 1024) {
      e.gz ??= gzipSync(e.body);
      body = e.gz;
      res.setHeader('Content-Encoding', 'gzip');
    }
    res.statusCode = 200;
    res.setHeader('Content-Length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const fail = (res: ServerResponse, code: number, reason: string, message: string): void => {
    const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
    res.statusCode = code;
    res.setHeader('Content-Type', 'application/json');
    res.end(body);
  };

  const notAcceptable = (res: ServerResponse): void =>
    fail(res, 406, 'NotAcceptable', 'the server was unable to respond with a content type that the client supports');

  const handler = ((req: IncomingMessage, res: ServerResponse): boolean => {
    // Every request passes here: decline the others without parsing their URL.
    if (!req.url?.startsWith('/openapi')) return false;
    const url = new URL(req.url, 'http://apiserver');
    const path = url.pathname.replace(/\/+$/, '');
    if (path !== '/openapi/v2' && path !== '/openapi/v3' && !path.startsWith('/openapi/v3/')) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      fail(res, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      return true;
    }
    if (path === '/openapi/v2') {
      const as = negotiateOpenApiV2(req.headers.accept);
      if (!as) {
        notAcceptable(res);
        return true;
      }
      v2 ??= encode(swagger());
      if (as === 'json') {
        send(req, res, v2, false);
        return true;
      }
      v2Proto ??= { body: encodeOpenApiV2Proto(swagger()), etag: v2.etag };
      send(req, res, v2Proto, false, openApiV2ProtobufType);
      return true;
    }
    if (!acceptsJson(req.headers.accept)) {
      notAcceptable(res);
      return true;
    }
    if (path === '/openapi/v3') {
      send(req, res, index(), false);
      return true;
    }
    const gv = path.slice('/openapi/v3/'.length);
    const e = v3Doc(gv);
    if (!e) {
      fail(res, 404, 'NotFound', 'the server could not find the requested resource');
      return true;
    }
    const hash = url.searchParams.get('hash');
    if (hash && hash !== e.etag) {
      // A stale hash: redirect to the current document, as kube-apiserver does.
      res.statusCode = 301;
      res.setHeader('Location', `/openapi/v3/${gv}?hash=${e.etag}`);
      res.end();
      return true;
    }
    send(req, res, e, hash === e.etag);
    return true;
  }) as OpenApiHandler;
  handler.invalidate = () => {
    doc = undefined;
    v3Overrides = undefined;
    v2 = undefined;
    v2Proto = undefined;
    v3Docs = new Map();
    v3Index = undefined;
  };
  handler.swagger = swagger;
  return handler;
}
