/**
 * What known images answer over HTTP: nginx and httpd static files from the
 * container's file system, agnhost netexec / serve-hostname / liveness /
 * test-webserver / porter. Responses follow the real servers (status lines,
 * bodies, the headers clients look at).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { FileSystem, type FsNode } from '../shell/index.js';
import { parseImage } from './entrypoint.js';
import { goDuration, goJSONMap, goLog, goJSONString, goQuote, goTimeNow, httpDate, parseGoDuration } from './go.js';
import { httpdVersion, nginxVersion, parseFlags, programOf } from './programs.js';

export interface ServerRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body?: string;
  clientIP?: string;
  /** The client's source port (netexec `/clientip` prints `ip:port`); default 40000. */
  clientPort?: number;
}

export interface ServerResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * The process exits because of this request (netexec `/exit`, `/shutdown`):
   * with `code`, `afterMs` after the request. `reset`: the program exits before
   * answering, so the client sees the connection closed (curl exit 52) instead of this response.
   */
  exit?: { code: number; afterMs: number; reset: boolean };
}

export type FetchResult = { status: number; body: string } | { error: 'refused' | 'timeout' | 'unreachable' | 'dns' | string };

export interface ServerContext {
  fs: FileSystem;
  podName?: string;
  podIP?: string;
  hostname: string;
  env: Record<string, string>;
  /** Current virtual time (ms); a function when the server lives across requests. */
  now: number | (() => number);
  /** When the program started (liveness, netexec's monotonic clock); default `now` at creation. */
  startedAt?: number;
  /** The port being served (porter serves one value per port); default the first served port. */
  port?: number;
  /** The container image (nginx/httpd versions in headers and error pages). */
  image?: string;
  /** netexec `/shell`: runs `sh -c cmd` in the container; output is stdout+stderr. */
  runShell?: (cmd: string) => { output: string; exitCode: number };
  /** netexec `/dial?protocol=http`: GET http://ip:port/path from this pod. */
  fetch?: (ip: string, port: number, path: string) => FetchResult;
  /** Writes a line to the program's log (stderr, as Go's log package): netexec logs every request. */
  log?: (line: string) => void;
  /** netexec `/dial?protocol=udp`: send `payload`, the reply or an error. */
  udp?: (ip: string, port: number, payload: string) => { body: string } | { error: 'refused' | 'timeout' | string };
}

export type ServerHandler = (req: ServerRequest) => ServerResponse;

type Program =
  | { kind: 'nginx' }
  | { kind: 'httpd' }
  | { kind: 'netexec'; port: number; override: string }
  | { kind: 'serve-hostname'; port: number; close: boolean }
  | { kind: 'liveness' }
  | { kind: 'test-webserver'; port: number }
  | { kind: 'porter'; json: boolean }
  | { kind: 'nettest'; port: number };

function base(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

function identify(argv: string[]): Program | undefined {
  const a = programOf(argv);
  if (a.length === 0) return undefined;
  const name = base(a[0]!);
  if (name === 'nginx') {
    const g = a.indexOf('-g');
    return g >= 0 && /daemon\s+off\s*;/.test(a[g + 1] ?? '') ? { kind: 'nginx' } : undefined;
  }
  if (name === 'httpd-foreground' || (name === 'httpd' && a.includes('-DFOREGROUND'))) return { kind: 'httpd' };
  if (name !== 'agnhost' && name !== 'agnhost-2') return undefined;
  const sub = a[1];
  const rest = a.slice(2);
  const int = (v: string | undefined, d: number): number => (v === undefined ? d : Number(v));
  switch (sub) {
    case 'netexec': {
      const p = parseFlags(rest, { 'http-port': 'int', 'udp-port': 'int', 'sctp-port': 'int', 'tls-cert-file': 'string', 'tls-private-key-file': 'string', 'http-override': 'string' });
      if (p.error) return undefined;
      return { kind: 'netexec', port: int(p.flags.get('http-port'), 8080), override: p.flags.get('http-override') ?? '' };
    }
    case 'serve-hostname': {
      const p = parseFlags(rest, { tcp: 'bool', udp: 'bool', http: 'bool', close: 'bool', port: 'int' });
      if (p.error) return undefined;
      const on = (n: string, d: boolean): boolean => (p.flags.has(n) ? p.flags.get(n) === 'true' : d);
      if (!on('http', true) || on('tcp', false) || on('udp', false)) return undefined;
      return { kind: 'serve-hostname', port: int(p.flags.get('port'), 9376), close: on('close', false) };
    }
    case 'liveness':
      return { kind: 'liveness' };
    case 'test-webserver': {
      const p = parseFlags(rest, { port: 'int' });
      return p.error ? undefined : { kind: 'test-webserver', port: int(p.flags.get('port'), 80) };
    }
    case 'porter': {
      const p = parseFlags(rest, { 'json-response': 'bool' });
      return p.error ? undefined : { kind: 'porter', json: p.flags.get('json-response') === 'true' };
    }
    case 'nettest': {
      const p = parseFlags(rest, { port: 'int', peers: 'int', service: 'string', namespace: 'string', 'delay-shutdown': 'int' });
      return p.error ? undefined : { kind: 'nettest', port: int(p.flags.get('port'), 8080) };
    }
    default:
      return undefined;
  }
}

function porterPorts(env: Record<string, string>): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (const [k, v] of Object.entries(env)) {
    const m = /^SERVE_PORT_(\d+)$/.exec(k);
    if (m) out.push([Number(m[1]), v]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

function containerEnv(container: Container | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container?.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

/** The TCP ports on which the program of `argv` answers HTTP (empty: none known). */
export function servedPorts(argv: string[], container?: Container): number[] {
  const p = identify(argv);
  if (!p) return [];
  switch (p.kind) {
    case 'nginx':
    case 'httpd':
      return [80];
    case 'liveness':
      return [8080];
    case 'porter':
      return porterPorts(containerEnv(container)).map(([n]) => n);
    default:
      return [p.port];
  }
}

// ---------------------------------------------------------------------------
// helpers

function clock(ctx: ServerContext): number {
  return typeof ctx.now === 'function' ? ctx.now() : ctx.now;
}

const GO_TEXT = 'text/plain; charset=utf-8';

/** net/http's DetectContentType, for the bodies these servers write. */
function sniff(body: string): string {
  const t = body.replace(/^[\t\n\x0c\r ]+/, '').toLowerCase();
  if (/^(<!doctype html|<html|<head|<script|<iframe|<h1|<div|<font|<table|<a|<style|<title|<b|<body|<br|<p|<!--)[ >]/.test(t)) return 'text/html; charset=utf-8';
  if (t.startsWith('<?xml')) return 'text/xml; charset=utf-8';
  if (/[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]/.test(body)) return 'application/octet-stream';
  return GO_TEXT;
}

/** A net/http response: Date, Content-Length, Content-Type sniffed when the body is not empty. */
function goResponse(ctx: ServerContext, method: string, status: number, body: string, headers: Record<string, string> = {}): ServerResponse {
  const h: Record<string, string> = { ...headers };
  if (body !== '' && !('Content-Type' in h)) h['Content-Type'] = sniff(body);
  h['Date'] = httpDate(clock(ctx));
  h['Content-Length'] = String(Buffer.byteLength(body));
  return { status, headers: h, body: method === 'HEAD' ? '' : body };
}

/** http.Error. */
function goError(ctx: ServerContext, method: string, msg: string, status: number): ServerResponse {
  return goResponse(ctx, method, status, msg + '\n', { 'Content-Type': GO_TEXT, 'X-Content-Type-Options': 'nosniff' });
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  412: 'Precondition Failed',
  417: 'Expectation Failed',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** http.Redirect. */
function goRedirect(ctx: ServerContext, req: ServerRequest, location: string, code: number): ServerResponse {
  let loc = location;
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(loc) && !loc.startsWith('/')) {
    const dir = req.path.slice(0, req.path.lastIndexOf('/') + 1) || '/';
    loc = dir + loc;
  }
  const h: Record<string, string> = { Location: loc };
  let body = '';
  if (req.method === 'GET' || req.method === 'HEAD') {
    h['Content-Type'] = 'text/html; charset=utf-8';
    body = `<a href="${htmlEscape(loc)}">${STATUS_TEXT[code] ?? ''}</a>.\n\n`;
  }
  return goResponse(ctx, req.method, code, body, h);
}

function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');
}

function goNotFound(ctx: ServerContext, method: string): ServerResponse {
  return goError(ctx, method, '404 page not found', 404);
}

const MIME: Record<string, string> = {
  html: 'text/html',
  htm: 'text/html',
  shtml: 'text/html',
  css: 'text/css',
  xml: 'text/xml',
  gif: 'image/gif',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  js: 'application/javascript',
  txt: 'text/plain',
  png: 'image/png',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  json: 'application/json',
  pdf: 'application/pdf',
  wasm: 'application/wasm',
};

function ext(path: string): string {
  const b = base(path);
  const i = b.lastIndexOf('.');
  return i <= 0 ? '' : b.slice(i + 1).toLowerCase();
}

function decodePath(p: string): string | undefined {
  try {
    return decodeURIComponent(p);
  } catch {
    return undefined;
  }
}

/** Normalizes a URL path; undefined when it climbs above the root. */
function cleanUrlPath(p: string): string | undefined {
  const parts: string[] = [];
  for (const c of p.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(c);
  }
  return '/' + parts.join('/') + (p.endsWith('/') && parts.length > 0 ? '/' : '');
}

function statNode(fs: FileSystem, path: string): FsNode | undefined {
  return fs.stat(path);
}

// ---------------------------------------------------------------------------
// nginx

/** The stock /usr/share/nginx/html/index.html (612 bytes). */
export const NGINX_INDEX_HTML = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
    body {
        width: 35em;
        margin: 0 auto;
        font-family: Tahoma, Verdana, Arial, sans-serif;
    }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`;

/** The stock /usr/share/nginx/html/50x.html. */
export const NGINX_50X_HTML = `<!DOCTYPE html>
<html>
<head>
<title>Error</title>
<style>
    body {
        width: 35em;
        margin: 0 auto;
        font-family: Tahoma, Verdana, Arial, sans-serif;
    }
</style>
</head>
<body>
<h1>An error occurred.</h1>
<p>Sorry, the page you are looking for is currently unavailable.<br/>
Please try again later.</p>
<p>If you are the system administrator of this resource then you should check
the <a href="http://nginx.org/r/error_log">error log</a> for details.</p>
<p><em>Faithfully yours, nginx.</em></p>
</body>
</html>
`;

export const HTTPD_INDEX_HTML = '<html><body><h1>It works!</h1></body></html>\n';

const NGINX_ROOT = '/usr/share/nginx/html';
const HTTPD_ROOT = '/usr/local/apache2/htdocs';

/** nginx's built-in error page (`<body bgcolor="white">` before 1.17.0... kept for 1.14-1.16). */
export function nginxErrorPage(status: number, version: string): string {
  const title = `${status} ${status === 405 ? 'Not Allowed' : (STATUS_TEXT[status] ?? '')}`;
  const [maj, min] = version.split('.').map(Number) as [number, number];
  const bodyTag = maj === 1 && min < 17 ? '<body bgcolor="white">' : '<body>';
  return `<html>\r\n<head><title>${title}</title></head>\r\n${bodyTag}\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx/${version}</center>\r\n</body>\r\n</html>\r\n`;
}

function nginxServer(ctx: ServerContext): ServerHandler {
  const version = nginxVersion(ctx.image);
  const common = (): Record<string, string> => ({ Server: `nginx/${version}`, Date: httpDate(clock(ctx)) });
  const error = (req: ServerRequest, status: number, extra: Record<string, string> = {}): ServerResponse => {
    const body = nginxErrorPage(status, version);
    const headers = { ...common(), 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(body)), ...extra, Connection: 'keep-alive' };
    return { status, headers, body: req.method === 'HEAD' ? '' : body };
  };
  const serveFile = (req: ServerRequest, path: string, node: FsNode & { type: 'file' }): ServerResponse => {
    const mtimeSec = Math.floor(node.mtime / 1000);
    const headers = {
      ...common(),
      'Content-Type': MIME[ext(path)] ?? 'application/octet-stream',
      'Content-Length': String(node.data.length),
      'Last-Modified': httpDate(mtimeSec * 1000),
      Connection: 'keep-alive',
      ETag: `"${mtimeSec.toString(16)}-${node.data.length.toString(16)}"`,
      'Accept-Ranges': 'bytes',
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return error(req, 405);
    return { status: 200, headers, body: req.method === 'HEAD' ? '' : node.data.toString('utf8') };
  };
  return (req) => {
    if (!/^[A-Z]+$/.test(req.method)) return error(req, 400);
    const decoded = decodePath(req.path);
    const clean = decoded === undefined || !decoded.startsWith('/') ? undefined : cleanUrlPath(decoded);
    if (clean === undefined) return error(req, 400);
    const fsPath = NGINX_ROOT + clean;
    if (clean.endsWith('/')) {
      for (const idx of ['index.html', 'index.htm']) {
        const n = statNode(ctx.fs, fsPath + idx);
        if (n?.type === 'file') return serveFile(req, fsPath + idx, n);
      }
      const d = statNode(ctx.fs, fsPath);
      // a directory without an index and autoindex off: "directory index of ... is forbidden"
      return error(req, d?.type === 'dir' ? 403 : 404);
    }
    const n = statNode(ctx.fs, fsPath);
    if (!n) return error(req, 404);
    if (n.type === 'dir') {
      const host = (req.headers['host'] ?? req.headers['Host'] ?? ctx.podIP ?? 'localhost').replace(/:80$/, '');
      return error(req, 301, { Location: `http://${host}${clean}/` });
    }
    if (n.type !== 'file') return error(req, 403);
    return serveFile(req, fsPath, n);
  };
}

// ---------------------------------------------------------------------------
// httpd (Apache 2.4, the image's default httpd.conf: DirectoryIndex index.html, Options Indexes)

function httpdServer(ctx: ServerContext): ServerHandler {
  const version = httpdVersion(ctx.image);
  const [, , patch] = version.split('.').map(Number) as [number, number, number];
  const server = `Apache/${version} (Unix)`;
  const page = (status: number, h1: string, p: string): string =>
    `<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>${status} ${STATUS_TEXT[status] ?? ''}</title>\n</head><body>\n<h1>${h1}</h1>\n<p>${p}</p>\n</body></html>\n`;
  const respond = (req: ServerRequest, status: number, body: string, headers: Record<string, string>): ServerResponse => ({
    status,
    headers: { Date: httpDate(clock(ctx)), Server: server, ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
    body: req.method === 'HEAD' ? '' : body,
  });
  const errorPage = (req: ServerRequest, status: number, url: string, extra: Record<string, string> = {}): ServerResponse => {
    let body: string;
    if (status === 404) body = page(404, 'Not Found', patch < 41 ? `The requested URL ${htmlEscape(url)} was not found on this server.` : 'The requested URL was not found on this server.');
    else if (status === 301) body = page(301, 'Moved Permanently', `The document has moved <a href="${htmlEscape(extra['Location'] ?? '')}">here</a>.`);
    else if (status === 405) body = page(405, 'Method Not Allowed', `The requested method ${req.method} is not allowed for this URL.`);
    else body = page(status, STATUS_TEXT[status] ?? '', "Your browser sent a request that this server could not understand.<br />\n");
    return respond(req, status, body, { ...extra, 'Content-Type': 'text/html; charset=iso-8859-1' });
  };
  return (req) => {
    const decoded = decodePath(req.path);
    const clean = decoded === undefined || !decoded.startsWith('/') ? undefined : cleanUrlPath(decoded);
    if (clean === undefined) return errorPage(req, 400, req.path);
    const fsPath = HTTPD_ROOT + clean;
    const serveFile = (path: string, node: FsNode & { type: 'file' }): ServerResponse => {
      if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST' && req.method !== 'OPTIONS') return errorPage(req, 405, clean);
      const usec = node.mtime * 1000;
      return respond(req, 200, node.data.toString('utf8'), {
        'Last-Modified': httpDate(Math.floor(node.mtime / 1000) * 1000),
        ETag: `"${node.data.length.toString(16)}-${usec.toString(16)}"`,
        'Accept-Ranges': 'bytes',
        'Content-Type': MIME[ext(path)] ?? 'text/plain',
      });
    };
    const n = statNode(ctx.fs, fsPath);
    if (!n) return errorPage(req, 404, clean);
    if (n.type === 'file') return serveFile(fsPath, n);
    if (n.type !== 'dir') return errorPage(req, 403, clean);
    if (!clean.endsWith('/')) {
      const host = (req.headers['host'] ?? req.headers['Host'] ?? ctx.podIP ?? 'localhost').replace(/:80$/, '');
      return errorPage(req, 301, clean, { Location: `http://${host}${clean}/` });
    }
    const idx = statNode(ctx.fs, fsPath + 'index.html');
    if (idx?.type === 'file') return serveFile(fsPath + 'index.html', idx);
    // Options Indexes: mod_autoindex listing (FancyIndexing off)
    let names: string[] = [];
    try {
      names = ctx.fs.readdir(fsPath).filter((x) => !x.startsWith('.'));
    } catch {
      /* unreadable */
    }
    const items = names.map((x) => {
      const child = ctx.fs.stat(fsPath + x);
      const href = encodeURIComponent(x) + (child?.type === 'dir' ? '/' : '');
      return `<li><a href="${href}"> ${htmlEscape(x)}${child?.type === 'dir' ? '/' : ''}</a></li>\n`;
    });
    const parent = clean === '/' ? '' : `<li><a href="${clean.replace(/[^/]+\/$/, '')}"> Parent Directory</a></li>\n`;
    const body = `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<html>\n <head>\n  <title>Index of ${htmlEscape(clean.replace(/\/$/, '') || '/')}</title>\n </head>\n <body>\n<h1>Index of ${htmlEscape(clean.replace(/\/$/, '') || '/')}</h1>\n<ul>${parent}${items.join('')}</ul>\n</body></html>\n`;
    return respond(req, 200, body, { 'Content-Type': 'text/html;charset=UTF-8' });
  };
}

// ---------------------------------------------------------------------------
// agnhost

function formValue(req: ServerRequest, name: string): string {
  const q = req.query.get(name);
  if (q !== null) return q;
  if (req.body && /application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? req.headers['Content-Type'] ?? '')) {
    return new URLSearchParams(req.body).get(name) ?? '';
  }
  return '';
}

function netexecServer(ctx: ServerContext, override: string): ServerHandler {
  const startedAt = ctx.startedAt ?? clock(ctx);
  const log = (msg: string) => ctx.log?.(goLog(clock(ctx), msg));
  const handle = (req: ServerRequest): ServerResponse => {
    const m = req.method;
    // netexec.go's log.Printf of each handler.
    const f = (k: string) => formValue(req, k);
    switch (req.path) {
      case '/clientip':
      case '/hostname':
      case '/hostName':
      case '/healthz':
      case '/shutdown':
      case '/upload':
        log(`GET ${req.path}`);
        break;
      case '/echo':
        log(`GET /echo?msg=${f('msg')}&code=${f('code')}`);
        break;
      case '/exit':
        log(`GET /exit?code=${f('code')}&timeout=${f('timeout')}&wait=${f('wait')}`);
        break;
      case '/dial':
        log(`GET /dial?host=${f('host')}&protocol=${f('protocol')}&port=${f('port')}&request=${f('request')}&tries=${f('tries')}`);
        break;
      case '/shell':
        log(`GET /shell?cmd=${f('shellCommand') || f('cmd')}`);
        break;
      case '/redirect':
        log(`${m} /redirect?msg=${f('location')}&code=${f('code')}`);
        break;
      default:
        log('GET /');
    }
    switch (req.path) {
      case '/clientip':
        return goResponse(ctx, m, 200, `${req.clientIP ?? '127.0.0.1'}:${req.clientPort ?? 40000}`);
      case '/echo': {
        const msg = formValue(req, 'msg');
        const code = formValue(req, 'code');
        if (code !== '') {
          if (!/^[+-]?\d+$/.test(code)) return goResponse(ctx, m, 200, `argument 'code' must be an integer or empty, got ${goQuote(code)}\n`);
          return goResponse(ctx, m, Number(code), msg);
        }
        return goResponse(ctx, m, 200, msg);
      }
      case '/exit': {
        const waitS = formValue(req, 'wait');
        const timeoutS = formValue(req, 'timeout');
        const codeS = formValue(req, 'code');
        const timeout = parseGoDuration(timeoutS);
        if (timeout === undefined) return goResponse(ctx, m, 200, `argument 'timeout' must be a valid golang duration or empty, got ${goQuote(timeoutS)}\n`);
        const wait = parseGoDuration(waitS);
        if (wait === undefined) return goResponse(ctx, m, 200, `argument 'wait' must be a valid golang duration or empty, got ${goQuote(waitS)}\n`);
        if (codeS !== '' && !/^[+-]?\d+$/.test(codeS)) return goResponse(ctx, m, 200, `argument 'code' must be an integer [0-127] or empty, got ${goQuote(codeS)}\n`);
        const code = codeS === '' ? 0 : Number(codeS);
        // timeout 0: os.Exit before answering; otherwise a graceful shutdown answers first (empty 200)
        const r = goResponse(ctx, m, 200, '');
        return { ...r, exit: { code, afterMs: Math.max(0, wait), reset: timeout === 0 } };
      }
      case '/shutdown':
        return { ...goResponse(ctx, m, 200, ''), exit: { code: 0, afterMs: 0, reset: true } };
      case '/healthz':
        return goResponse(ctx, m, 200, '');
      case '/hostname':
      case '/hostName':
        return goResponse(ctx, m, 200, ctx.hostname);
      case '/redirect': {
        const location = formValue(req, 'location');
        const codeS = formValue(req, 'code');
        let code = 302;
        if (codeS !== '') {
          if (!/^[+-]?\d+$/.test(codeS)) return goResponse(ctx, m, 200, `argument 'code' must be an integer or empty, got ${goQuote(codeS)}\n`);
          code = Number(codeS);
        }
        return goRedirect(ctx, req, location, code);
      }
      case '/shell': {
        const cmd = formValue(req, 'shellCommand') || formValue(req, 'cmd');
        const out: Record<string, string> = {};
        if (!ctx.runShell) out['error'] = 'fork/exec /bin/sh: no such file or directory';
        else {
          const r = ctx.runShell(cmd);
          if (r.output.length > 0) out['output'] = r.output;
          if (r.exitCode !== 0) out['error'] = r.exitCode > 128 ? `signal: ${r.exitCode === 137 ? 'killed' : 'terminated'}` : `exit status ${r.exitCode}`;
        }
        return goResponse(ctx, m, 200, goJSONMap(out));
      }
      case '/dial':
        return dial(ctx, req);
      case '/upload':
        return goResponse(ctx, m, 200, goJSONMap({ error: 'Unable to upload file.' }));
      default:
        return goResponse(ctx, m, 200, `NOW: ${goTimeNow(clock(ctx), startedAt)}`);
    }
  };
  if (override === '') return handle;
  return (req) => {
    const u = new URL(override, 'http://localhost');
    return handle({ ...req, method: 'GET', path: u.pathname, query: u.searchParams, body: '' });
  };
}

function dial(ctx: ServerContext, req: ServerRequest): ServerResponse {
  const m = req.method;
  const host = req.query.get('host') ?? '';
  const port = req.query.get('port') ?? '';
  const request = req.query.get('request') ?? '';
  let protocol = (req.query.get('protocol') ?? '').toLowerCase();
  const tryParam = req.query.get('tries') ?? '';
  let tries = 1;
  if (tryParam.length > 0) {
    if (!/^[+-]?\d+$/.test(tryParam)) return goError(ctx, m, `tries parameter is invalid. strconv.Atoi: parsing ${goQuote(tryParam)}: invalid syntax`, 400);
    tries = Number(tryParam);
  }
  if (request.length === 0) return goError(ctx, m, 'request parameter not specified. <nil>', 400);
  if (protocol === '') protocol = 'http';
  if (protocol !== 'http' && protocol !== 'udp' && protocol !== 'sctp') return goError(ctx, m, `unsupported protocol. ${req.query.get('protocol') ?? ''}`, 400);
  const portNum = port === '' ? 0 : Number(port);
  if (!/^\d*$/.test(port)) return goError(ctx, m, `host and/or port param are invalid. address ${protocol === 'http' ? 'tcp' : protocol}/${port}: unknown port`, 400);
  if (portNum > 65535) return goError(ctx, m, `host and/or port param are invalid. address ${port}: invalid port`, 400);
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const errors: string[] = [];
  const responses: string[] = [];
  let response = '';
  for (let i = 0; i < tries; i++) {
    let err: string | undefined;
    response = '';
    if (protocol === 'http') {
      const url = `http://${hostPort}/${request}`;
      const r: FetchResult = ctx.fetch ? ctx.fetch(host, portNum, '/' + request) : { error: 'refused' };
      if ('error' in r) {
        if (r.error === 'refused') err = `Get ${goQuote(url)}: dial tcp ${hostPort}: connect: connection refused`;
        else if (r.error === 'timeout') err = `Get ${goQuote(url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`;
        else if (r.error === 'unreachable') err = `Get ${goQuote(url)}: dial tcp ${hostPort}: connect: no route to host`;
        else if (r.error === 'dns') err = `Get ${goQuote(url)}: dial tcp: lookup ${host}: no such host`;
        else err = `Get ${goQuote(url)}: ${r.error}`;
      } else response = r.body;
    } else if (protocol === 'udp') {
      const r = ctx.udp ? ctx.udp(host, portNum, request) : { error: 'timeout' };
      if ('error' in r) {
        const local = `${ctx.podIP ?? '127.0.0.1'}:40000`;
        const why = r.error === 'refused' ? 'read: connection refused' : r.error === 'timeout' ? 'i/o timeout' : r.error;
        err = `reading from udp connection failed. err:'read udp ${local}->${hostPort}: ${why}'`;
      } else response = r.body;
    } else {
      err = `sctp dial failed. err:dial sctp ${hostPort}: connect: protocol not supported`;
    }
    if (err !== undefined) errors.push(err);
    else responses.push(response);
  }
  const output: Record<string, string[]> = {};
  if (response.length > 0) output['responses'] = responses;
  if (errors.length > 0) output['errors'] = errors;
  return goResponse(ctx, m, 200, goJSONMap(output));
}

function livenessServer(ctx: ServerContext): ServerHandler {
  const startedAt = ctx.startedAt ?? clock(ctx);
  return (req) => {
    const m = req.method;
    const since = clock(ctx) - startedAt;
    switch (req.path) {
      case '/started':
        return goResponse(ctx, m, 200, goDuration(since));
      case '/healthz':
        if (since / 1000 > 10) return goResponse(ctx, m, 500, `error: ${since / 1000}`);
        return goResponse(ctx, m, 200, 'ok');
      case '/redirect': {
        const raw = req.query.get('loc') ?? '';
        let loc: string;
        try {
          loc = decodeURIComponent(raw.replace(/\+/g, ' '));
        } catch {
          return goError(ctx, m, `invalid redirect: ${goQuote(raw)}`, 400);
        }
        return goRedirect(ctx, req, loc, 302);
      }
      default:
        return goNotFound(ctx, m);
    }
  };
}

/** http.FileServer(http.Dir("/")) behind the CORS headers of test-webserver. */
function testWebserver(ctx: ServerContext): ServerHandler {
  const cors = {
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Allow-Headers': 'DNT,X-Mx-ReqToken,Keep-Alive,User-Agent,X-Requested-With,Cache-Control,Content-Type',
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Origin': '*',
    'Cache-Control': 'private',
  };
  return (req) => {
    const m = req.method;
    const clean = cleanUrlPath(req.path) ?? '/';
    if (req.path.endsWith('/index.html')) return goResponse(ctx, m, 301, '', { ...cors, Location: './' });
    const n = ctx.fs.stat(clean);
    if (!n) return goError(ctx, m, '404 page not found', 404);
    if (n.type === 'dir') {
      if (!req.path.endsWith('/')) return goResponse(ctx, m, 301, '', { ...cors, Location: base(clean) + '/' });
      const idx = ctx.fs.stat(clean.replace(/\/?$/, '/') + 'index.html');
      if (idx?.type === 'file') return fileResp(idx, clean + 'index.html');
      const names = ctx.fs.readdir(clean);
      const body = '<pre>\n' + names.map((x) => {
        const d = ctx.fs.stat(clean.replace(/\/?$/, '/') + x)?.type === 'dir' ? '/' : '';
        return `<a href="${encodeURI(x + d)}">${htmlEscape(x + d)}</a>\n`;
      }).join('') + '</pre>\n';
      return goResponse(ctx, m, 200, body, { ...cors, 'Content-Type': 'text/html; charset=utf-8', 'Last-Modified': httpDate(Math.floor(n.mtime / 1000) * 1000) });
    }
    if (n.type !== 'file') return goResponse(ctx, m, 200, '', cors);
    return fileResp(n, clean);

    function fileResp(f: FsNode & { type: 'file' }, path: string): ServerResponse {
      const text = f.data.toString('utf8');
      const e = ext(path);
      const type = MIME[e] ? (MIME[e]!.startsWith('text/') ? `${MIME[e]}; charset=utf-8` : MIME[e]!) : sniff(text);
      return goResponse(ctx, m, 200, text, { ...cors, 'Accept-Ranges': 'bytes', 'Content-Type': type, 'Last-Modified': httpDate(Math.floor(f.mtime / 1000) * 1000) });
    }
  };
}

/**
 * The HTTP server the program of `argv` runs on `ctx.port` (default: its first
 * served port), or undefined when it serves nothing there / is unknown.
 */
export function httpServer(argv: string[], ctx: ServerContext): ServerHandler | undefined {
  const p = identify(argv);
  if (!p) return undefined;
  const port = ctx.port;
  const on = (want: number): boolean => port === undefined || port === want;
  switch (p.kind) {
    case 'nginx':
      return on(80) ? nginxServer(ctx) : undefined;
    case 'httpd':
      return on(80) ? httpdServer(ctx) : undefined;
    case 'netexec':
      return on(p.port) ? netexecServer(ctx, p.override) : undefined;
    case 'serve-hostname':
      if (!on(p.port)) return undefined;
      return (req) => goResponse(ctx, req.method, 200, ctx.hostname, p.close ? { Connection: 'close' } : {});
    case 'liveness':
      return on(8080) ? livenessServer(ctx) : undefined;
    case 'test-webserver':
      return on(p.port) ? testWebserver(ctx) : undefined;
    case 'nettest':
      return on(p.port) ? nettestServer(ctx) : undefined;
    case 'porter': {
      const ports = porterPorts(ctx.env);
      const entry = port === undefined ? ports[0] : ports.find(([n]) => n === port);
      if (!entry) return undefined;
      const value = entry[1];
      return (req) => {
        if (p.json) {
          return goResponse(ctx, req.method, 200, `{"Method":${goJSONString(req.method)},"Body":${goJSONString(value)}}`, { 'Content-Type': 'application/json' });
        }
        return goResponse(ctx, req.method, 200, value);
      };
    }
  }
}

/**
 * agnhost nettest's HTTP server: `/write` (POST `{"Source": "x"}`) counts
 * contacts, `/read` returns the state as Go's json.MarshalIndent, `/status`
 * says `running` (simulated pods never finish contacting their peers through
 * the API), `/quit` ends the program.
 */
function nettestServer(ctx: ServerContext): ServerHandler {
  const received = new Map<string, number>();
  const errors: string[] = [];
  const map = (m: Map<string, number>) =>
    m.size === 0 ? 'null' : `{\n${[...m.keys()].sort().map((k) => `\t\t${goJSONString(k)}: ${m.get(k)}`).join(',\n')}\n\t}`;
  return (req) => {
    switch (req.path) {
      case '/write': {
        let source = '';
        try {
          const v = JSON.parse(req.body ?? '') as { Source?: unknown };
          source = typeof v.Source === 'string' ? v.Source : '';
        } catch {
          errors.push(req.body ? 'invalid character in JSON' : 'EOF');
        }
        if (source === '') errors.push(`${ctx.hostname}: Got request with no source`);
        else received.set(source, (received.get(source) ?? 0) + 1);
        return goResponse(ctx, req.method, 200, `{"Hostname":${goJSONString(ctx.hostname)}}\n`);
      }
      case '/read': {
        const errs = errors.length === 0 ? 'null' : `[\n${errors.map((e) => `\t\t${goJSONString(e)}`).join(',\n')}\n\t]`;
        const body = `{\n\t"Hostname": ${goJSONString(ctx.hostname)},\n\t"Sent": null,\n\t"Received": ${map(received)},\n\t"Errors": ${errs},\n\t"Log": null,\n\t"StillContactingPeers": true\n}`;
        return goResponse(ctx, req.method, 200, body);
      }
      case '/status':
        return goResponse(ctx, req.method, 200, 'running');
      case '/quit':
        return { ...goResponse(ctx, req.method, 200, ''), exit: { code: 0, afterMs: 0, reset: true } };
      default:
        return goError(ctx, req.method, '404 page not found', 404);
    }
  };
}

// ---------------------------------------------------------------------------
// image files

const ELF = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]);

/** Puts a binary (an ELF stub) at `path`. */
function bin(fs: FileSystem, path: string): void {
  fs.mkdirp(path.slice(0, path.lastIndexOf('/')) || '/');
  fs.writeFile(path, ELF, { mode: 0o755 });
}

/** The files of each known image (by repository basename, as parseImage names it). */
const IMAGE_FILES: Record<string, (fs: FileSystem) => void> = {
  nginx: (fs) => {
    fs.mkdirp(NGINX_ROOT);
    fs.writeFile(`${NGINX_ROOT}/index.html`, NGINX_INDEX_HTML);
    fs.writeFile(`${NGINX_ROOT}/50x.html`, NGINX_50X_HTML);
    fs.mkdirp('/etc/nginx/conf.d');
    fs.mkdirp('/var/cache/nginx');
    fs.mkdirp('/var/log/nginx');
    bin(fs, '/usr/sbin/nginx');
  },
  httpd: (fs) => {
    fs.mkdirp(HTTPD_ROOT);
    fs.writeFile(`${HTTPD_ROOT}/index.html`, HTTPD_INDEX_HTML);
    fs.mkdirp('/usr/local/apache2/logs');
    fs.mkdirp('/usr/local/apache2/conf');
    bin(fs, '/usr/local/apache2/bin/httpd');
    // really a `#!/bin/sh ... exec httpd -DFOREGROUND` script; a stub so that SIGTERM reaches httpd as PID 1
    bin(fs, '/usr/local/bin/httpd-foreground');
  },
  agnhost: (fs) => bin(fs, '/agnhost'),
  pause: (fs) => bin(fs, '/pause'),
  redis: (fs) => {
    bin(fs, '/usr/local/bin/redis-server');
    fs.mkdirp('/data');
  },
  busybox: () => {},
  alpine: () => {},
  perl: () => {},
};

/**
 * Creates the files a known image has in its root file system: nginx's html
 * directory (index.html, 50x.html), httpd's htdocs/index.html, and the
 * program binaries (ELF stubs, so that `ls`
 * finds them and the shell hands them to the programs handler). Returns false
 * for an unknown image.
 */
export function seedImageFiles(image: string, fs: FileSystem): boolean {
  const seed = IMAGE_FILES[parseImage(image).name];
  seed?.(fs);
  return seed !== undefined;
}

/**
 * What seedImageFiles puts in an image's file system, as a key: images with
 * the same key get the same files (any tag of nginx, every unknown image), so
 * their containers can share one file system template (PodVolumes.containerFs's seedKey).
 */
export function imageFilesKey(image: string): string {
  const name = parseImage(image).name;
  return Object.hasOwn(IMAGE_FILES, name) ? name : '';
}
