/**
 * Routes one request: non-resource paths (discovery, health, metrics,
 * version) and resource paths to the verb handlers. Every failure is turned
 * into a Status response; nothing thrown escapes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerContext, RequestScope } from './context.js';
import { parseRequestInfo, truthyParam, type RequestInfo, type UserInfo } from './request-info.js';
import { negotiate, writeJson, writeProtobuf, writeRawJson, writeStatus, writeText } from './output.js';
import { negotiateMedia, notAcceptableMessage } from './protobuf/negotiate.js';
import { encodeKubernetesProtobuf } from './protobuf/envelope.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, serverVersion } from './discovery.js';
import { methodNotAllowed, notSupported, toStatusError, StatusError } from './status.js';
import { newStatus } from '../client/errors.js';
import { handleGet } from './handlers/get.js';
import { handleList } from './handlers/list.js';
import { handleWatch } from './handlers/watch.js';
import { handleCreate } from './handlers/create.js';
import { handleUpdate } from './handlers/update.js';
import { handlePatch } from './handlers/patch.js';
import { handleDelete, handleDeleteCollection } from './handlers/delete.js';
import { bind, handleSubresource } from './handlers/subresources.js';
import { handleReview, isReviewResource } from './handlers/reviews.js';
import { handleComponentStatuses } from './componentstatus.js';
import { createOpenApiHandler, type OpenApiHandler, type SwaggerFragment } from './openapi/index.js';
import { aggregatedDiscovery, wantsAggregatedDiscovery } from './discovery.js';
import { registerBuiltinTables } from './tables/index.js';
import { handleResourceMetrics } from './metrics-api/handler.js';
import { METRICS_GROUP } from './metrics-api/types.js';

registerBuiltinTables();

export interface HealthCheck {
  name: string;
  check(): boolean;
}

const openApiHandlers = new WeakMap<ServerContext, OpenApiHandler>();
const openApiExtras = new WeakMap<ServerContext, () => SwaggerFragment | undefined>();

/**
 * The /openapi/v2 and /openapi/v3 handler of `server` (one per server,
 * created on first use). Its swagger() document also drives server-side
 * field validation.
 */
export function openApiOf(server: ServerContext): OpenApiHandler {
  let h = openApiHandlers.get(server);
  if (!h) {
    h = createOpenApiHandler({ extraSchemas: () => openApiExtras.get(server)?.() });
    openApiHandlers.set(server, h);
  }
  return h;
}

/**
 * Adds schemas (custom resources) to the served OpenAPI documents; call
 * `invalidateOpenApi` whenever what `extra` returns changes.
 */
export function setOpenApiExtraSchemas(server: ServerContext, extra: () => SwaggerFragment | undefined): void {
  openApiExtras.set(server, extra);
  openApiOf(server).invalidate();
}

/** A request's parsed URL, upper-case method and request info. */
export interface RequestTarget {
  url: URL;
  method: string;
  info: RequestInfo;
}

const targets = new WeakMap<IncomingMessage, RequestTarget & { raw: string | undefined; rawMethod: string | undefined }>();

/**
 * The request's target, parsed once per request: authorization and routing
 * both need it (reparsed when the URL or method was changed in between).
 */
export function requestTargetOf(req: IncomingMessage): RequestTarget {
  const t = targets.get(req);
  if (t && t.raw === req.url && t.rawMethod === req.method) return t;
  const url = new URL(req.url ?? '/', 'http://apiserver');
  const method = (req.method ?? 'GET').toUpperCase();
  const info = parseRequestInfo(method, url.pathname, truthyParam(url.searchParams.get('watch')));
  const made = { url, method, info, raw: req.url, rawMethod: req.method };
  targets.set(req, made);
  return made;
}

/** Drops the cached OpenAPI documents of `server`; the next request rebuilds them. */
export function invalidateOpenApi(server: ServerContext): void {
  openApiOf(server).invalidate();
}

function pageNotFound(): StatusError {
  return new StatusError(newStatus(404, 'NotFound', 'the server could not find the requested resource', {}));
}

const metricVerb: Record<string, string> = {
  get: 'GET', list: 'LIST', watch: 'WATCH', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETECOLLECTION',
};

export function route(server: ServerContext, checks: () => HealthCheck[], req: IncomingMessage, res: ServerResponse, user: UserInfo): void {
  const start = process.hrtime.bigint();
  try {
    if (openApiOf(server)(req, res)) return;
  } catch (err) {
    server.logger.error(err, { path: req.url }, 'openapi request failed');
    if (!res.headersSent) writeStatus(res, toStatusError(err).status);
    else res.end();
    return;
  }
  const { url, method, info } = requestTargetOf(req);
  const labels = { verb: method, group: '', version: '', resource: '', subresource: '', scope: '', component: 'apiserver', code: '' };
  if (info.kind === 'resource') {
    Object.assign(labels, {
      verb: metricVerb[info.verb] ?? method,
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource,
      scope: info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
    });
  }
  const record = () => {
    if (info.kind !== 'resource' || info.verb === 'watch') return;
    labels.code = String(res.statusCode);
    server.metrics.observeRequest(labels, Number(process.hrtime.bigint() - start) / 1e9);
  };
  res.once('finish', record);
  const fail = (err: unknown) => {
    const se = toStatusError(err);
    if ((se.status.code ?? 500) >= 500) server.logger.error(err, { method, path: url.pathname }, 'request failed');
    else server.logger.v(4).info({ method, path: url.pathname, code: se.status.code, reason: se.status.reason }, 'request refused');
    if (!req.complete) req.resume();
    writeStatus(res, se.status);
  };
  try {
    const p = info.kind === 'nonResource' ? nonResource(server, checks, method, url, res, req.headers.accept) : resource(server, req, res, url, user, info);
    p.catch(fail);
  } catch (err) {
    fail(err);
  }
}

async function nonResource(server: ServerContext, checks: () => HealthCheck[], method: string, url: URL, res: ServerResponse, accept: string | undefined): Promise<void> {
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (method !== 'GET' && method !== 'HEAD') throw new StatusError(newStatus(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {}));
  const parts = path.split('/').filter(Boolean);
  if (path === '/api' || path === '/apis') {
    const aggregated = wantsAggregatedDiscovery(accept);
    if (aggregated) return writeAggregated(res, aggregated, aggregatedDiscovery(server.resources, path === '/api' ? 'core' : 'groups', aggregated));
  }
  switch (path) {
    case '/version':
      return writeRawJson(res, 200, serverVersion);
    case '/api':
      return writeDiscovery(res, accept, apiVersions());
    case '/apis':
      return writeDiscovery(res, accept, apiGroupList(server.resources));
    case '/metrics': {
      const text = await server.metrics.text();
      res.writeHead(200, { 'Content-Type': server.metrics.registry.contentType });
      res.end(text);
      return;
    }
  }
  if (parts[0] === 'healthz' || parts[0] === 'livez' || parts[0] === 'readyz') return health(parts[0], parts[1], checks(), url, res);
  if (parts[0] === 'api' && parts.length === 2) {
    const doc = apiResourceList(server.resources, '', parts[1]!);
    if (doc) return writeDiscovery(res, accept, doc);
  }
  if (parts[0] === 'apis' && parts.length === 2) {
    const doc = apiGroup(server.resources, parts[1]!);
    if (doc) return writeDiscovery(res, accept, doc);
  }
  if (parts[0] === 'apis' && parts.length === 3) {
    const doc = apiResourceList(server.resources, parts[1]!, parts[2]!);
    if (doc) return writeDiscovery(res, accept, doc);
  }
  throw pageNotFound();
}

function writeAggregated(res: ServerResponse, version: string, body: object): void {
  res.setHeader('Vary', 'Accept');
  writeJson(res, 200, body, `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`);
}

/**
 * A discovery document (APIVersions, APIGroupList, APIGroup,
 * APIResourceList) as upstream's discovery handlers write it: negotiated
 * without transformations, so protobuf for a client that prefers it
 * (client-go with a protobuf content type) and 406 for an Accept header that
 * names nothing the server can send.
 */
function writeDiscovery(res: ServerResponse, accept: string | undefined, body: object): void {
  const choice = negotiateMedia(accept, { protobuf: true, noTransform: true });
  if (!choice) throw new StatusError(newStatus(406, 'NotAcceptable', notAcceptableMessage(false)));
  if (choice.encoding === 'protobuf') {
    const bytes = encodeKubernetesProtobuf(body);
    if (bytes) return writeProtobuf(res, 200, bytes);
  }
  writeJson(res, 200, body);
}

function health(kind: string, only: string | undefined, checks: HealthCheck[], url: URL, res: ServerResponse): void {
  const all = [{ name: 'ping', check: () => true }, ...checks];
  if (only) {
    const c = all.find((x) => x.name === only);
    if (!c) return writeText(res, 404, `404 page not found\n`);
    return c.check() ? writeText(res, 200, 'ok') : writeText(res, 500, `internal server error: ${only} check failed\n`);
  }
  const results = all.map((c) => ({ name: c.name, ok: safe(c.check) }));
  const failed = results.filter((r) => !r.ok);
  const verbose = url.searchParams.has('verbose');
  if (!verbose && failed.length === 0) return writeText(res, 200, 'ok');
  const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  const tail = failed.length === 0 ? `${kind} check passed` : `${kind} check failed`;
  writeText(res, failed.length === 0 ? 200 : 500, `${lines.join('\n')}\n${tail}\n`);
}

function safe(fn: () => boolean): boolean {
  try {
    return fn();
  } catch {
    return false;
  }
}

async function resource(
  server: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  user: UserInfo,
  info: Extract<ReturnType<typeof parseRequestInfo>, { kind: 'resource' }>,
): Promise<void> {
  const r = server.resources.find(info.group, info.version, info.resource);
  if (!r) throw pageNotFound();
  if (!['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method ?? '')) throw methodNotAllowed(req.method ?? '', r);
  if (!r.namespaced && info.namespace) throw pageNotFound();
  if (r.namespaced && !info.namespace && info.name) throw pageNotFound();
  const s: RequestScope = {
    server, req, res, url, query: url.searchParams, user, r,
    namespace: info.namespace, name: info.name, subresource: info.subresource, verb: info.verb,
    rendering: negotiate(req.headers.accept),
  };
  if (r.group === METRICS_GROUP && server.resourceMetrics && !r.customResource) return handleResourceMetrics(s, server.resourceMetrics);
  if (r.group === '' && r.resource === 'componentstatuses' && !info.subresource && (info.verb === 'list' || info.verb === 'get')) return handleComponentStatuses(s);
  if (r.group === '' && r.resource === 'bindings') {
    if (info.verb !== 'create' || info.name) throw methodNotAllowed(info.verb, r);
    return bind(s, '');
  }
  if (r.virtual) {
    if (info.verb !== 'create') throw methodNotAllowed(info.verb, r);
    if (isReviewResource(r) && !info.name) return handleReview(s);
    throw notSupported(`${r.resource}.${r.group} is not supported by this server yet`);
  }
  if (info.subresource) {
    if (!info.name) throw pageNotFound();
    return handleSubresource(s);
  }
  const allowed = (verb: string) => {
    if (!r.verbs.includes(verb)) throw methodNotAllowed(verb, r);
  };
  switch (info.verb) {
    case 'get':
      allowed('get');
      return handleGet(s);
    case 'list':
      allowed('list');
      return handleList(s);
    case 'watch':
      allowed('watch');
      return handleWatch(s);
    case 'create':
      if (info.name) throw methodNotAllowed('create', r);
      if (r.namespaced && !info.namespace) throw pageNotFound();
      return handleCreate(s);
    case 'update':
      return handleUpdate(s);
    case 'patch':
      return handlePatch(s);
    case 'delete':
      return handleDelete(s);
    case 'deletecollection':
      return handleDeleteCollection(s);
  }
}
