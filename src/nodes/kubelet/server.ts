/**
 * The simulated kubelets' HTTP endpoint: one server (loopback, bearer token)
 * for every node of a simulator, advertised on each Node by the annotation
 * `kcm.dev/kubelet-endpoint` and `status.daemonEndpoints.kubeletEndpoint`.
 * The API server proxies to it as kube-apiserver proxies to kubelets:
 *
 * | Path | What |
 * |------|------|
 * | `GET /containerLogs/{ns}/{pod}/{container}` | the container's log (`follow`, `previous`, `timestamps`, `tailLines`, `sinceSeconds`, `sinceTime`, `limitBytes`), kubelet's plain-text errors |
 * | `/exec/{ns}/{pod}/{container}?command=...` | `kubectl exec` (SPDY or WebSocket upgrade): the command runs in the container's shell and file system, live |
 * | `/attach/{ns}/{pod}/{container}` | `kubectl attach`: the main process's output from now on, until it ends |
 * | `/portForward/{ns}/{pod}` | `kubectl port-forward`: each connection is answered by the HTTP server the container simulates on that port |
 * | `{METHOD} /kcm/podProxy/{ns}/{pod}/{port}/{path}` | kcm's own: the pod proxy (simulated pod IPs are not routable) |
 * | `GET /healthz`, `GET /pods` | as kubelet (every simulated pod of this process) |
 *
 * Pods are unique by namespace and name, so one server serves all nodes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ContainerSim, PodRuntime } from '../pod-runtime.js';
import { formatLogTime, isInteractiveShell, type ContainerLog } from '../container-process.js';
import { containerArgv } from '../images/index.js';
import { parseExecQuery, parsePortForwardQuery, serveRemoteCommand, servePortForward, type ExecStreams, type ExecOutcome } from './streaming/index.js';
import { runLiveExec } from './live-exec.js';

/** Where a simulated kubelet can be reached (the API server reads it before the node's addresses). */
export const KUBELET_ENDPOINT_ANNOTATION = 'kcm.dev/kubelet-endpoint';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

export interface KubeletHost {
  /** The pod and its runtime, when one of ours runs it. */
  pod(namespace: string, name: string): { pod: Pod; runtime: PodRuntime } | undefined;
  pods(): Pod[];
  /** What the pod answers on `port` (its simulated server), or an error text such as a refused connection. */
  http(namespace: string, name: string, port: number, req: { method: string; path: string; headers: Record<string, string>; body: string }): HttpAnswer | string;
  /** The pod needs a sync (a container's process ended from here). */
  kick(namespace: string, name: string): void;
}

export interface KubeletServerOptions {
  host: KubeletHost;
  clock: Clock;
  logger: Logger;
  /** Required `Authorization: Bearer <token>`; undefined = no authentication (loopback only). */
  token?: string;
  /** Default 127.0.0.1. */
  address?: string;
  /** Default 0 (any free port). */
  port?: number;
}

export interface KubeletServer {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  close(): Promise<void>;
}

function text(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

function containerSims(rt: PodRuntime): ContainerSim[] {
  return [...rt.initContainers, ...rt.containers];
}

/** kubelet's validateContainerLogStatus: which instance's log, or the error it reports (400). */
export function logOf(rt: PodRuntime, name: string, container: string, previous: boolean): ContainerLog | string {
  const c = containerSims(rt).find((x) => x.name === container);
  if (!c) return `container "${container}" in pod "${name}" is not available`;
  const hasLast = !!c.lastTerminated || !!c.previousLog;
  if (previous) {
    const prev = c.state.kind === 'terminated' ? c.previousLog : c.lastTerminated ? (c.state.kind === 'running' ? c.previousLog : c.log) : undefined;
    return prev ?? `previous terminated container "${container}" in pod "${name}" not found`;
  }
  if (c.state.kind === 'running' || c.state.kind === 'terminated') return c.log ?? `container "${container}" in pod "${name}" is terminated`;
  if (hasLast && c.log) return c.log;
  if (c.state.kind === 'waiting') {
    const reason = c.state.reason;
    if (reason === 'ErrImagePull') return `container "${container}" in pod "${name}" is waiting to start: image can't be pulled`;
    if (reason === 'ImagePullBackOff') return `container "${container}" in pod "${name}" is waiting to start: trying and failing to pull image`;
    return `container "${container}" in pod "${name}" is waiting to start: ${reason}`;
  }
  return `container "${container}" in pod "${name}" is waiting to start - no logs yet`;
}

function parseTimeMs(v: string | null): number | undefined {
  if (!v) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

export function startKubeletServer(o: KubeletServerOptions): Promise<KubeletServer> {
  const log = o.logger;
  const authorized = (req: IncomingMessage) => !o.token || req.headers.authorization === `Bearer ${o.token}`;

  const containerLogs = (res: ServerResponse, ns: string, name: string, container: string, q: URLSearchParams) => {
    const found = o.host.pod(ns, name);
    if (!found) return text(res, 404, `pod "${name}" does not exist`);
    const spec = [...(found.pod.spec?.initContainers ?? []), ...(found.pod.spec?.containers ?? [])];
    if (!spec.some((c) => c.name === container)) return text(res, 404, `container "${container}" not found in pod "${name}"`);
    const tail = q.get('tail');
    if (tail && tail !== 'all' && !q.has('tailLines')) q.set('tailLines', tail);
    const l = logOf(found.runtime, name, container, q.get('previous') === 'true');
    if (typeof l === 'string') return text(res, 400, l);
    const sinceSeconds = intParam(q, 'sinceSeconds');
    const sinceMs = sinceSeconds !== undefined ? o.clock.now() - sinceSeconds * 1000 : parseTimeMs(q.get('sinceTime'));
    const tailLines = intParam(q, 'tailLines');
    const limitBytes = intParam(q, 'limitBytes');
    const timestamps = q.get('timestamps') === 'true';
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    const body = l.read({ ...(sinceMs !== undefined ? { sinceMs } : {}), ...(tailLines !== undefined ? { tailLines } : {}), ...(limitBytes !== undefined ? { limitBytes } : {}), timestamps });
    res.write(body);
    let sent = Buffer.byteLength(body);
    if (q.get('follow') !== 'true' || l.ended || (limitBytes !== undefined && sent >= limitBytes)) return void res.end();
    // Follow: lines as they are completed, until the instance ends or the client goes away.
    let partial = '';
    let partialAt = 0;
    const stop = l.follow(
      (c) => {
        if (!partial) partialAt = c.atMs;
        partial += c.data;
        const nl = partial.lastIndexOf('\n');
        if (nl < 0) return;
        const complete = partial.slice(0, nl + 1);
        partial = partial.slice(nl + 1);
        let out = timestamps ? complete.split(/(?<=\n)/).map((line) => `${formatLogTime(partialAt)} ${line}`).join('') : complete;
        if (limitBytes !== undefined && sent + Buffer.byteLength(out) > limitBytes) out = Buffer.from(out).subarray(0, limitBytes - sent).toString();
        sent += Buffer.byteLength(out);
        res.write(out);
        if (limitBytes !== undefined && sent >= limitBytes) {
          stop();
          res.end();
        }
      },
      () => {
        if (partial) res.write(timestamps ? `${formatLogTime(partialAt)} ${partial}` : partial);
        res.end();
      },
    );
    res.on('close', stop);
  };

  const podProxy = (req: IncomingMessage, res: ServerResponse, ns: string, name: string, port: number, path: string, search: string) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const a = o.host.http(ns, name, port, { method: req.method ?? 'GET', path: `${path}${search}`, headers, body: Buffer.concat(chunks).toString() });
      if (typeof a === 'string') return text(res, 502, a);
      res.writeHead(a.status, a.headers);
      res.end(req.method === 'HEAD' ? undefined : a.body);
    });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (!authorized(req)) return text(res, 401, 'Unauthorized');
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const parts = url.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
    if (parts[0] === 'containerLogs' && parts.length === 4 && req.method === 'GET') return containerLogs(res, parts[1]!, parts[2]!, parts[3]!, url.searchParams);
    if (parts[0] === 'kcm' && parts[1] === 'podProxy' && parts.length >= 5) {
      const port = Number(parts[4]);
      const rest = url.pathname.split('/').slice(6).join('/');
      return podProxy(req, res, parts[2]!, parts[3]!, port, `/${rest}`, url.search);
    }
    if (url.pathname === '/healthz') return text(res, 200, 'ok');
    if (url.pathname === '/pods' || url.pathname === '/pods/') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: o.host.pods() }));
    }
    if (['exec', 'attach', 'portForward'].includes(parts[0] ?? '')) return text(res, 400, 'Upgrade request required');
    text(res, 404, '404 page not found');
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const fail = (code: number, message: string) => {
      socket.end(`HTTP/1.1 ${code} ${code === 404 ? 'Not Found' : code === 401 ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message) + 1}\r\nConnection: close\r\n\r\n${message}\n`);
    };
    if (!authorized(req)) return fail(401, 'Unauthorized');
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const parts = url.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
    const kind = parts[0];
    const found = parts.length >= 3 ? o.host.pod(parts[1]!, parts[2]!) : undefined;
    if (!found) return fail(404, 'pod does not exist');
    if (kind === 'portForward') {
      const name = parts[2]!;
      let ports: number[] = [];
      try {
        ports = parsePortForwardQuery(url.searchParams);
      } catch (err) {
        // SPDY clients name the port on each stream; the WebSocket channel protocol needs it in the query.
        if (req.headers['sec-websocket-key'] && !String(req.headers['sec-websocket-protocol'] ?? '').includes('SPDY')) return fail(400, (err as Error).message);
      }
      servePortForward(req, socket, head, ports, (port) => portStream(o.host, parts[1]!, name, port));
      return;
    }
    if ((kind !== 'exec' && kind !== 'attach') || parts.length !== 4) return fail(404, '404 page not found');
    const c = containerSims(found.runtime).find((x) => x.name === parts[3]);
    if (!c) return fail(404, `container not found ("${parts[3]}")`);
    const opts = parseExecQuery(url.searchParams);
    serveRemoteCommand(req, socket, head, opts, async (s: ExecStreams): Promise<ExecOutcome> => {
      if (c.state.kind !== 'running') return { error: `container not found ("${c.name}")` };
      const run = c.state.run;
      if (kind === 'attach') {
        // A shell waiting on stdin (stdin: true): attaching with a terminal gives its prompt.
        const argv = containerArgv(c.spec);
        if (c.spec.stdin && s.tty && s.stdin && isInteractiveShell(argv)) {
          // The prompt is the container's main process: when it exits, so does the container.
          const r = await runLiveExec(run, argv, s, o.clock);
          if (!s.closed || c.spec.stdinOnce) {
            run.exitNow('exitCode' in r ? r.exitCode : 1, o.clock.now());
            o.host.kick(parts[1]!, parts[2]!);
          }
          return { exitCode: 0 };
        }
        return attach(run.log, s);
      }
      return runLiveExec(run, opts.command, s, o.clock);
    });
  };

  const server: Server = createServer(onRequest);
  server.on('upgrade', onUpgrade);
  server.on('clientError', (_e, socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.address ?? '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      log.info({ port }, 'kubelet endpoint listening');
      resolve({
        port,
        url: `http://${o.address ?? '127.0.0.1'}:${port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}


/** `kubectl attach`: the main process's output from now on until it ends (its stdin is not connected). */
function attach(l: ContainerLog, s: ExecStreams): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    const stop = l.follow(
      (c) => (c.stream === 'stderr' && s.stderr ? s.stderr(c.data) : s.stdout?.(c.data)),
      () => resolve({ exitCode: 0 }),
    );
    s.onClose(() => {
      stop();
      resolve({ exitCode: 0 });
    });
  });
}

/** One end of an in-memory connection whose other end is an HTTP/1.1 server answering as the pod does. */
function portStream(host: KubeletHost, ns: string, name: string, port: number): Duplex | string {
  const probe = host.http(ns, name, port, { method: 'HEAD', path: '/', headers: {}, body: '' });
  if (typeof probe === 'string' && /refused|not found|unable/.test(probe)) return probe;
  let buf = Buffer.alloc(0);
  const client = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const req = parseHttpRequest(buf);
        if (!req) break;
        buf = buf.subarray(req.length);
        const a = host.http(ns, name, port, { method: req.method, path: req.path, headers: req.headers, body: req.body });
        const ans: HttpAnswer = typeof a === 'string' ? { status: 502, headers: { 'Content-Type': 'text/plain' }, body: `${a}\n` } : a;
        const body = req.method === 'HEAD' ? Buffer.alloc(0) : Buffer.from(ans.body);
        const headers = { ...ans.headers, 'Content-Length': String(Buffer.from(ans.body).length) };
        const head = [`HTTP/1.1 ${ans.status} ${STATUS_TEXT[ans.status] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
        client.push(Buffer.concat([Buffer.from(head), body]));
        if ((req.headers['connection'] ?? '').toLowerCase() === 'close') {
          client.push(null);
          break;
        }
      }
      cb();
    },
    final(cb) {
      client.push(null);
      cb();
    },
  });
  return client;
}

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 304: 'Not Modified', 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/** One complete HTTP/1.1 request at the start of `buf` (Content-Length bodies only). */
export function parseHttpRequest(buf: Buffer): { method: string; path: string; headers: Record<string, string>; body: string; length: number } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const [method = 'GET', path = '/'] = lines[0]!.split(' ');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const len = Number(headers['content-length'] ?? 0) || 0;
  if (buf.length < end + 4 + len) return undefined;
  return { method, path, headers, body: buf.subarray(end + 4, end + 4 + len).toString(), length: end + 4 + len };
}
