/**
 * Test support (not a test file): the API handler on a node:http server on
 * port 0 with memory storage (closed with the server unless passed in) and a fixed admin user, plus small HTTP helpers
 * for requests and watch streams.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { newMemoryStorage } from './storage/memory.js';
import type { Storage } from './storage/storage.js';
import { createApiHandler, type ApiHandler, type ApiHandlerOptions } from './handler.js';
import type { Clock } from '../util/clock/clock.js';

export interface TestServer {
  base: string;
  handler: ApiHandler;
  storage: Storage;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; text: string; headers: http.IncomingHttpHeaders }>;
  /** Opens a watch; events arrive in `events`; `next()` waits (bounded) for the next one. */
  watch(path: string, headers?: Record<string, string>): Promise<WatchStream>;
  close(): Promise<void>;
}

export interface WatchStream {
  status: number;
  events: any[];
  /** Resolves with the next event not yet taken; rejects after `ms`. */
  next(ms?: number): Promise<any>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export const admin = { username: 'admin', groups: ['system:masters'] };

export async function startTestServer(opts: Partial<ApiHandlerOptions> & { clock?: Clock } = {}): Promise<TestServer> {
  const ownStorage = !opts.storage;
  const storage = opts.storage ?? newMemoryStorage();
  const handler = await createApiHandler({ ...opts, storage });
  const server = http.createServer((req, res) => handler.handle(req, res, admin));
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    handler.handleUpgrade(req, socket, head, admin);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const agent = new http.Agent({ keepAlive: false });

  function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return new Promise<{ status: number; body: any; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const data = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const h: Record<string, string> = { ...headers };
      if (data !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
      if (data !== undefined) h['Content-Length'] = String(Buffer.byteLength(data));
      const req = http.request(base + path, { method, headers: h, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = undefined;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text, headers: res.headers });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error(`request ${method} ${path} timed out`)));
      if (data !== undefined) req.write(data);
      req.end();
    });
  }

  function watch(path: string, headers: Record<string, string> = {}): Promise<WatchStream> {
    return new Promise((resolve, reject) => {
      const req = http.request(base + path, { method: 'GET', headers, agent }, (res) => {
        const events: any[] = [];
        const waiters: ((e: any) => void)[] = [];
        let taken = 0;
        let buf = '';
        let endResolve!: () => void;
        const ended = new Promise<void>((r) => (endResolve = r));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (!line.trim()) continue;
            events.push(JSON.parse(line));
            waiters.splice(0).forEach((w) => w(undefined));
          }
        });
        res.on('end', () => {
          endResolve();
          waiters.splice(0).forEach((w) => w(undefined));
        });
        res.on('error', () => endResolve());
        resolve({
          status: res.statusCode ?? 0,
          events,
          ended,
          async next(ms = 3000) {
            const deadline = Date.now() + ms;
            while (taken >= events.length) {
              const left = deadline - Date.now();
              if (left <= 0) throw new Error(`no watch event within ${ms} ms (have ${events.length})`);
              await new Promise<void>((r) => {
                const t = setTimeout(r, left);
                waiters.push(() => {
                  clearTimeout(t);
                  r();
                });
              });
              if (res.readableEnded && taken >= events.length) throw new Error('watch ended');
            }
            return events[taken++];
          },
          close() {
            req.destroy();
          },
        });
      });
      req.on('error', (err) => {
        if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
      });
      req.end();
    });
  }

  return {
    base,
    handler,
    storage,
    request,
    watch,
    async close() {
      await handler.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const sock of upgraded) sock.destroy();
      await closed;
      agent.destroy();
      if (ownStorage) await storage.close();
    },
  };
}

/** Polls `fn` until it returns true (bounded). */
export async function eventually(fn: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
