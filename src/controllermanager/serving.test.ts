import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { Agent, request } from 'undici';
import { Registry, Gauge } from 'prom-client';
import { newCA, newSignedCert, type KeyPair } from '../util/cert/cert.js';
import { FakeClock } from '../util/clock/clock.js';
import { newLogger, setLogOutput, setVerbosity } from '../util/log/logger.js';
import { newDelegatingAuthenticator, type TokenReviewStatus } from './delegated-authn.js';
import { newDelegatingAuthorizer, type SubjectAccessReviewSpec, type SubjectAccessReviewStatus } from './delegated-authz.js';
import { newHealthChecks, renderHealth, startServing, type ComponentServer } from './serving.js';
import type { DebugControllers } from '../util/workqueue/debug-types.js';

describe('controller-manager health rendering', () => {
  it('answers ok when every check passes and lists them with ?verbose', () => {
    const checks = [{ name: 'ping', check: () => undefined }, { name: 'deployment-controller', check: () => undefined }];
    assert.deepEqual(renderHealth('healthz', checks, false), { code: 200, body: 'ok' });
    assert.equal(renderHealth('healthz', checks, true).body, '[+]ping ok\n[+]deployment-controller ok\nhealthz check passed\n');
  });

  it('fails with 500 naming the failed check', () => {
    const checks = [{ name: 'ping', check: () => undefined }, { name: 'job-controller', check: () => new Error('down') }];
    const r = renderHealth('readyz', checks, false);
    assert.equal(r.code, 500);
    assert.match(r.body, /\[-\]job-controller failed: reason withheld\nreadyz check failed/);
    assert.equal(renderHealth('healthz', checks, false, 'job-controller').code, 500);
    assert.equal(renderHealth('healthz', checks, false, 'ping').code, 200);
    assert.equal(renderHealth('healthz', checks, false, 'nope').code, 404);
  });
});

const debugControllers: DebugControllers = {
  time: Date.UTC(2024, 0, 1),
  controllers: [{ name: 'deployment-controller', healthy: true, queues: ['deployment'] }],
  queues: [
    {
      name: 'deployment',
      controller: 'deployment-controller',
      depth: 1,
      adds: 3,
      addsPerSecond: 0.3,
      retries: 1,
      processing: [{ key: 'ns/web', seconds: 0.5 }],
      longestRunningSeconds: 0.5,
      waiting: ['ns/api'],
      duration: { count: 2, p50: 0.01, p90: 0.02, p99: 0.02 },
      lastErrors: [{ time: Date.UTC(2024, 0, 1), key: 'ns/web', message: 'conflict' }],
    },
  ],
  leaderElection: { lease: 'kube-system/kube-controller-manager', identity: 'host_1', leading: true },
  recent: [{ queue: 'deployment', key: 'ns/web', start: Date.UTC(2024, 0, 1), durationMs: 10, error: 'conflict' }],
};

/** What kube-controller-manager answers, byte for byte (k8s.io/apiserver Unauthorized and responsewriters.Forbidden). */
const unauthorizedBody = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n';
const forbiddenBody = (user: string, verb: string, path: string) =>
  `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \\"${user}\\" cannot ${verb} path \\"${path}\\"","reason":"Forbidden","details":{},"code":403}\n`;

interface Harness {
  srv: ComponentServer;
  clock: FakeClock;
  clientCA: KeyPair;
  proxyCA: KeyPair;
  tokenReviews: string[];
  accessReviews: SubjectAccessReviewSpec[];
  /** Users (by name) the fake API server allows to get /metrics and /configz. */
  allowed: Set<string>;
  reviewFails: { on: boolean };
  logs: string[];
  healthy: { v: boolean };
}

async function startHarness(): Promise<Harness> {
  const clock = new FakeClock(Date.now());
  const clientCA = newCA('kcm-ca');
  const proxyCA = newCA('front-proxy-ca');
  const tokenReviews: string[] = [];
  const accessReviews: SubjectAccessReviewSpec[] = [];
  const allowed = new Set(['system:serviceaccount:monitoring:prometheus', 'alice', 'proxied-bob']);
  const reviewFails = { on: false };
  const logs: string[] = [];
  const tokens: Record<string, TokenReviewStatus> = {
    'prom-token': { authenticated: true, user: { username: 'system:serviceaccount:monitoring:prometheus', uid: 'u1', groups: ['system:serviceaccounts', 'system:authenticated'] } },
    'nobody-token': { authenticated: true, user: { username: 'nobody', groups: ['system:authenticated'] } },
  };
  const registry = new Registry();
  new Gauge({ name: 'workqueue_depth', help: 'depth', labelNames: ['name'], registers: [registry] }).set({ name: 'deployment' }, 2);
  const checks = newHealthChecks();
  const healthy = { v: true };
  checks.add({ name: 'deployment-controller', check: () => (healthy.v ? undefined : new Error('x')) });
  const authenticator = newDelegatingAuthenticator({
    reviewToken: async (token) => {
      tokenReviews.push(token);
      if (reviewFails.on) throw new Error('connection refused');
      return tokens[token] ?? { authenticated: false, error: 'token lookup failed' };
    },
    tokenCacheTtlMs: 10_000,
    clientCA: () => [new X509Certificate(clientCA.certPem)],
    requestHeader: () => ({ clientCA: [new X509Certificate(proxyCA.certPem)], usernameHeaders: ['x-remote-user'], groupHeaders: ['x-remote-group'], extraHeaderPrefixes: ['x-remote-extra-'], allowedNames: ['front-proxy-client'] }),
    clock,
  });
  const authorizer = newDelegatingAuthorizer({
    alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
    reviewAccess: async (spec): Promise<SubjectAccessReviewStatus> => {
      accessReviews.push(spec);
      if (reviewFails.on) throw new Error('connection refused');
      return { allowed: allowed.has(spec.user) };
    },
    allowCacheTtlMs: 10_000,
    denyCacheTtlMs: 10_000,
    clock,
  });
  setLogOutput((l) => logs.push(l));
  const srv = await startServing({
    bindAddress: '127.0.0.1',
    port: 0,
    checks,
    registry,
    configz: () => ({ a: 1 }),
    debugControllers: () => debugControllers,
    auth: { authenticator, authorizer, requestClientCertificates: true },
    logger: newLogger('test'),
  });
  return { srv, clock, clientCA, proxyCA, tokenReviews, accessReviews, allowed, reviewFails, logs, healthy };
}

async function get(h: Harness, path: string, opts: { token?: string; cert?: KeyPair; headers?: Record<string, string>; method?: 'GET' | 'POST' } = {}) {
  const agent = new Agent({ connect: { rejectUnauthorized: false, ...(opts.cert ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}) } });
  try {
    const r = await request(`${h.srv.url}${path}`, {
      method: opts.method ?? 'GET',
      dispatcher: agent,
      headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
    });
    return { code: r.statusCode, type: String(r.headers['content-type']), body: await r.body.text() };
  } finally {
    await agent.close();
  }
}

describe('controller-manager secure serving', () => {
  let h: Harness;
  let restoreLogs: (l: string) => void;
  before(async () => {
    restoreLogs = setLogOutput(() => undefined);
    setVerbosity(2);
    h = await startHarness();
  });
  after(async () => {
    await h.srv.close();
    setLogOutput(restoreLogs);
    setVerbosity(0);
  });

  it('serves the health paths to anonymous callers without asking the API server', async () => {
    const before = h.accessReviews.length;
    for (const p of ['/healthz', '/livez', '/readyz']) assert.deepEqual(await get(h, p), { code: 200, type: 'text/plain; charset=utf-8', body: 'ok' }, p);
    assert.equal(h.accessReviews.length, before);
    h.healthy.v = false;
    try {
      assert.equal((await get(h, '/readyz')).code, 500);
    } finally {
      h.healthy.v = true;
    }
  });

  it('forbids anonymous callers everything else, with the Status kube-controller-manager writes', async () => {
    for (const p of ['/metrics', '/configz', '/healthz/deployment-controller', '/other']) {
      const r = await get(h, p);
      assert.deepEqual(r, { code: 403, type: 'application/json', body: forbiddenBody('system:anonymous', 'get', p) }, p);
    }
    const review = h.accessReviews.find((x) => x.nonResourceAttributes.path === '/metrics');
    assert.deepEqual(review, { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'system:anonymous', groups: ['system:unauthenticated'] });
    assert.equal((await get(h, '/metrics', { method: 'POST' })).body, forbiddenBody('system:anonymous', 'post', '/metrics'));
    // curl gets it indented, as from kube-controller-manager.
    const pretty = await get(h, '/metrics', { headers: { 'user-agent': 'curl/8.5.0' } });
    assert.equal(
      pretty.body,
      '{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {\n    \n  },\n  "status": "Failure",\n  "message": "forbidden: User \\"system:anonymous\\" cannot get path \\"/metrics\\"",\n  "reason": "Forbidden",\n  "details": {\n    \n  },\n  "code": 403\n}',
    );
  });

  it('answers 401 Unauthorized to a token the API server rejects, even on a health path', async () => {
    for (const p of ['/metrics', '/healthz']) assert.deepEqual(await get(h, p, { token: 'stolen' }), { code: 401, type: 'application/json', body: unauthorizedBody });
    assert.match(h.logs.join('\n'), /Unable to authenticate the request due to an error/);
  });

  it('serves /metrics and /configz to a token the API server authenticates and authorizes', async () => {
    const m = await get(h, '/metrics', { token: 'prom-token' });
    assert.equal(m.code, 200);
    assert.match(m.body, /workqueue_depth\{name="deployment"\} 2/);
    assert.deepEqual(JSON.parse((await get(h, '/configz', { token: 'prom-token' })).body), { componentconfig: { a: 1 } });
    assert.deepEqual(h.accessReviews.at(-1), {
      nonResourceAttributes: { path: '/configz', verb: 'get' },
      user: 'system:serviceaccount:monitoring:prometheus',
      groups: ['system:serviceaccounts', 'system:authenticated'],
      uid: 'u1',
    });
    assert.deepEqual(await get(h, '/metrics', { token: 'nobody-token' }), { code: 403, type: 'application/json', body: forbiddenBody('nobody', 'get', '/metrics') });
    assert.equal((await get(h, '/nope', { token: 'prom-token' })).code, 404);
  });

  it('serves /debug/controllers as JSON only to an authenticated and authorized caller, as /metrics', async () => {
    const r = await get(h, '/debug/controllers', { token: 'prom-token' });
    assert.equal(r.code, 200);
    assert.equal(r.type, 'application/json');
    assert.deepEqual(JSON.parse(r.body), debugControllers);
    assert.deepEqual(h.accessReviews.at(-1)!.nonResourceAttributes, { path: '/debug/controllers', verb: 'get' });
    assert.deepEqual(await get(h, '/debug/controllers', { token: 'stolen' }), { code: 401, type: 'application/json', body: unauthorizedBody });
    assert.deepEqual(await get(h, '/debug/controllers', { token: 'nobody-token' }), { code: 403, type: 'application/json', body: forbiddenBody('nobody', 'get', '/debug/controllers') });
    // No credentials at all: system:anonymous, forbidden like on /metrics.
    assert.deepEqual(await get(h, '/debug/controllers'), { code: 403, type: 'application/json', body: forbiddenBody('system:anonymous', 'get', '/debug/controllers') });
  });

  it('reuses TokenReview and SubjectAccessReview answers for their TTL', async () => {
    const t0 = h.tokenReviews.length;
    const a0 = h.accessReviews.length;
    await get(h, '/metrics', { token: 'prom-token' });
    await get(h, '/metrics', { token: 'prom-token' });
    assert.equal(h.tokenReviews.length - t0, 0, 'cached from the previous test');
    await h.clock.advance(10_001);
    await get(h, '/metrics', { token: 'prom-token' });
    await get(h, '/metrics', { token: 'prom-token' });
    assert.equal(h.tokenReviews.length - t0, 1);
    assert.equal(h.accessReviews.length - a0, 1);
  });

  it('answers 500 when the API server cannot be asked, and 401 when a token cannot be reviewed', async () => {
    await h.clock.advance(10_001);
    h.reviewFails.on = true;
    try {
      const r = await get(h, '/metrics');
      assert.deepEqual(r, { code: 500, type: 'text/plain; charset=utf-8', body: 'Internal Server Error: "/metrics": connection refused\n' });
      assert.equal((await get(h, '/metrics', { token: 'prom-token' })).code, 401);
      assert.equal((await get(h, '/healthz')).code, 200);
    } finally {
      h.reviewFails.on = false;
    }
  });

  it('authenticates client certificates of the client CA (CN user, O groups) and refuses a look-alike with 401, after a complete handshake', async () => {
    const alice = newSignedCert(h.clientCA, { commonName: 'alice', organizations: ['devs'], usage: 'client' });
    assert.equal((await get(h, '/metrics', { cert: alice })).code, 200);
    assert.deepEqual(h.accessReviews.at(-1), { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'alice', groups: ['devs', 'system:authenticated'] });
    const lookAlike = newSignedCert(newCA('kcm-ca'), { commonName: 'alice', organizations: ['system:masters'], usage: 'client' });
    h.logs.length = 0;
    assert.deepEqual(await get(h, '/metrics', { cert: lookAlike }), { code: 401, type: 'application/json', body: unauthorizedBody });
    assert.deepEqual(await get(h, '/healthz', { cert: lookAlike }), { code: 401, type: 'application/json', body: unauthorizedBody });
    assert.match(h.logs.join('\n'), /certificate signed by unknown authority/);
    // A certificate that does not verify does not spoil a valid token.
    assert.equal((await get(h, '/metrics', { cert: lookAlike, token: 'prom-token' })).code, 200);
  });

  it('takes the user from request headers only from a verified, allowed front proxy', async () => {
    const proxy = newSignedCert(h.proxyCA, { commonName: 'front-proxy-client', usage: 'client' });
    const headers = { 'x-remote-user': 'proxied-bob', 'x-remote-group': 'team', 'x-remote-extra-scopes': 'a' };
    assert.equal((await get(h, '/metrics', { cert: proxy, headers })).code, 200);
    assert.deepEqual(h.accessReviews.at(-1), { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'proxied-bob', groups: ['team', 'system:authenticated'], extra: { scopes: ['a'] } });
    const otherProxy = newSignedCert(h.proxyCA, { commonName: 'someone-else', usage: 'client' });
    assert.equal((await get(h, '/metrics', { cert: otherProxy, headers })).code, 401);
    // Without a front-proxy certificate the headers mean nothing.
    assert.equal((await get(h, '/metrics', { headers })).body, forbiddenBody('system:anonymous', 'get', '/metrics'));
  });

  it('accepts headers up to 1 MiB and answers larger ones with Go\'s 431 reply instead of a reset', async () => {
    const ok = await get(h, '/healthz', { headers: { 'x-big': 'a'.repeat(64 * 1024) } });
    assert.equal(ok.code, 200);
    const reply = await new Promise<string>((resolve, reject) => {
      const port = Number(new URL(h.srv.url).port);
      const sock = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        sock.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(3 * 1024 * 1024)}\r\n\r\n`);
      });
      let got = '';
      sock.setEncoding('utf8');
      sock.on('data', (d: string) => (got += d));
      sock.on('error', (e) => (got ? resolve(got) : reject(e)));
      sock.on('close', () => resolve(got));
      sock.setTimeout(10_000, () => sock.destroy(new Error('no reply')));
    });
    assert.equal(reply, 'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large');
  });
});
