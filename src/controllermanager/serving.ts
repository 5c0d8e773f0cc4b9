/**
 * The HTTPS endpoints of the controller manager and the scheduler:
 * `/healthz`, `/livez`, `/readyz` (each with `/<path>/<check>` per check and
 * `?verbose`), `/metrics` (the prom-client registry in Prometheus text
 * format), `/configz` and, for the controller manager, `/debug/controllers`
 * (its controllers and work queues as JSON, DebugControllers of
 * dashboard/protocol.ts).
 *
 * Every request goes through the chain kube-controller-manager builds
 * (controller-manager/app/serve.go BuildHandlerChain): delegated
 * authentication (delegated-authn.ts), then delegated authorization
 * (delegated-authz.ts), then the endpoint. Refusals are Status objects as
 * k8s.io/apiserver writes them:
 *
 *   401 {"kind":"Status",...,"message":"Unauthorized","reason":"Unauthorized","code":401}
 *   403 {"kind":"Status",...,"message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403}
 *
 * and a review that could not be made is a 500 (`Internal Server Error:
 * "<uri>": <error>`), as responsewriters.InternalError.
 *
 * Health output follows k8s.io/apiserver's healthz: `ok` on success; on
 * failure HTTP 500 with one `[+]name ok` / `[-]name failed: reason withheld`
 * line per check and `healthz check failed`.
 *
 * The TLS layer asks for client certificates but never rejects one at the
 * handshake: the authenticator verifies it and answers 401. Oversized
 * headers and malformed requests are answered as Go's net/http answers them
 * (util/net/http-edges.ts).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { DebugControllers } from '../util/workqueue/debug-types.js';
import { newCA, newSignedCert, type KeyPair } from '../util/cert/cert.js';
import type { Logger } from '../util/log/logger.js';
import { renderHealth, type HealthChecks } from '../util/healthz/healthz.js';
import { answerClientErrors, MAX_HEADER_BYTES } from '../util/net/http-edges.js';
import type { DelegatingAuthenticator, UserInfo } from './delegated-authn.js';
import type { DelegatingAuthorizer } from './delegated-authz.js';

export { newHealthChecks, renderHealth, type HealthCheck, type HealthChecks } from '../util/healthz/healthz.js';

/** Who may call the endpoints. */
export interface ServingAuth {
  authenticator: DelegatingAuthenticator;
  authorizer: DelegatingAuthorizer;
  /** Ask TLS clients for a certificate (when some CA may verify it). */
  requestClientCertificates: boolean;
}

export interface ServingOptions {
  bindAddress: string;
  /** 0 is treated as "pick a free port" here; callers skip serving for upstream's "0 disables". */
  port: number;
  /** PEM files; when absent a self-signed certificate is generated in memory. */
  certFile?: string;
  keyFile?: string;
  checks: HealthChecks;
  registry: Registry;
  /** Undefined: no /configz. */
  configz?: () => unknown;
  /** Undefined: no /debug/controllers. Authenticated and authorized like every other path. */
  debugControllers?: (since?: number) => DebugControllers;
  auth: ServingAuth;
  /** The component, for the self-signed certificate's names (`kube-controller-manager`, `kube-scheduler`). */
  component?: string;
  logger: Logger;
}

export interface ComponentServer {
  /** `https://<host>:<port>`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function selfSigned(bindAddress: string, component: string): KeyPair {
  const ca = newCA(`${component}-ca@${Math.floor(Date.now() / 1000)}`, 365);
  const ips = ['127.0.0.1'];
  if (bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::' && !ips.includes(bindAddress)) ips.push(bindAddress);
  const leaf = newSignedCert(ca, { commonName: `localhost@${component}`, dnsNames: ['localhost'], ipAddresses: ips, usage: 'server', validityDays: 365 });
  return { certPem: leaf.certPem + ca.certPem, keyPem: leaf.keyPem };
}

function send(res: ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8', nosniff = true): void {
  res.writeHead(code, {
    'Cache-Control': 'no-cache, private',
    'Content-Type': type,
    ...(nosniff ? { 'X-Content-Type-Options': 'nosniff' } : {}),
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** JSON.stringify of a string with Go's HTML-safe escapes (json.Marshal). */
function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A failure Status as k8s.io/apimachinery encodes it: metav1.Status's field
 * order, compact with Go's trailing newline, or indented (an empty object
 * as `{\n<indent>\n}`, no trailing newline) when the request asks for pretty
 * output (`?pretty=true`, or a curl, Wget or browser user agent).
 */
export function encodeStatus(fields: { code: number; reason: string; message: string; details?: Record<string, never> }, pretty: boolean): string {
  const entries: [string, string][] = [
    ['kind', goString('Status')],
    ['apiVersion', goString('v1')],
    ['metadata', '{}'],
    ['status', goString('Failure')],
    ['message', goString(fields.message)],
    ['reason', goString(fields.reason)],
    ...(fields.details ? ([['details', '{}']] as [string, string][]) : []),
    ['code', String(fields.code)],
  ];
  if (!pretty) return `{${entries.map(([k, v]) => `${goString(k)}:${v}`).join(',')}}\n`;
  return `{\n${entries.map(([k, v]) => `  ${goString(k)}: ${v === '{}' ? '{\n    \n  }' : v}`).join(',\n')}\n}`;
}

/** isPrettyPrint of k8s.io/apiserver's negotiation. */
function prettyRequested(req: IncomingMessage, url: URL): boolean {
  const p = url.searchParams.get('pretty');
  if (p) return p === '1' || p.toLowerCase() === 'true' || p === 't';
  const ua = req.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

function sendStatus(req: IncomingMessage, res: ServerResponse, url: URL, fields: { code: number; reason: string; message: string; details?: Record<string, never> }): void {
  // responsewriters.Forbidden sets nosniff; the Unauthorized handler does not.
  send(res, fields.code, encodeStatus(fields, prettyRequested(req, url)), 'application/json', fields.code === 403);
}

/** responsewriters.Forbidden's text for a non-resource request. */
export function forbiddenMessage(user: UserInfo, verb: string, path: string, reason: string): string {
  // Go's %q.
  const msg = `forbidden: User ${JSON.stringify(user.username)} cannot ${verb} path ${JSON.stringify(path)}`;
  return reason ? `${msg}: ${reason}` : msg;
}

export async function startServing(opts: ServingOptions): Promise<ComponentServer> {
  const log = opts.logger;
  const component = opts.component ?? 'kube-controller-manager';
  const pair: KeyPair =
    opts.certFile && opts.keyFile ? { certPem: readFileSync(opts.certFile, 'utf8'), keyPem: readFileSync(opts.keyFile, 'utf8') } : selfSigned(opts.bindAddress, component);

  const serveEndpoint = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'method not allowed\n');
      return;
    }
    const m = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
    if (m) {
      const endpoint = m[1]!;
      const { code, body } = renderHealth(endpoint, opts.checks.list(), url.searchParams.has('verbose'), m[2]);
      if (code !== 200) log.v(2).info({ endpoint: path, code }, 'health check failed');
      send(res, code, body);
      return;
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => send(res, 200, text, opts.registry.contentType),
        (err: unknown) => {
          log.error(err, 'cannot render metrics');
          send(res, 500, 'cannot render metrics\n');
        },
      );
      return;
    }
    if (path === '/configz' && opts.configz) {
      send(res, 200, JSON.stringify({ componentconfig: opts.configz() }), 'application/json');
      return;
    }
    if (path === '/debug/controllers' && opts.debugControllers) {
      const since = Number(url.searchParams.get('since') ?? NaN);
      send(res, 200, JSON.stringify(opts.debugControllers(Number.isFinite(since) ? since : undefined)), 'application/json');
      return;
    }
    send(res, 404, '404 page not found\n');
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const handle = async () => {
      const authn = await opts.auth.authenticator.authenticate(req);
      if (authn.kind === 'failed') {
        log.v(2).info({ uri: req.url, remote: req.socket.remoteAddress, errors: authn.errors.join('; ') }, 'Unable to authenticate the request due to an error');
        sendStatus(req, res, url, { code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
        return;
      }
      const verb = (req.method ?? 'GET').toLowerCase();
      const d = await opts.auth.authorizer.authorize({ user: authn.user, verb, path: url.pathname });
      switch (d.decision) {
        case 'allow':
          serveEndpoint(req, res, url);
          return;
        case 'error':
          log.error(d.error, { uri: req.url, user: authn.user.username }, 'authorization failed');
          send(res, 500, `Internal Server Error: ${JSON.stringify(req.url ?? '/')}: ${d.error.message}\n`);
          return;
        case 'deny':
        case 'noOpinion':
          log.v(4).info({ uri: req.url, user: authn.user.username, reason: d.reason }, 'Forbidden');
          sendStatus(req, res, url, { code: 403, reason: 'Forbidden', message: forbiddenMessage(authn.user, verb, url.pathname, d.reason), details: {} });
          return;
      }
    };
    handle().catch((err: unknown) => {
      log.error(err, { uri: req.url }, 'request failed');
      if (!res.headersSent) send(res, 500, 'Internal Server Error\n');
      else res.destroy();
    });
  };

  const server: Server = createServer(
    {
      key: pair.keyPem,
      cert: pair.certPem,
      // Ask for a client certificate but never refuse the handshake over it: the authenticator verifies it (401 when it does not).
      requestCert: opts.auth.requestClientCertificates,
      rejectUnauthorized: false,
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    onRequest,
  );
  answerClientErrors(server, log);
  server.on('tlsClientError', (err) => log.v(4).info({ error: err.message }, 'TLS handshake failed'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.bindAddress, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error(err, 'server error'));
  const port = (server.address() as AddressInfo).port;
  const host = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '' ? '127.0.0.1' : opts.bindAddress === '::' ? '[::1]' : opts.bindAddress.includes(':') ? `[${opts.bindAddress}]` : opts.bindAddress;
  log.info({ address: `${opts.bindAddress}:${port}` }, 'Serving securely');
  return {
    url: `https://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
