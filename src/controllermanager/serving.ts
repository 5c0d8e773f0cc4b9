/**
 * The controller manager's HTTPS endpoints: `/healthz`, `/livez`, `/readyz`
 * (each with `/<path>/<check>` per check and `?verbose`), `/metrics` (the
 * prom-client registry in Prometheus text format) and `/configz`.
 *
 * Output follows k8s.io/apiserver's healthz: `ok` on success; on failure
 * HTTP 500 with one `[+]name ok` / `[-]name failed: reason withheld` line per
 * check and `healthz check failed`.
 *
 * Deliberate difference: kube-controller-manager authorizes /metrics and
 * /configz through the API server (delegated auth); kcm serves them to any
 * client that reaches the port. Bind to 127.0.0.1 (as `kcm up` does) when
 * that matters.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { newCA, newSignedCert, type KeyPair } from '../util/cert/cert.js';
import type { Logger } from '../util/log/logger.js';
import { renderHealth, type HealthChecks } from '../util/healthz/healthz.js';

export { newHealthChecks, renderHealth, type HealthCheck, type HealthChecks } from '../util/healthz/healthz.js';

export interface ServingOptions {
  bindAddress: string;
  /** 0 is treated as "pick a free port" here; callers skip serving for upstream's "0 disables". */
  port: number;
  /** PEM files; when absent a self-signed certificate is generated in memory. */
  certFile?: string;
  keyFile?: string;
  checks: HealthChecks;
  registry: Registry;
  configz: () => unknown;
  logger: Logger;
}

export interface ControllerManagerServer {
  /** `https://<host>:<port>`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function selfSigned(bindAddress: string): KeyPair {
  const ca = newCA(`kcm-controller-manager-ca@${Math.floor(Date.now() / 1000)}`, 365);
  const ips = ['127.0.0.1'];
  if (bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::' && !ips.includes(bindAddress)) ips.push(bindAddress);
  const leaf = newSignedCert(ca, { commonName: 'localhost@kcm-controller-manager', dnsNames: ['localhost'], ipAddresses: ips, usage: 'server', validityDays: 365 });
  return { certPem: leaf.certPem + ca.certPem, keyPem: leaf.keyPem };
}

function send(res: ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache, private' });
  res.end(body);
}

export async function startServing(opts: ServingOptions): Promise<ControllerManagerServer> {
  const pair: KeyPair =
    opts.certFile && opts.keyFile ? { certPem: readFileSync(opts.certFile, 'utf8'), keyPem: readFileSync(opts.keyFile, 'utf8') } : selfSigned(opts.bindAddress);
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'method not allowed\n');
      return;
    }
    const m = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
    if (m) {
      const endpoint = m[1]!;
      const { code, body } = renderHealth(endpoint, opts.checks.list(), url.searchParams.has('verbose'), m[2]);
      if (code !== 200) opts.logger.v(2).info({ endpoint: path, code }, 'health check failed');
      send(res, code, body);
      return;
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => send(res, 200, text, opts.registry.contentType),
        (err: unknown) => {
          opts.logger.error(err, 'cannot render metrics');
          send(res, 500, 'cannot render metrics\n');
        },
      );
      return;
    }
    if (path === '/configz') {
      send(res, 200, JSON.stringify({ componentconfig: opts.configz() }), 'application/json');
      return;
    }
    send(res, 404, '404 page not found\n');
  };
  const server: Server = createServer({ key: pair.keyPem, cert: pair.certPem }, onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.bindAddress, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '' ? '127.0.0.1' : opts.bindAddress.includes(':') ? `[${opts.bindAddress}]` : opts.bindAddress;
  opts.logger.info({ address: `${opts.bindAddress}:${port}` }, 'Serving securely');
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
