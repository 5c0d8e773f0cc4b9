/**
 * The webhook server (controller-runtime's webhook.Server): HTTPS, one path
 * per handler, AdmissionReview (v1 and v1beta1) and ConversionReview (v1
 * and v1beta1) in and out. Run it as a manager runnable (it serves on every
 * replica, leader or not) or on its own.
 *
 *   const server = newWebhookServer({ port: 9443, dnsNames: ['staticsite-webhook.sites-system.svc'] });
 *   server.register('/default-staticsite', defaultingWebhook(StaticSite, defaults));
 *   mgr.add(server);
 *   // server.caBundle goes into the webhook configurations' clientConfig.caBundle (base64)
 *
 * Without a certificate it generates a CA and a serving certificate for
 * `dnsNames` and `ipAddresses` (default localhost and 127.0.0.1) at
 * construction; `caBundle` is that CA. With `certificate`, `caBundle` is
 * what was given as `caPem` (or the certificate chain itself).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newCA, newSignedCert, type KeyPair } from '../../util/cert/cert.js';
import { newLogger, type Logger } from '../../util/log/logger.js';
import type { Runnable } from '../manager.js';
import type { AdmissionHandler } from './admission.js';
import type { ConversionHandler } from './conversion.js';
import type { AdmissionReview, ConversionReview } from './review-types.js';

export interface WebhookServerOptions {
  /** Default 9443 (controller-runtime's); 0 picks a free port. */
  port?: number;
  /** Default all interfaces. */
  host?: string;
  /** A serving certificate (PEM chain and key); generated when absent. */
  certificate?: KeyPair & { caPem?: string };
  /** Names and addresses of the generated certificate (default localhost, 127.0.0.1). */
  dnsNames?: string[];
  ipAddresses?: string[];
  /** Largest request body accepted (default 8 MiB). */
  maxBodyBytes?: number;
  logger?: Logger;
}

export interface WebhookServer extends Runnable {
  /** Serves `handler` at `path` (an admission or a conversion handler). */
  register(path: string, handler: AdmissionHandler, kind?: 'admission'): void;
  register(path: string, handler: ConversionHandler, kind: 'conversion'): void;
  /** PEM of the CA that signed the serving certificate: what webhook configurations and CRDs need as caBundle. */
  readonly caBundle: string;
  /** `https://host:port` once listening. */
  url(): string | undefined;
  /** Resolves once listening (start() has been called). */
  listening(): Promise<void>;
}

type Route = { kind: 'admission'; handler: AdmissionHandler } | { kind: 'conversion'; handler: ConversionHandler };

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > limit) return undefined;
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

class Impl implements WebhookServer {
  readonly needLeaderElection = false;
  readonly caBundle: string;
  private readonly routes = new Map<string, Route>();
  private readonly pair: KeyPair;
  private readonly log: Logger;
  private address: string | undefined;
  private listeningResolve!: () => void;
  private readonly listeningPromise = new Promise<void>((r) => (this.listeningResolve = r));

  constructor(private readonly opts: WebhookServerOptions) {
    this.log = opts.logger ?? newLogger('webhook-server');
    if (opts.certificate) {
      this.pair = opts.certificate;
      this.caBundle = opts.certificate.caPem ?? opts.certificate.certPem;
    } else {
      const ca = newCA(`kcm-webhook-ca@${Math.floor(Date.now() / 1000)}`, 3650);
      const leaf = newSignedCert(ca, { commonName: 'kcm-webhook', dnsNames: opts.dnsNames ?? ['localhost'], ipAddresses: opts.ipAddresses ?? ['127.0.0.1'], usage: 'server', validityDays: 3650 });
      this.pair = { certPem: leaf.certPem, keyPem: leaf.keyPem };
      this.caBundle = ca.certPem;
    }
  }

  register(path: string, handler: AdmissionHandler | ConversionHandler, kind: 'admission' | 'conversion' = 'admission'): void {
    if (!path.startsWith('/')) throw new TypeError(`webhook path ${JSON.stringify(path)} must start with /`);
    if (this.routes.has(path)) throw new Error(`webhook path ${path} is already registered`);
    this.routes.set(path, kind === 'admission' ? { kind, handler: handler as AdmissionHandler } : { kind, handler: handler as ConversionHandler });
  }

  url(): string | undefined {
    return this.address;
  }

  listening(): Promise<void> {
    return this.listeningPromise;
  }

  async start(signal: AbortSignal): Promise<void> {
    const server: Server = createServer({ key: this.pair.keyPem, cert: this.pair.certPem }, (req, res) => {
      void this.serve(req, res).catch((err: unknown) => {
        this.log.error(err, { path: req.url }, 'webhook handler failed');
        if (!res.headersSent) send(res, 500, `webhook handler failed: ${err instanceof Error ? err.message : String(err)}\n`);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port ?? 9443, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const host = !this.opts.host || this.opts.host === '0.0.0.0' || this.opts.host === '::' ? '127.0.0.1' : this.opts.host;
    this.address = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.log.info({ address: this.address, paths: [...this.routes.keys()].join(',') }, 'serving webhooks');
    this.listeningResolve();
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://webhook').pathname;
    const route = this.routes.get(path);
    if (!route) return send(res, 404, '404 page not found\n');
    if (req.method !== 'POST') return send(res, 405, 'method not allowed\n');
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (contentType !== 'application/json') return send(res, 400, `contentType=${contentType}, expected application/json\n`);
    const text = await readBody(req, this.opts.maxBodyBytes ?? 8 * 1024 * 1024);
    if (text === undefined) return send(res, 413, 'request body too large\n');
    let review: AdmissionReview | ConversionReview;
    try {
      review = JSON.parse(text) as AdmissionReview | ConversionReview;
    } catch (err) {
      return send(res, 400, `cannot decode the review: ${(err as Error).message}\n`);
    }
    const log = this.log.child({ webhook: path });
    if (route.kind === 'admission') {
      const r = review as AdmissionReview;
      if (r.kind !== 'AdmissionReview' || !r.request) return send(res, 400, 'expected an AdmissionReview with a request\n');
      const response = await route.handler(r.request, log);
      return send(res, 200, { apiVersion: r.apiVersion, kind: 'AdmissionReview', response: { ...response, uid: r.request.uid } });
    }
    const c = review as ConversionReview;
    if (c.kind !== 'ConversionReview' || !c.request) return send(res, 400, 'expected a ConversionReview with a request\n');
    const response = await route.handler(c.request, log);
    return send(res, 200, { apiVersion: c.apiVersion, kind: 'ConversionReview', response: { ...response, uid: c.request.uid } });
  }
}

export function newWebhookServer(opts: WebhookServerOptions = {}): WebhookServer {
  return new Impl(opts);
}
