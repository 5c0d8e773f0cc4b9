/**
 * Test support (not a test file): an HTTPS webhook server in the test
 * process with a certificate from a fresh CA (for `clientConfig.caBundle`),
 * recording what it receives, with helpers for admission answers.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newCA, newSignedCert } from '../../../util/cert/cert.js';

export interface ReceivedCall {
  path: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export type WebhookHandler = (call: ReceivedCall, res: ServerResponse) => void | Promise<void>;

export interface TestWebhookServer {
  /** https://127.0.0.1:<port> */
  base: string;
  port: number;
  /** Base64 PEM of the CA that signed the serving certificate. */
  caBundle: string;
  calls: ReceivedCall[];
  /** Routes by path; unknown paths answer 404. */
  handle(path: string, h: WebhookHandler): void;
  close(): Promise<void>;
}

/** Serves HTTPS on 127.0.0.1 with SANs 127.0.0.1, localhost and `dnsNames`. */
export async function startTestWebhookServer(dnsNames: string[] = []): Promise<TestWebhookServer> {
  const ca = newCA('webhook-test-ca');
  const cert = newSignedCert(ca, { commonName: 'webhook', dnsNames: ['localhost', ...dnsNames], ipAddresses: ['127.0.0.1'] });
  const routes = new Map<string, WebhookHandler>();
  const calls: ReceivedCall[] = [];
  const open = new Set<ServerResponse>();
  const server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const url = new URL(req.url ?? '/', 'https://x');
      const call = { path: url.pathname, url: req.url ?? '/', headers: req.headers, body };
      calls.push(call);
      const h = routes.get(url.pathname);
      if (!h) {
        res.writeHead(404).end();
        return;
      }
      open.add(res);
      res.on('close', () => open.delete(res));
      Promise.resolve(h(call, res)).catch((err) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `https://127.0.0.1:${port}`,
    port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    calls,
    handle: (path, h) => void routes.set(path, h),
    async close() {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Answers an AdmissionReview (same apiVersion, the request's uid) with `response` fields. */
export function reviewAnswer(call: ReceivedCall, res: ServerResponse, response: Record<string, unknown>): void {
  const body = { apiVersion: call.body.apiVersion, kind: 'AdmissionReview', response: { uid: call.body.request.uid, ...response } };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A JSON patch as a response's `patch` (base64) with patchType JSONPatch. */
export function jsonPatch(ops: unknown[]): { patch: string; patchType: 'JSONPatch' } {
  return { patch: Buffer.from(JSON.stringify(ops)).toString('base64'), patchType: 'JSONPatch' };
}
