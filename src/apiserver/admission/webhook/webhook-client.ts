/**
 * Calls webhooks (admission and CRD conversion) as kube-apiserver's webhook
 * REST client does (apiserver pkg/util/webhook/client.go): HTTPS POST of
 * JSON over HTTP/1.1, the server verified against the clientConfig's
 * caBundle (system roots when absent), by `url` or by `service` reference
 * (dialled at a ready endpoint, TLS server name `<name>.<namespace>.svc`,
 * port 443 by default), a `?timeout=<n>s` parameter when the call has a
 * deadline.
 *
 * Calls are asynchronous (undici) and bounded by their timeout: a webhook
 * that hangs never holds more than its request. Failures reject with a
 * WebhookCallError whose message reads as Go's (`Post "https://...":
 * context deadline exceeded`, `... connect: connection refused`, `x509:
 * certificate signed by unknown authority`), which callers wrap in
 * upstream's `failed calling webhook ...` texts.
 */
import { Agent, request, type Dispatcher } from '../../../client/undici.js';
import type { Clock } from '../../../util/clock/clock.js';
import { realClock } from '../../../util/clock/clock.js';
import { StatusError } from '../../../client/errors.js';
import { genericServerResponse } from '../../../client/response-errors.js';
import type { Status } from '../../../api/types.js';
import type { ServiceResolver } from './service-resolver.js';
import { hostnameOf, parseGoUrl, portOf } from './go-url.js';
import { parseCABundle } from './client-config-validation.js';
import { goJsonSyntaxError } from '../../go-json-syntax.js';

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
  /** Base64 PEM bundle. */
  caBundle?: string;
}

/** A transport-level failure (no usable answer); `status` is the error status upstream carries with it. */
export class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly status?: StatusError,
  ) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

export interface WebhookResponse {
  /** The decoded JSON body of a 2xx answer. */
  body: unknown;
  /** The raw text, for messages. */
  text: string;
}

export interface PostOptions {
  /** The call's deadline; also sent as `?timeout=<n>s` (rounded up to whole seconds). */
  timeoutMs: number;
  /** Send `?timeout=<n>s` (admission and conversion webhooks both do). Default true. */
  timeoutParam?: boolean;
}

export interface WebhookClient {
  /** POSTs `body` as JSON; resolves with a 2xx JSON answer, rejects with WebhookCallError. */
  post(cc: WebhookClientConfig, body: unknown, opts: PostOptions): Promise<WebhookResponse>;
  /** Closes cached connections. */
  close(): Promise<void>;
}

export interface WebhookClientOptions {
  services: ServiceResolver;
  clock?: Clock;
  /** How many TLS configurations keep an agent (upstream caches 200 clients). */
  cacheSize?: number;
}

/** path.Join("/", p) as the REST client builds the request path. */
function cleanPath(p: string): string {
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return `/${parts.join('/')}`;
}

/** Go's text for a failed dial/TLS/read, from Node's error. */
export function goNetError(err: unknown, dialAddr: string, serverName: string): string {
  const e = err as NodeJS.ErrnoException & { cause?: unknown; reason?: string };
  const inner = (e?.cause ?? e) as NodeJS.ErrnoException & { reason?: string; host?: string; cert?: { subjectaltname?: string } };
  const code = inner?.code ?? e?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${dialAddr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${dialAddr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${dialAddr}: connect: network is unreachable`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${hostnameOf(dialAddr)}: no such host`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
    case 'EPIPE':
      return 'EOF';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_GET_ISSUER_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID': {
      const sans = (inner.cert?.subjectaltname ?? '')
        .split(', ')
        .map((s) => s.replace(/^(DNS|IP Address):/, ''))
        .filter(Boolean);
      return sans.length
        ? `tls: failed to verify certificate: x509: certificate is valid for ${sans.join(', ')}, not ${serverName}`
        : `tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match ${serverName}`;
    }
    default:
      if (typeof code === 'string' && code.startsWith('ERR_SSL')) return `remote error: tls: ${inner.reason ?? code}`;
      return inner?.message || String(err);
  }
}

/** rest client's NewGenericServerResponse for a non-2xx answer that is not a Status. */
function unexpectedResponse(code: number, serverMessage: string): StatusError {
  return new StatusError(genericServerResponse(code, 'POST', serverMessage));
}

interface CachedAgent {
  agent: Agent;
  key: string;
}

export function newWebhookClient(opts: WebhookClientOptions): WebhookClient {
  const clock = opts.clock ?? realClock;
  const cacheSize = opts.cacheSize ?? 200;
  const agents = new Map<string, CachedAgent>();
  const bundles = new Map<string, ReturnType<typeof parseCABundle>>();
  let closed = false;

  function agentFor(ca: string[] | undefined, servername: string | undefined): Agent {
    const key = JSON.stringify([ca ?? null, servername ?? null]);
    const hit = agents.get(key);
    if (hit) {
      // LRU: most recently used last.
      agents.delete(key);
      agents.set(key, hit);
      return hit.agent;
    }
    const agent = new Agent({
      keepAliveTimeout: 30_000,
      connect: { ...(ca ? { ca } : {}), ...(servername ? { servername } : {}), ALPNProtocols: ['http/1.1'] },
    });
    agents.set(key, { agent, key });
    while (agents.size > cacheSize) {
      const [oldest] = agents.values();
      agents.delete(oldest!.key);
      void oldest!.agent.close().catch(() => undefined);
    }
    return agent;
  }

  return {
    async post(cc, body, po) {
      if (closed) throw new WebhookCallError('webhook client is closed');
      let ca: string[] | undefined;
      if (cc.caBundle) {
        // Parsing certificates costs more than the call itself: once per bundle.
        let parsed = bundles.get(cc.caBundle);
        if (!parsed) {
          parsed = parseCABundle(cc.caBundle);
          if (bundles.size >= cacheSize) bundles.delete(bundles.keys().next().value!);
          bundles.set(cc.caBundle, parsed);
        }
        if ('error' in parsed) throw new WebhookCallError(`unable to load root certificates: ${parsed.error}`);
        ca = parsed.pems;
      }
      const timeoutParam = po.timeoutParam ?? true;
      const query = timeoutParam ? `?timeout=${Math.max(1, Math.ceil(po.timeoutMs / 1000))}s` : '';
      // What the request is shown as (Go's url.Error), and where it really goes.
      let shownUrl: string;
      let hostHeader: string;
      let servername: string | undefined;
      let dial: () => Promise<{ origin: string; addr: string }>;
      if (cc.service) {
        const port = cc.service.port ?? 443;
        const serverName = `${cc.service.name}.${cc.service.namespace}.svc`;
        const path = cleanPath(cc.service.path ?? '');
        shownUrl = `https://${serverName}:${port}${path}${query}`;
        hostHeader = `${serverName}:${port}`;
        servername = serverName;
        dial = async () => {
          const ep = await opts.services.resolve(cc.service!.namespace ?? '', cc.service!.name ?? '', port);
          const host = ep.ip.includes(':') ? `[${ep.ip}]` : ep.ip;
          return { origin: `https://${host}:${ep.port}`, addr: `${host}:${ep.port}` };
        };
      } else if (cc.url) {
        let u;
        try {
          u = parseGoUrl(cc.url);
        } catch (err) {
          throw new WebhookCallError(`Unparsable URL: ${(err as Error).message}`);
        }
        const path = cleanPath(u.path);
        shownUrl = `${u.scheme}://${u.host}${path}${query}`;
        hostHeader = u.host;
        const port = portOf(u.host) || (u.scheme === 'http' ? '80' : '443');
        const hn = hostnameOf(u.host);
        const host = hn.includes(':') ? `[${hn}]` : hn;
        dial = async () => ({ origin: `${u.scheme}://${host}:${port}`, addr: `${host}:${port}` });
      } else {
        throw new WebhookCallError('webhook configuration must have either service or URL');
      }
      const fail = (reason: string, status?: StatusError): never => {
        throw new WebhookCallError(`Post ${JSON.stringify(shownUrl)}: ${reason}`, status);
      };
      const controller = new AbortController();
      let timedOut = false;
      const timer = clock.setTimer(() => {
        timedOut = true;
        controller.abort();
      }, po.timeoutMs);
      const payload = JSON.stringify(body);
      try {
        let target: { origin: string; addr: string };
        try {
          target = await dial();
        } catch (err) {
          if (timedOut) return fail('context deadline exceeded');
          return fail(err instanceof Error ? err.message : String(err), err instanceof StatusError ? err : undefined);
        }
        const path = cc.service ? cleanPath(cc.service.path ?? '') : cleanPath(parseGoUrl(cc.url!).path);
        let res: Dispatcher.ResponseData;
        try {
          res = await request(`${target.origin}${path}${query}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, */*', host: hostHeader, 'user-agent': 'kcm-apiserver' },
            body: payload,
            dispatcher: agentFor(ca, servername),
            signal: controller.signal,
            headersTimeout: 0,
            bodyTimeout: 0,
          });
        } catch (err) {
          if (timedOut) return fail('context deadline exceeded');
          return fail(goNetError(err, target.addr, servername ?? hostnameOf(hostHeader)));
        }
        let text: string;
        try {
          text = await res.body.text();
        } catch (err) {
          if (timedOut) return fail('context deadline exceeded');
          return fail(goNetError(err, target.addr, servername ?? hostnameOf(hostHeader)));
        }
        const contentType = String(res.headers['content-type'] ?? '');
        if (res.statusCode < 200 || res.statusCode > 206) {
          const st = statusIn(text);
          const err = st ?? unexpectedResponse(res.statusCode, contentType.startsWith('text/') ? text.trim() : 'unknown');
          throw new WebhookCallError(err.message, err);
        }
        // client-go's Result.Into on an empty body.
        if (text.length === 0) throw new WebhookCallError(`0-length response with status code: ${res.statusCode} and content type: ${contentType}`);
        return { body: decodeBody(text), text };
      } finally {
        timer.stop();
      }
    },
    async close() {
      closed = true;
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((a) => a.agent.destroy().catch(() => undefined)));
    },
  };
}

/** A Failure Status in an error answer (the rest client decodes one when it can). */
function statusIn(text: string): StatusError | undefined {
  try {
    const v = JSON.parse(text) as Status & { kind?: string };
    if (v && typeof v === 'object' && (v.kind === 'Status' || v.kind === undefined) && v.status === 'Failure') return new StatusError(v);
  } catch {
    // not JSON
  }
  return undefined;
}

/** JSON as the webhook client's decoder reads it; anything else fails as Go's decoder does. */
function decodeBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new WebhookCallError(`couldn't get version/kind; json parse error: ${goJsonSyntaxError(text) ?? (err as Error).message}`);
  }
}

