import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:tls';
import { connect as netConnect } from 'node:net';
import { Agent, request } from 'undici';
import { parse } from 'yaml';
import { newCA, newSignedCert } from '../../util/cert/cert.js';
import { setLogOutput, setVerbosity } from '../../util/log/logger.js';
import type { UserInfo } from '../request-info.js';
import { startApiServer, type ApiHandler, type ApiHandlerDeps, type RunningApiServer } from './server.js';

interface Recording {
  handler: ApiHandler;
  users: UserInfo[];
  deps?: ApiHandlerDeps;
  closed: boolean;
}

/** A handler that answers 200 with the caller, and holds `/hang` open until close(). */
function recordingHandler(): Recording & { factory: (d: ApiHandlerDeps) => ApiHandler } {
  const rec: Recording = { users: [], closed: false, handler: undefined as unknown as ApiHandler };
  const hanging = new Set<ServerResponse>();
  rec.handler = {
    handle(req, res, user) {
      rec.users.push(user);
      if (req.url === '/slow') {
        // Never answers (the request timeout does).
        hanging.add(res);
        return;
      }
      if (req.url === '/hang' || req.url?.includes('watch=1')) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"type":"ADDED"}\n');
        hanging.add(res);
        return;
      }
      const body = JSON.stringify({ user: user.username, groups: user.groups });
      const answer = () => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(body);
      };
      // Like the API handlers, a request with a body is answered once the body is read.
      if (req.method === 'POST') {
        req.on('error', () => undefined);
        req.resume().on('end', answer);
      } else answer();
    },
    async close() {
      rec.closed = true;
      for (const r of hanging) r.end();
    },
  };
  return Object.assign(rec, { factory: (d: ApiHandlerDeps) => ((rec.deps = d), rec.handler) });
}

/** recordingHandler, also noting for each request whether its socket is a TLS socket. */
function recordingTlsSockets(): { rec: ReturnType<typeof recordingHandler>; sockets: boolean[] } {
  const sockets: boolean[] = [];
  const rec = recordingHandler();
  const handle = rec.handler.handle.bind(rec.handler);
  rec.handler.handle = (req, res, user) => {
    sockets.push('getPeerCertificate' in req.socket);
    return handle(req, res, user);
  };
  return { rec, sockets };
}

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kcm-serve-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Writes `raw` on a fresh TLS connection and resolves with everything the server sent until it closed (bounded). */
function rawExchange(s: RunningApiServer, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port: s.port, ca: s.caPem, servername: 'localhost' }, () => sock.write(raw));
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (got += d));
    sock.on('error', (e) => (got ? resolve(got) : reject(e)));
    sock.on('close', () => resolve(got));
    sock.setTimeout(20_000, () => sock.destroy(new Error(`no reply; got ${JSON.stringify(got.slice(0, 200))}`)));
  });
}

async function get(s: RunningApiServer, path: string, opts: { token?: string; cert?: { certPem: string; keyPem: string } } = {}) {
  const dispatcher = new Agent({ connect: { ca: s.caPem, ...(opts.cert ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}) } });
  try {
    const r = await request(`${s.url}${path}`, { dispatcher, headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} });
    const text = await r.body.text();
    return { status: r.statusCode, body: (r.headers['content-type'] === 'application/json' ? JSON.parse(text) : { text }) as Record<string, unknown> };
  } finally {
    await dispatcher.close();
  }
}

describe('startApiServer', () => {
  it('creates the PKI, token and kubeconfig on first start and reuses them on the next', async () => {
    const dataDir = tempDir();
    const h = recordingHandler();
    const s = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: h.factory });
    try {
      for (const f of ['ca.key', 'apiserver.key', 'admin.token']) assert.equal(statSync(join(dataDir, 'pki', f)).mode & 0o777, 0o600, f);
      assert.equal(statSync(s.kubeconfigPath).mode & 0o777, 0o600);
      assert.match(s.adminToken, /^[A-Za-z0-9_-]{43}$/);
      assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.notEqual(s.port, 0);
      const kc = parse(readFileSync(s.kubeconfigPath, 'utf8'));
      assert.equal(kc['current-context'], 'kcm');
      assert.deepEqual(kc.contexts, [{ name: 'kcm', context: { cluster: 'kcm', user: 'kcm-admin' } }]);
      assert.equal(kc.clusters[0].cluster.server, s.url);
      assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), s.caPem);
      assert.equal(kc.users[0].user.token, s.adminToken);
      assert.equal(h.deps?.serviceClusterIPRange, '10.0.0.0/24');
      assert.deepEqual(h.deps?.endpoint, { address: '127.0.0.1', port: s.port });
    } finally {
      await s.close();
    }
    const caBefore = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
    const certBefore = readFileSync(join(dataDir, 'pki', 'apiserver.crt'), 'utf8');
    const s2 = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: recordingHandler().factory });
    try {
      assert.equal(s2.caPem, caBefore);
      assert.equal(s2.adminToken, s.adminToken);
      assert.equal(readFileSync(join(dataDir, 'pki', 'apiserver.crt'), 'utf8'), certBefore);
      assert.equal(parse(readFileSync(s2.kubeconfigPath, 'utf8')).clusters[0].cluster.server, s2.url);
    } finally {
      await s2.close();
    }
  });

  it('authenticates the admin token as kcm-admin in system:masters', async () => {
    const h = recordingHandler();
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory });
    try {
      const r = await get(s, '/api', { token: s.adminToken });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { user: 'kcm-admin', groups: ['system:masters', 'system:authenticated'] });
    } finally {
      await s.close();
    }
  });

  it('also serves plain HTTP on a private Unix domain socket, with the same authentication, and removes it on close', async () => {
    const h = recordingHandler();
    const dataDir = tempDir();
    const socketPath = join(dataDir, 'apiserver.sock');
    writeFileSync(socketPath, 'stale'); // a killed run's leftover is replaced
    const s = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: h.factory, socketPath });
    const dispatcher = new Agent({ connect: { socketPath } });
    try {
      assert.equal(s.socketPath, socketPath);
      assert.ok(statSync(socketPath).isSocket());
      assert.equal(statSync(socketPath).mode & 0o077, 0, 'only the owner may connect');
      const ok = await request('http://localhost/api', { dispatcher, headers: { authorization: `Bearer ${s.adminToken}` } });
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(await ok.body.json(), { user: 'kcm-admin', groups: ['system:masters', 'system:authenticated'] });
      const anonymous = await request('http://localhost/api/v1/namespaces', { dispatcher });
      assert.equal(anonymous.statusCode, 401);
      await anonymous.body.dump();
      assert.equal((await get(s, '/api', { token: s.adminToken })).status, 200, 'HTTPS is served as before');
    } finally {
      await dispatcher.close();
      await s.close();
    }
    assert.equal(existsSync(socketPath), false);
  });

  it('answers 401 with an Unauthorized Status to requests without valid credentials', async () => {
    const h = recordingHandler();
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory });
    try {
      for (const token of [undefined, 'wrong']) {
        const r = await get(s, '/api/v1/namespaces', token ? { token } : {});
        assert.equal(r.status, 401);
        assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      }
      assert.equal(h.users.length, 0);
      // A bad token is rejected even on a public path.
      assert.equal((await get(s, '/healthz', { token: 'wrong' })).status, 401);
    } finally {
      await s.close();
    }
  });

  it('lets anonymous callers read the health and version endpoints only', async () => {
    const h = recordingHandler();
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory });
    try {
      for (const p of ['/healthz', '/livez', '/readyz', '/version', '/readyz?verbose']) {
        const r = await get(s, p);
        assert.equal(r.status, 200, p);
        assert.equal(r.body.user, 'system:anonymous');
      }
      assert.equal((await get(s, '/healthz/etcd')).status, 401);
      assert.equal((await get(s, '/metrics')).status, 401);
    } finally {
      await s.close();
    }
  });

  it('authenticates client certificates signed by the cluster CA and rejects others', async () => {
    const dataDir = tempDir();
    const s = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: recordingHandler().factory });
    try {
      const ca = { certPem: s.caPem, keyPem: readFileSync(join(dataDir, 'pki', 'ca.key'), 'utf8') };
      const client = newSignedCert(ca, { commonName: 'system:kube-scheduler', organizations: ['ops', 'devs'], usage: 'client' });
      const r = await get(s, '/api', { cert: client });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { user: 'system:kube-scheduler', groups: ['ops', 'devs', 'system:authenticated'] });

      const stranger = newSignedCert(newCA('other'), { commonName: 'mallory', usage: 'client' });
      assert.equal((await get(s, '/api', { cert: stranger })).status, 401);
      // A foreign certificate does not spoil a valid token.
      assert.equal((await get(s, '/api', { cert: stranger, token: s.adminToken })).body.user, 'kcm-admin');
    } finally {
      await s.close();
    }
  });

  it('accepts tokens from added authenticators', async () => {
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: recordingHandler().factory });
    try {
      assert.equal((await get(s, '/api', { token: 'sa-token' })).status, 401);
      s.addTokenAuthenticator(async (t) => (t === 'sa-token' ? { username: 'system:serviceaccount:default:builder', groups: ['system:serviceaccounts'] } : undefined));
      const r = await get(s, '/api', { token: 'sa-token' });
      assert.deepEqual(r.body, { user: 'system:serviceaccount:default:builder', groups: ['system:serviceaccounts', 'system:authenticated'] });
    } finally {
      await s.close();
    }
  });

  it('ends long-running requests and closes the handler on close()', async () => {
    const h = recordingHandler();
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory });
    const dispatcher = new Agent({ connect: { ca: s.caPem } });
    const r = await request(`${s.url}/hang`, { dispatcher, headers: { authorization: `Bearer ${s.adminToken}` } });
    const text = r.body.text();
    await s.close();
    assert.equal(await text, '{"type":"ADDED"}\n');
    assert.equal(h.closed, true);
    await assert.rejects(request(`${s.url}/api`, { dispatcher, headers: { authorization: `Bearer ${s.adminToken}` } }));
    await dispatcher.close();
    await s.close(); // idempotent
  });

  it('persists sqlite storage in <dataDir>/db across restarts', async () => {
    const dataDir = tempDir();
    const s = await startApiServer({ dataDir, securePort: 0, handler: recordingHandler().factory });
    await s.storage.create('/registry/configmaps/default/a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
    const rev = s.storage.currentRevision();
    await s.close();
    assert.ok(statSync(join(dataDir, 'db')).isDirectory());
    const s2 = await startApiServer({ dataDir, securePort: 0, handler: recordingHandler().factory });
    try {
      const got = await s2.storage.get('/registry/configmaps/default/a');
      assert.equal(got?.revision, rev);
    } finally {
      await s2.close();
    }
  });

  it('serves the built-in Kubernetes API by default', async () => {
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory' });
    try {
      assert.deepEqual(await get(s, '/readyz'), { status: 200, body: { text: 'ok' } });
      const ns = await get(s, '/api/v1/namespaces/default', { token: s.adminToken });
      assert.equal(ns.status, 200);
      assert.equal(ns.body.kind, 'Namespace');
      const ep = await get(s, '/api/v1/namespaces/default/endpoints/kubernetes', { token: s.adminToken });
      assert.deepEqual((ep.body as any).subsets[0].ports[0].port, s.port);
      assert.deepEqual((ep.body as any).subsets[0].addresses, [{ ip: '127.0.0.1' }]);
      const svc = await get(s, '/api/v1/namespaces/default/services/kubernetes', { token: s.adminToken });
      assert.equal((svc.body as any).spec.clusterIP, '10.0.0.1');
    } finally {
      await s.close();
    }
  });

  it('fails to start when the port is taken, leaving nothing running', async () => {
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: recordingHandler().factory });
    try {
      await assert.rejects(startApiServer({ dataDir: tempDir(), securePort: s.port, storage: 'memory', handler: recordingHandler().factory }), /EADDRINUSE/);
    } finally {
      await s.close();
    }
  });

  it('answers a look-alike client certificate (another CA of the same name) with 401 after a complete handshake, and logs it', async () => {
    const lines: string[] = [];
    const restore = setLogOutput((l) => lines.push(l));
    setVerbosity(2);
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: recordingHandler().factory });
    try {
      const lookAlike = newSignedCert(newCA('kcm-ca'), { commonName: 'mallory', organizations: ['system:masters'], usage: 'client' });
      const r = await get(s, '/api', { cert: lookAlike });
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      assert.ok(
        lines.some((l) => l.includes('Unable to authenticate the request due to an error') && l.includes('certificate signed by unknown authority') && l.includes('candidate authority certificate \\"kcm-ca\\"')),
        lines.join('\n'),
      );
    } finally {
      setVerbosity(0);
      setLogOutput(restore);
      await s.close();
    }
  });

  it("takes headers up to 1 MiB, and answers larger ones with Go's 431 reply instead of resetting the connection", async () => {
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: recordingHandler().factory });
    try {
      const ok = await rawExchange(s, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${'a'.repeat(200_000)}\r\n\r\n`);
      assert.match(ok, /^HTTP\/1\.1 200 OK\r\n/);
      const big = await rawExchange(s, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(8 * 1024 * 1024)}\r\n\r\n`);
      assert.equal(big, 'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large');
      const bad = await rawExchange(s, 'GET /healthz HTTP/1.1\r\nHost x\r\n\r\n');
      assert.equal(bad, 'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request');
    } finally {
      await s.close();
    }
  });

  it('answers 504 with the Timeout Status after --request-timeout, also to a request whose body never finishes, and spares watches', async () => {
    const h = recordingHandler();
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory, requestTimeoutMs: 300, shutdownTimeoutMs: 500 });
    const auth = `Authorization: Bearer ${s.adminToken}\r\n`;
    try {
      // A watch opened first: had it been timed, it would be cut before the slow requests below are.
      const dispatcher = new Agent({ connect: { ca: s.caPem } });
      const watch = await request(`${s.url}/api/v1/pods?watch=1`, { dispatcher, headers: { authorization: `Bearer ${s.adminToken}` } });
      assert.equal(watch.statusCode, 200);
      const watchBody = watch.body.text();
      // kube-apiserver 1.20 with --request-timeout=300ms, less its Date and priority-and-fairness headers.
      const upstream = 'HTTP/1.1 504 Gateway Timeout\r\nCache-Control: no-cache, private\r\nContent-Length: 137\r\nContent-Type: text/plain; charset=utf-8\r\n';
      const body = '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within 300ms","reason":"Timeout","details":{},"code":504}\n';
      const slowHandler = await rawExchange(s, `GET /slow HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`);
      assert.ok(slowHandler.startsWith(upstream), slowHandler);
      assert.ok(slowHandler.endsWith(`\r\n\r\n${body}`), slowHandler);
      const slowBody = await rawExchange(s, `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`);
      assert.match(slowBody, /^HTTP\/1\.1 504 Gateway Timeout\r\n/);
      assert.match(slowBody, /\r\nConnection: close\r\n/);
      assert.ok(slowBody.endsWith(body), slowBody);
      // The watch outlived both timeouts and ends only with the server.
      await s.close();
      assert.equal(await watchBody, '{"type":"ADDED"}\n');
      await dispatcher.close();
    } finally {
      await s.close();
    }
  });

  it('lets RBAC decide about anonymous callers under --authorization-mode=RBAC, as kube-apiserver', async () => {
    const h = recordingHandler();
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory, authorizationMode: 'RBAC' });
    try {
      const r = await get(s, '/api/v1/namespaces');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { user: 'system:anonymous', groups: ['system:unauthenticated'] });
      assert.equal((await get(s, '/api', { token: 'wrong' })).status, 401);
    } finally {
      await s.close();
    }
  });

  it('authenticates upgrade requests, hands them to handleUpgrade, and cuts spliced sockets on close()', async () => {
    const h = recordingHandler();
    const upgradedUsers: string[] = [];
    h.handler.handleUpgrade = (_req, socket, _head, user) => {
      upgradedUsers.push(user.username);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
      socket.pipe(socket);
    };
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: h.factory });
    const upgradeOver = (token?: string) =>
      new Promise<{ head: string; socket: ReturnType<typeof connect> }>((resolve, reject) => {
        const sock = connect({ host: '127.0.0.1', port: s.port, ca: s.caPem, servername: 'localhost' }, () => {
          sock.write(`POST /api/v1/namespaces/default/pods/p/exec?command=ls HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}\r\n`);
        });
        let buf = '';
        const timer = setTimeout(() => reject(new Error(`no answer: ${buf}`)), 5000);
        sock.on('data', function onData(c: Buffer) {
          buf += c.toString();
          if (!buf.includes('\r\n\r\n')) return;
          clearTimeout(timer);
          sock.off('data', onData);
          resolve({ head: buf, socket: sock });
        });
        sock.on('error', () => undefined);
      });
    try {
      const anon = await upgradeOver();
      anon.socket.destroy();
      assert.match(anon.head, /^HTTP\/1\.1 401 /);
      assert.deepEqual(upgradedUsers, []);
      const ok = await upgradeOver(s.adminToken);
      assert.match(ok.head, /^HTTP\/1\.1 101 /);
      assert.deepEqual(upgradedUsers, ['kcm-admin']);
      const echoed = new Promise<string>((r) => ok.socket.once('data', (c: Buffer) => r(c.toString())));
      ok.socket.write('ping');
      assert.equal(await echoed, 'ping');
      const closed = new Promise<void>((r) => ok.socket.once('close', () => r()));
      await s.close();
      await closed;
    } finally {
      await s.close();
    }
  });

  it('serves TLS on a thread of its own: handlers see the client as on a TLS socket, and a connection to its socket without the secret never reaches them', async () => {
    const dataDir = tempDir();
    const seen: Array<{ remote?: string; port?: number; tls: boolean }> = [];
    const handler: ApiHandler = {
      handle(req, res) {
        seen.push({ remote: req.socket.remoteAddress, port: req.socket.remotePort, tls: 'getPeerCertificate' in req.socket });
        res.end('ok');
      },
      async close() {},
    };
    const s = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: () => handler });
    try {
      const sock = connect({ host: '127.0.0.1', port: s.port, ca: s.caPem, servername: 'localhost' });
      await new Promise((r) => sock.once('secureConnect', r));
      const clientPort = sock.localPort;
      const reply = new Promise<string>((r) => sock.once('data', (c: Buffer) => r(c.toString())));
      sock.write(`GET /api HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${s.adminToken}\r\n\r\n`);
      assert.match(await reply, /^HTTP\/1\.1 200 /);
      sock.destroy();
      // The main thread serves plain HTTP; the address is the TLS client's.
      assert.deepEqual(seen, [{ remote: '127.0.0.1', port: clientPort, tls: false }]);

      // Someone else on the front's socket: a forged preamble, then a request.
      const frontSocket = join(dataDir, 'tls-front.sock');
      assert.equal(statSync(frontSocket).mode & 0o077, 0, "only its owner may connect");
      const forged = netConnect(frontSocket);
      const closed = new Promise<string>((r) => {
        let got = '';
        forged.on('data', (c: Buffer) => (got += c.toString()));
        forged.on('close', () => r(got));
        forged.on('error', () => undefined);
      });
      forged.write(`${JSON.stringify({ secret: 'guess', remoteAddress: '10.0.0.1', certificates: [] })}\nGET /api HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.equal(await closed, '');
      assert.equal(seen.length, 1);
    } finally {
      await s.close();
    }
    assert.equal(existsSync(join(dataDir, 'tls-front.sock')), false);
  });

  it('ends a long-running request on the server when its client disconnects', async () => {
    const ended: string[] = [];
    const handler: ApiHandler = {
      handle(req, res) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"type":"ADDED"}\n');
        res.on('close', () => ended.push(req.url ?? ''));
      },
      async close() {},
    };
    const s = await startApiServer({ dataDir: tempDir(), securePort: 0, storage: 'memory', handler: () => handler });
    try {
      const sock = connect({ host: '127.0.0.1', port: s.port, ca: s.caPem, servername: 'localhost' }, () =>
        sock.write(`GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${s.adminToken}\r\n\r\n`),
      );
      await new Promise((r) => sock.once('data', r));
      sock.destroy();
      for (let i = 0; i < 250 && ended.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(ended, ['/api/v1/pods?watch=1']);
    } finally {
      await s.close();
    }
  });

  it('serves TLS on the main thread when asked (tlsThread: false), with client certificates', async () => {
    const dataDir = tempDir();
    const { rec, sockets } = recordingTlsSockets();
    const s = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: rec.factory, tlsThread: false });
    try {
      const ca = { certPem: s.caPem, keyPem: readFileSync(join(dataDir, 'pki', 'ca.key'), 'utf8') };
      const client = newSignedCert(ca, { commonName: 'alice', organizations: ['devs'], usage: 'client' });
      assert.deepEqual((await get(s, '/api', { cert: client })).body, { user: 'alice', groups: ['devs', 'system:authenticated'] });
      assert.deepEqual(sockets, [true]);
      assert.equal(existsSync(join(dataDir, 'tls-front.sock')), false);
    } finally {
      await s.close();
    }
  });

  it("serves TLS on the main thread when the data dir's path is too long for the front's Unix domain socket", async () => {
    const dataDir = join(tempDir(), 'd'.repeat(90));
    const { rec, sockets } = recordingTlsSockets();
    const s = await startApiServer({ dataDir, securePort: 0, storage: 'memory', handler: rec.factory });
    try {
      assert.equal((await get(s, '/api', { token: s.adminToken })).status, 200);
      assert.deepEqual(sockets, [true]);
    } finally {
      await s.close();
    }
  });
});
