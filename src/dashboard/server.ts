/**
 * The dashboard's HTTP server (`kcm up --dashboard-port`, `kcm dashboard`):
 * the page (web/dashboard, built into dist/web/dashboard), a stream of
 * server-sent events with the cluster's state (model.ts) and the
 * controllers' (controllers-source.ts), and the timeline and object reads
 * (protocol.ts lists them).
 *
 * Nobody gets in anonymously. A browser signs in once at
 * `/login?token=T`, which sets an HttpOnly session cookie. T is either the
 * login token this process printed with its URL, or a bearer token the API
 * server accepts (TokenReview) for a user allowed to list pods in every
 * namespace (SubjectAccessReview), so the kubeconfig's token works too.
 * Scripts may send `Authorization: Bearer <token>` instead of the cookie.
 * On a loopback address only loopback Host headers are served (no DNS
 * rebinding from a web page).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { KubeClient } from '../client/client.js';
import type { Logger } from '../util/log/logger.js';
import { ControllersSource } from './controllers-source.js';
import type { RestConfig } from '../client/rest-config.js';
import { ClusterModel } from './model.js';
import type { ControllersState, Snapshot } from './protocol.js';

export interface DashboardOptions {
  /** The dashboard's API client (watches, TokenReviews, SubjectAccessReviews). */
  client: KubeClient;
  /** The same credentials, for the controller manager's endpoint. */
  restConfig: RestConfig;
  /** The API server's URL as users know it (shown in the page). */
  clusterUrl: string;
  /** The controller manager's HTTPS URL; a function when it is known only later (kcm up). Undefined: no controllers view. */
  controllerManagerUrl?: string | (() => string | undefined);
  controllerManagerCaFile?: string;
  /** Default 127.0.0.1. */
  bindAddress?: string;
  /** 0 picks a free port. */
  port: number;
  /** Start watching at once rather than on the first visit (kcm dashboard). */
  eager?: boolean;
  logger: Logger;
}

export interface RunningDashboard {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** The URL with this process's login token: open it to sign in. */
  loginUrl: string;
  port: number;
  close(): Promise<void>;
}

const COOKIE = 'kcm_dashboard_session';
const SESSION_MS = 12 * 3600_000;
const REVIEW_CACHE_MS = 10_000;
const CONTROLLERS_EVERY_MS = 1_000;
/** A client whose socket holds more than this unsent is dropped (it reconnects and gets a fresh snapshot). */
const MAX_BUFFERED = 16 * 1024 * 1024;

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.png': 'image/png', '.svg': 'image/svg+xml' };

/** dist/web/dashboard, seen from dist/src/dashboard (tsc) or dist/bundle (the bundle). */
export function webRoot(): string | undefined {
  for (const rel of ['../../web/dashboard/', '../web/dashboard/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    // The built page has app.js; web/dashboard in a checkout (the bundle's ../../) has only the sources.
    if (existsSync(`${dir}index.html`) && existsSync(`${dir}app.js`)) return dir;
  }
  return undefined;
}

function isLoopback(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address === 'localhost';
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function send(res: ServerResponse, code: number, body: string | Buffer, type = 'text/plain; charset=utf-8', extra: Record<string, string> = {}): void {
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...extra });
  res.end(body);
}

function sendJson(res: ServerResponse, code: number, value: unknown): void {
  send(res, code, JSON.stringify(value), 'application/json');
}

const SIGN_IN_PAGE = `<!doctype html><meta charset="utf-8"><title>kcm dashboard: sign in</title>
<body style="font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;line-height:1.5">
<h1>kcm dashboard</h1><p>Not signed in. Open the dashboard URL that kcm printed when it started (it carries a login token),
or <code>/login?token=&lt;token&gt;</code> with a bearer token the API server accepts (for example the admin kubeconfig's).</p></body>`;

export async function startDashboard(opts: DashboardOptions): Promise<RunningDashboard> {
  const log = opts.logger;
  const bind = opts.bindAddress ?? '127.0.0.1';
  const loginToken = randomBytes(24).toString('base64url');
  const sessions = new Map<string, { user: string; expires: number }>();
  const reviews = new Map<string, { user: string | undefined; at: number }>();
  const model = new ClusterModel({ client: opts.client, logger: log.child({}, 'model') });
  const cmUrl = () => (typeof opts.controllerManagerUrl === 'function' ? opts.controllerManagerUrl() : opts.controllerManagerUrl);
  let source: ControllersSource | undefined;
  let controllersTimer: NodeJS.Timeout | undefined;
  const streams = new Set<ServerResponse>();
  const root = webRoot();

  /** The user a bearer token belongs to when the API server accepts it and lets the user list pods everywhere; undefined otherwise. */
  const review = async (token: string): Promise<string | undefined> => {
    const cached = reviews.get(token);
    if (cached && Date.now() - cached.at < REVIEW_CACHE_MS) return cached.user;
    let user: string | undefined;
    try {
      const tr = await opts.client.request<{ status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } } }>(
        'POST',
        '/apis/authentication.k8s.io/v1/tokenreviews',
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } },
      );
      const u = tr.status?.user;
      if (tr.status?.authenticated && u?.username) {
        const sar = await opts.client.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: { user: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups ?? [], ...(u.extra ? { extra: u.extra } : {}), resourceAttributes: { verb: 'list', resource: 'pods' } },
          },
        });
        if (sar.status?.allowed) user = u.username;
        else log.info({ user: u.username }, 'dashboard sign-in refused: the user may not list pods in all namespaces');
      }
    } catch (err) {
      log.error(err, 'cannot review a dashboard token');
      return undefined;
    }
    reviews.set(token, { user, at: Date.now() });
    if (reviews.size > 1000) reviews.clear();
    return user;
  };

  const authenticate = async (req: IncomingMessage): Promise<string | undefined> => {
    const sid = cookieOf(req, COOKIE);
    const s = sid ? sessions.get(sid) : undefined;
    if (s && s.expires > Date.now()) return s.user;
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) return review(auth.slice(7).trim());
    return undefined;
  };

  const pollControllers = async (): Promise<void> => {
    const url = cmUrl();
    let state: ControllersState;
    if (!url) {
      state = { source: '', mode: 'debug', ok: false, error: 'no controller manager endpoint: it serves no port (--controller-manager-secure-port 0), or pass kcm dashboard --controller-manager-url', fetchedAt: Date.now(), controllers: [], queues: [] };
    } else {
      source ??= new ControllersSource({ url, restConfig: opts.restConfig, ...(opts.controllerManagerCaFile ? { caFile: opts.controllerManagerCaFile } : {}), logger: log.child({}, 'controllers') });
      state = await source.read((d) => model.addReconciles(d));
    }
    broadcast('controllers', state);
    latestControllers = state;
  };
  let latestControllers: ControllersState | null = null;

  const schedulePoll = () => {
    if (controllersTimer || streams.size === 0) return;
    controllersTimer = setTimeout(() => {
      void pollControllers()
        .catch((err: unknown) => log.error(err, 'reading the controller manager'))
        .finally(() => {
          controllersTimer = undefined;
          schedulePoll();
        });
    }, CONTROLLERS_EVERY_MS);
  };

  const write = (res: ServerResponse, event: string, data: unknown): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (res.writableLength > MAX_BUFFERED) {
      log.info({ buffered: res.writableLength }, 'dropping a dashboard stream that does not keep up');
      res.destroy();
    }
  };
  const broadcast = (event: string, data: unknown) => {
    for (const res of streams) write(res, event, data);
  };
  model.onDelta((d) => broadcast('delta', d));
  model.onScheduling((d) => broadcast('scheduling', d));

  const stream = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.write(': kcm dashboard\nretry: 2000\n\n');
    await model.start();
    if (req.destroyed || res.destroyed) return;
    const snapshot: Snapshot = { time: Date.now(), cluster: opts.clusterUrl, namespaces: model.namespaces(), objects: model.summaries(), controllers: latestControllers, scheduling: model.scheduling() };
    write(res, 'snapshot', snapshot);
    streams.add(res);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    res.on('close', () => {
      clearInterval(keepAlive);
      streams.delete(res);
    });
    if (!latestControllers) void pollControllers().catch((err: unknown) => log.error(err, 'reading the controller manager'));
    schedulePoll();
  };

  const serveStatic = (res: ServerResponse, path: string): void => {
    if (!root) {
      send(res, 500, 'the dashboard page is not built: run `npm run build` (dist/web/dashboard is missing)\n');
      return;
    }
    const file = path === '/' ? 'index.html' : path.slice(1);
    if (!/^[\w.-]+$/.test(file) || file.startsWith('.') || !existsSync(root + file)) {
      send(res, 404, 'not found\n');
      return;
    }
    send(res, 200, readFileSync(root + file), TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream');
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, port: number): Promise<void> => {
    if (isLoopback(bind)) {
      const host = (req.headers.host ?? '').toLowerCase();
      if (![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host)) {
        send(res, 403, 'forbidden: the dashboard answers only to loopback host names\n');
        return;
      }
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'method not allowed\n', undefined, { Allow: 'GET, HEAD' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/healthz') return send(res, 200, 'ok');
    if (url.pathname === '/login') {
      const token = url.searchParams.get('token') ?? '';
      const user = token && safeEqual(token, loginToken) ? 'kcm-dashboard-login' : token ? await review(token) : undefined;
      if (!user) {
        send(res, 401, SIGN_IN_PAGE, 'text/html; charset=utf-8');
        return;
      }
      const sid = randomBytes(24).toString('base64url');
      sessions.set(sid, { user, expires: Date.now() + SESSION_MS });
      for (const [k, s] of sessions) if (s.expires <= Date.now()) sessions.delete(k);
      res.writeHead(303, { Location: '/', 'Set-Cookie': `${COOKIE}=${sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}`, 'Cache-Control': 'no-store' });
      res.end();
      return;
    }
    const user = await authenticate(req);
    if (!user) {
      if (url.pathname.startsWith('/api/')) sendJson(res, 401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'not signed in: open the URL kcm printed, or /login?token=<token>', reason: 'Unauthorized', code: 401 });
      else send(res, 401, SIGN_IN_PAGE, 'text/html; charset=utf-8');
      return;
    }
    switch (url.pathname) {
      case '/api/stream':
        return stream(req, res);
      case '/api/timeline': {
        await model.start();
        const uid = url.searchParams.get('uid') ?? '';
        return sendJson(res, 200, model.timeline(uid, url.searchParams.get('descendants') === '1'));
      }
      case '/api/object': {
        await model.start();
        const obj = model.object(url.searchParams.get('uid') ?? '');
        return obj ? sendJson(res, 200, obj) : sendJson(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'no such object', reason: 'NotFound', code: 404 });
      }
      default:
        return serveStatic(res, url.pathname);
    }
  };

  const server: Server = createServer((req, res) => {
    const port = (server.address() as AddressInfo).port;
    handle(req, res, port).catch((err: unknown) => {
      log.error(err, { path: req.url }, 'dashboard request failed');
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = bind.includes(':') ? `[${bind}]` : bind === '0.0.0.0' ? '127.0.0.1' : bind;
  const base = `http://${host}:${port}/`;
  if (opts.eager) void model.start().catch((err: unknown) => log.error(err, 'starting the dashboard watches'));
  return {
    url: base,
    loginUrl: `${base}login?token=${loginToken}`,
    port,
    close: async () => {
      if (controllersTimer) clearTimeout(controllersTimer);
      for (const res of streams) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await model.stop();
      await source?.close();
    },
  };
}
