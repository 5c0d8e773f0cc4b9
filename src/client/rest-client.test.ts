import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { FakeClock, realClock } from '../util/clock/clock.js';
import { isAlreadyExists, isInternalError, isNotFound, isTooManyRequests, NetworkError, StatusError } from './errors.js';
import { inClusterConfig } from './in-cluster.js';
import { buildUrl, newRestClient } from './rest-client.js';
import { newRestConfig, viaUnixSocket } from './rest-config.js';
import { parseWarnings } from './response-errors.js';
import { startFakeApiServer, type FakeApiServer } from './testing/fake-api-server.js';
import { clientTestdata, clientTestdataDir } from './testing/testdata.js';
import { waitFor } from './testing/wait-for.js';

let server: FakeApiServer;
before(async () => {
  server = await startFakeApiServer();
  server.handle('GET', '/echo', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
});
after(() => server.close());

const last = () => server.requests[server.requests.length - 1]!;

describe('buildUrl', () => {
  it('joins host, path and query, repeating array values and dropping empty ones', () => {
    assert.equal(buildUrl('https://h:1/prefix/', '/api/v1/pods', { a: 'x y', b: undefined, c: '', d: 3, e: ['1', '2'], f: true }), 'https://h:1/prefix/api/v1/pods?a=x+y&d=3&e=1&e=2&f=true');
  });
});

describe('RestClient auth and headers', () => {
  it('sends the bearer token, user agent and JSON accept header', async () => {
    const c = newRestClient(newRestConfig({ host: server.url, auth: { bearerToken: 'abc' } }));
    assert.deepEqual(await c.request('GET', '/echo'), { ok: true });
    assert.equal(last().headers.authorization, 'Bearer abc');
    assert.equal(last().headers['user-agent'], 'kcm/v0.1.0');
    assert.equal(last().headers.accept, 'application/json');
    await c.close();
  });

  it('sends basic auth when there is no token', async () => {
    const c = newRestClient(newRestConfig({ host: server.url, auth: { username: 'u', password: 'p' } }));
    await c.request('GET', '/echo');
    assert.equal(last().headers.authorization, `Basic ${Buffer.from('u:p').toString('base64')}`);
    await c.close();
  });

  it('re-reads a rotated in-cluster token after a minute on the clock', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kcm-sa-'));
    try {
      await writeFile(path.join(dir, 'token'), 'first\n');
      const cfg = await inClusterConfig({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1' }, { serviceAccountDir: dir });
      cfg.host = server.url;
      cfg.tls = {};
      const clock = new FakeClock();
      const c = newRestClient(cfg, { clock });
      await c.request('GET', '/echo');
      assert.equal(last().headers.authorization, 'Bearer first');
      await writeFile(path.join(dir, 'token'), 'second\n');
      await clock.advance(59_000);
      await c.request('GET', '/echo');
      assert.equal(last().headers.authorization, 'Bearer first');
      await clock.advance(2_000);
      await c.request('GET', '/echo');
      assert.equal(last().headers.authorization, 'Bearer second');
      await c.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('passes Warning header texts to the handler', async () => {
    server.handle('GET', '/warn', (_req, res) => {
      res.setHeader('warning', ['299 - "first, with comma"', '299 - "second" "Mon, 01 Jan 2024 00:00:00 GMT"']);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const seen: string[] = [];
    const c = newRestClient(newRestConfig({ host: server.url }), { warningHandler: (m) => seen.push(m) });
    await c.request('GET', '/warn');
    assert.deepEqual(seen, ['first, with comma', 'second']);
    assert.deepEqual(parseWarnings('299 - "a \\"quoted\\"", 199 agent "ignored", 299 - "b"'), ['a "quoted"', 'b']);
    await c.close();
  });
});

describe('RestClient TLS', () => {
  let tls: FakeApiServer;
  before(async () => {
    tls = await startFakeApiServer({ tls: { key: clientTestdata('server.key'), cert: clientTestdata('server.crt'), ca: clientTestdata('ca.crt'), requestCert: true } });
  });
  after(() => tls.close());

  it('verifies the server with the CA file and presents the client certificate', async () => {
    const d = clientTestdataDir();
    const c = newRestClient(
      newRestConfig({ host: tls.url, tls: { caFile: path.join(d, 'ca.crt'), certFile: path.join(d, 'client.crt'), keyFile: path.join(d, 'client.key') } }),
    );
    await c.request('GET', '/version');
    assert.equal(tls.requests.at(-1)!.clientCN, 'kcm-client');
    await c.close();
  });

  it('accepts inline CA data and verifies the name given as serverName', async () => {
    const c = newRestClient(newRestConfig({ host: tls.url.replace('127.0.0.1', 'localhost'), tls: { caData: clientTestdata('ca.crt'), serverName: 'localhost' } }));
    const v = await c.request<{ gitVersion: string }>('GET', '/version');
    assert.equal(v.gitVersion, 'v1.30.0-fake');
    assert.equal(tls.requests.at(-1)!.clientCN, undefined);
    await c.close();
  });

  it('names a CA file it cannot read', async () => {
    const c = newRestClient(newRestConfig({ host: tls.url, tls: { caFile: '/nonexistent/ca.crt' } }));
    await assert.rejects(c.request('GET', '/version'), /cannot read certificate authority "\/nonexistent\/ca.crt"/);
    await c.close();
  });

  it('rejects an unknown server certificate unless verification is skipped', async () => {
    const c = newRestClient(newRestConfig({ host: tls.url }));
    await assert.rejects(c.request('GET', '/version'), (err: unknown) => err instanceof NetworkError && err.cause !== undefined);
    await c.close();
    const insecure = newRestClient(newRestConfig({ host: tls.url, tls: { insecureSkipTLSVerify: true } }));
    await insecure.request('GET', '/version');
    await insecure.close();
  });
});

describe('RestClient over a Unix domain socket', () => {
  it('connects to socketPath instead of the host, with plain HTTP for an http:// host', async () => {
    const d = await mkdtemp(path.join(os.tmpdir(), 'kcm-sock-'));
    const socketPath = path.join(d, 'api.sock');
    const seen: string[] = [];
    const srv = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"over":"socket"}');
    });
    await new Promise<void>((r) => srv.listen(socketPath, r));
    const base = newRestConfig({ host: 'https://127.0.0.1:6443', auth: { bearerToken: 't' } });
    assert.equal(viaUnixSocket(base, undefined), base);
    const c = newRestClient(viaUnixSocket(base, socketPath));
    try {
      assert.deepEqual(await c.request('GET', '/api'), { over: 'socket' });
      assert.deepEqual(seen, ['GET /api Bearer t']);
    } finally {
      await c.close();
      await new Promise((r) => srv.close(r));
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('RestClient errors', () => {
  it('throws the Status the server sent', async () => {
    const c = newRestClient(newRestConfig({ host: server.url }));
    await assert.rejects(c.request('GET', '/api/v1/namespaces/x/pods/nope'), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.ok(isNotFound(err));
      assert.equal(err.message, 'pods "nope" not found');
      assert.equal(err.status.details?.name, 'nope');
      return true;
    });
    await c.close();
  });

  it('synthesises a Status from a non-Status body as client-go does', async () => {
    server.handle('*', '/plain', (req, res) => {
      const code = Number(req.query.get('code'));
      res.writeHead(code, { 'content-type': req.query.get('ct') ?? 'text/plain' });
      res.end('boom happened');
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    const err = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        return e as StatusError;
      }
      throw new Error('no error');
    };
    const e500 = await err(c.request('GET', '/plain', { query: { code: 500 } }));
    assert.ok(isInternalError(e500));
    assert.equal(e500.message, 'an error on the server ("boom happened") has prevented the request from succeeding');
    assert.equal(e500.status.details?.causes?.[0]?.reason, 'UnexpectedServerResponse');
    const e409 = await err(c.request('POST', '/plain', { query: { code: 409 }, body: {}, target: { resource: 'pods', name: 'a' } }));
    assert.ok(isAlreadyExists(e409));
    assert.equal(e409.message, 'the server reported a conflict (post pods a)');
    const e404 = await err(c.request('GET', '/plain', { query: { code: 404, ct: 'application/octet-stream' } }));
    assert.ok(isNotFound(e404));
    assert.equal(e404.status.details?.causes?.[0]?.message, 'unknown');
    const e418 = await err(c.request('GET', '/plain', { query: { code: 418 } }));
    assert.equal(e418.reason, 'Unknown');
    assert.equal(e418.code, 418);
    await c.close();
  });

  it('turns a failure Status inside a 2xx response into an error', async () => {
    server.handle('GET', '/odd', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', message: 'bad' }));
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    await assert.rejects(c.request('GET', '/odd'), (e: unknown) => e instanceof StatusError && e.reason === 'Invalid' && e.code === 200);
    await c.close();
  });

  it("with responseType 'none' resolves without decoding a success, and still rejects with the error Status of a failure", async () => {
    server.handle('PATCH', '/quiet', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"Pod", not json at all');
    });
    server.handle('PATCH', '/gone', (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', message: 'pods "p" not found', code: 404 }));
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    assert.equal(await c.request('PATCH', '/quiet', { body: {}, responseType: 'none' }), undefined);
    await assert.rejects(c.request('PATCH', '/quiet', { body: {} }), /cannot decode response as JSON/);
    await assert.rejects(c.request('PATCH', '/gone', { body: {}, responseType: 'none' }), (e: unknown) => isNotFound(e) && (e as StatusError).message === 'pods "p" not found');
    await c.close();
  });

  it('reports a refused connection as a NetworkError keeping the cause', async () => {
    const dead = await startFakeApiServer();
    const url = dead.url;
    await dead.close();
    const c = newRestClient(newRestConfig({ host: url }));
    await assert.rejects(c.request('GET', '/version'), (e: unknown) => e instanceof NetworkError && /ECONNREFUSED/.test(e.message) && e.cause !== undefined);
    await c.close();
  });

  it('aborts a request that outlives its timeout on the clock', async () => {
    server.handle('GET', '/hang', () => undefined);
    const clock = new FakeClock();
    const c = newRestClient(newRestConfig({ host: server.url, timeoutMs: 5000 }), { clock });
    const before = server.requests.length;
    const p = assert.rejects(c.request('GET', '/hang'), (e: unknown) => e instanceof NetworkError && /timed out after 5000ms/.test(e.message));
    await waitFor(() => server.requests.length > before && server.requests.at(-1)!.path === '/hang', 5000, 'the request');
    await clock.advance(5000);
    await p;
    await c.close();
  });
});

describe('RestClient bodies and aborts', () => {
  it('assembles a body sent in many chunks, with characters split between them', async () => {
    const text = JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => ({ name: `pod-${i}`, note: 'naïve café ☃ 𝄞' })) });
    const bytes = Buffer.from(text);
    server.handle('GET', '/chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // 7-byte pieces split the multi-byte characters between chunks.
      for (let i = 0; i < bytes.length; i += 7) res.write(bytes.subarray(i, i + 7));
      res.end();
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    assert.deepEqual(await c.request('GET', '/chunked'), JSON.parse(text));
    assert.equal(await c.request('GET', '/chunked', { responseType: 'text' }), text);
    await c.close();
  });

  it("rejects with the caller's reason when its signal aborts, before sending and while waiting for the answer", async () => {
    server.handle('GET', '/hang2', () => undefined);
    const c = newRestClient(newRestConfig({ host: server.url }));
    const early = new AbortController();
    early.abort(new Error('not wanted'));
    await assert.rejects(c.request('GET', '/hang2', { signal: early.signal }), /not wanted/);
    const ac = new AbortController();
    const before = server.requests.length;
    const p = assert.rejects(c.request('GET', '/hang2', { signal: ac.signal }), /gave up/);
    await waitFor(() => server.requests.length > before, 5000, 'the request');
    ac.abort(new Error('gave up'));
    await p;
    // The client still works afterwards.
    assert.deepEqual(await c.request('GET', '/echo'), { ok: true });
    await c.close();
  });

  it('returns undefined for an empty body', async () => {
    server.handle('DELETE', '/empty', (_req, res) => {
      res.writeHead(200);
      res.end();
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    assert.equal(await c.request('DELETE', '/empty'), undefined);
    await c.close();
  });
});

describe('RestClient retries', () => {
  it('waits Retry-After seconds on the clock after a 429 and retries', async () => {
    let n = 0;
    server.handle('GET', '/busy', (_req, res) => {
      n++;
      if (n <= 2) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"done":true}');
    });
    const clock = new FakeClock();
    const c = newRestClient(newRestConfig({ host: server.url }), { clock });
    const p = c.request('GET', '/busy');
    await waitFor(() => n === 1 && clock.pendingTimers() === 1, 5000, 'first attempt');
    assert.equal(clock.nextTimerAt()! - clock.now(), 2000);
    await clock.advance(1999);
    assert.equal(n, 1);
    await clock.advance(1);
    await waitFor(() => n === 2 && clock.pendingTimers() === 1, 5000, 'second attempt');
    await clock.advance(2000);
    assert.deepEqual(await p, { done: true });
    assert.equal(n, 3);
    await c.close();
  });

  it('gives up after 10 retries and returns the last error', async () => {
    let n = 0;
    server.handle('POST', '/always-busy', (_req, res) => {
      n++;
      res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain' });
      res.end('later');
    });
    const clock = new FakeClock();
    const c = newRestClient(newRestConfig({ host: server.url, qps: -1 }), { clock });
    // Checked from the start: the last answer may come in while the clock advances.
    const p = assert.rejects(c.request('POST', '/always-busy', { body: { a: 1 } }), (e: unknown) => e instanceof StatusError && e.reason === 'ServiceUnavailable' && e.status.details?.retryAfterSeconds === 1);
    for (let i = 1; i <= 10; i++) {
      await waitFor(() => n === i && clock.pendingTimers() === 1, 5000, `attempt ${i}`);
      await clock.advance(1000);
    }
    await p;
    assert.equal(n, 11);
    assert.ok(server.requests.filter((r) => r.path === '/always-busy').every((r) => r.body === '{"a":1}'));
    await c.close();
  });

  it('does not retry a 500 without Retry-After', async () => {
    let n = 0;
    server.handle('GET', '/fail-once', (_req, res) => {
      n++;
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('x');
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    await assert.rejects(c.request('GET', '/fail-once'), isInternalError);
    assert.equal(n, 1);
    await c.close();
  });

  it('checks 429 errors without a Retry-After as TooManyRequests', async () => {
    server.handle('GET', '/429', (_req, res) => {
      res.writeHead(429, { 'content-type': 'text/plain' });
      res.end('slow down');
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    await assert.rejects(c.request('GET', '/429'), isTooManyRequests);
    await c.close();
  });
});

describe('RestClient rate limiting and metrics', () => {
  it('spaces requests beyond the burst 1/qps apart on the clock', async () => {
    const clock = new FakeClock();
    const c = newRestClient(newRestConfig({ host: server.url, qps: 2, burst: 2 }), { clock });
    const done: number[] = [];
    const ps = [0, 1, 2, 3].map((i) => c.request('GET', '/echo').then(() => done.push(i)));
    await waitFor(() => done.length === 2, 5000, 'the burst');
    await clock.advance(499);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(done.length, 2);
    await clock.advance(1);
    await waitFor(() => done.length === 3, 5000, 'the third request');
    await clock.advance(500);
    await Promise.all(ps);
    assert.deepEqual(done, [0, 1, 2, 3]);
    await c.close();
  });

  it('counts requests and records latencies under client-go names', async () => {
    const registry = new Registry();
    const c = newRestClient(newRestConfig({ host: server.url }), { metricsRegistry: registry, clock: realClock });
    await c.request('GET', '/echo');
    await assert.rejects(c.request('GET', '/api/v1/namespaces/x/pods/none'));
    const text = await registry.metrics();
    const host = new URL(server.url).host;
    assert.match(text, new RegExp(`rest_client_requests_total\\{code="200",method="GET",host="${host}"\\} 1`));
    assert.match(text, new RegExp(`rest_client_requests_total\\{code="404",method="GET",host="${host}"\\} 1`));
    assert.match(text, new RegExp(`rest_client_request_duration_seconds_count\\{verb="GET",host="${host}"\\} 2`));
    assert.match(text, new RegExp(`rest_client_rate_limiter_duration_seconds_bucket\\{le="0.005",verb="GET",host="${host}"\\} 2`));
    // A second client on the same registry shares the metrics instead of failing to register.
    const c2 = newRestClient(newRestConfig({ host: server.url }), { metricsRegistry: registry });
    await c2.request('GET', '/echo');
    assert.match(await registry.metrics(), /rest_client_requests_total\{code="200",method="GET",host="[^"]+"\} 2/);
    await c.close();
    await c2.close();
  });

  it('returns text bodies for non-resource paths when asked', async () => {
    server.handle('GET', '/healthz', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    const c = newRestClient(newRestConfig({ host: server.url }));
    assert.equal(await c.request('GET', '/healthz', { responseType: 'text' }), 'ok');
    await c.close();
  });
});

describe('RestClient connections', () => {
  it('keeps its connections across DELETEs with a body and error answers (no connection per request)', async () => {
    const { createServer } = await import('node:http');
    let connections = 0;
    const srv = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const missing = req.url?.includes('missing');
        res.writeHead(missing ? 404 : 200, { 'content-type': 'application/json' });
        res.end(missing ? '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}' : '{"kind":"Status","apiVersion":"v1","status":"Success"}');
      });
    });
    srv.on('connection', () => connections++);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const c = newRestClient(newRestConfig({ host: `http://127.0.0.1:${port}`, qps: 1000, burst: 1000 }));
    try {
      for (let i = 0; i < 10; i++) await c.request('DELETE', `/api/v1/namespaces/ns/configmaps/c${i}`, { body: { propagationPolicy: 'Background' } });
      for (let i = 0; i < 10; i++) await c.request('GET', '/api/v1/namespaces/ns/configmaps/missing').catch(() => undefined);
      // The pool may open a second connection while the first is finishing; never one per request.
      assert.ok(connections <= 2, `${connections} connections for 20 sequential requests`);
    } finally {
      await c.close();
      await new Promise((r) => srv.close(r));
    }
  });

  it('holds at most ownConnections requests in flight when given a number; a shared client sends them all', async () => {
    const { createServer } = await import('node:http');
    const held: (() => void)[] = [];
    const srv = createServer((req, res) => {
      req.resume();
      held.push(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    /** Sends 10 requests at once; answers them in rounds; returns how many the server held in each round. */
    const rounds = async (ownConnections?: number) => {
      const c = newRestClient(newRestConfig({ host: `http://127.0.0.1:${port}`, qps: 0, ...(ownConnections !== undefined ? { ownConnections } : {}) }));
      let answered = 0;
      const all = Promise.all(Array.from({ length: 10 }, (_, i) => c.request('GET', `/api/v1/namespaces/ns/configmaps/c${i}`).then(() => answered++)));
      const seen: number[] = [];
      try {
        for (let guard = 0; answered < 10 && guard < 50; guard++) {
          // Every request the pool lets through reaches the server within these turns (bounded: no timers).
          await turns(200);
          if (held.length === 0) continue;
          seen.push(held.length);
          held.splice(0).forEach((f) => f());
        }
        await all;
      } finally {
        await c.close();
      }
      return seen;
    };
    try {
      const limited = await rounds(2);
      assert.ok(limited.every((n) => n <= 2) && limited.reduce((a, b) => a + b, 0) === 10, limited.join(' '));
      assert.deepEqual(await rounds(), [10]);
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });
});
