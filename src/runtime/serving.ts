/**
 * The manager's HTTP endpoints: health probes (`/healthz`, `/readyz`, each
 * with `/<path>/<check>` and `?verbose`, in k8s.io/apiserver's format) and
 * Prometheus `/metrics`. Plain HTTP, as controller-runtime serves them;
 * bind addresses as its flags take them: `:8081` (every interface),
 * `127.0.0.1:8080`, or `0` to disable.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { renderHealth, type HealthCheck } from '../util/healthz/healthz.js';
import type { Logger } from '../util/log/logger.js';

export interface EndpointServerOptions {
  address: string;
  healthz?: () => readonly HealthCheck[];
  readyz?: () => readonly HealthCheck[];
  registry?: Registry;
  logger: Logger;
}

export interface EndpointServer {
  /** `http://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Splits `host:port`, `:port` or `[::1]:port`; undefined for `0` and empty (disabled). */
export function parseBindAddress(address: string | undefined): { host: string | undefined; port: number } | undefined {
  if (address === undefined || address === '' || address === '0') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address);
  if (!m) throw new TypeError(`bind address ${JSON.stringify(address)}: want host:port, :port or 0`);
  const host = m[1] ?? m[2];
  const port = Number(m[3]);
  if (port > 65535) throw new TypeError(`bind address ${JSON.stringify(address)}: port out of range`);
  return { host: host === '' ? undefined : host, port };
}

function send(res: ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}

export async function startEndpointServer(opts: EndpointServerOptions): Promise<EndpointServer | undefined> {
  const bind = parseBindAddress(opts.address);
  if (!bind) return undefined;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n');
    const m = /^\/(healthz|readyz)(?:\/(.+))?$/.exec(path);
    const checks = m ? (m[1] === 'healthz' ? opts.healthz : opts.readyz) : undefined;
    if (m && checks) {
      const { code, body } = renderHealth(m[1]!, checks(), url.searchParams.has('verbose'), m[2]);
      if (code !== 200) opts.logger.v(2).info({ endpoint: path, code }, 'health check failed');
      return send(res, code, body);
    }
    if (path === '/metrics' && opts.registry) {
      const registry = opts.registry;
      registry.metrics().then(
        (text) => send(res, 200, text, registry.contentType),
        (err: unknown) => {
          opts.logger.error(err, 'cannot render metrics');
          send(res, 500, 'cannot render metrics\n');
        },
      );
      return;
    }
    send(res, 404, '404 page not found\n');
  };
  const server: Server = createServer(onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(bind.port, bind.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = !bind.host || bind.host === '0.0.0.0' || bind.host === '::' ? '127.0.0.1' : bind.host.includes(':') ? `[${bind.host}]` : bind.host;
  const url = `http://${host}:${addr.port}`;
  opts.logger.info({ address: url }, 'serving');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
