import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { newRestConfig } from '../client/rest-config.js';
import { startFakeApiServer, type FakeApiServer } from '../client/testing/fake-api-server.js';
import { GVR } from '../api/gvr.js';
import { X509Certificate } from 'node:crypto';
import { newCA, newSignedCert, type KeyPair } from '../util/cert/cert.js';
import { FakeClock } from '../util/clock/clock.js';
import { newLogger, setLogOutput } from '../util/log/logger.js';
import { delegatedAuthConfig, delegatedAuthFlags } from './auth-flags.js';
import { setUpDelegatedAuth, type DelegatedAuthConfig } from './delegated-auth.js';
import { parseFlags } from '../cmd/flags.js';

const anonymousRequest = { headers: {}, headersDistinct: {}, socket: {} } as unknown as IncomingMessage;
/** A request over TLS that presented `cert`. */
const withCert = (cert: KeyPair, headers: Record<string, string> = {}) => {
  const x = new X509Certificate(cert.certPem);
  const socket = { getPeerCertificate: () => ({ raw: x.raw, fingerprint256: x.fingerprint256 }) };
  return { headers, headersDistinct: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])), socket } as unknown as IncomingMessage;
};
const withToken = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, headersDistinct: {}, socket: {} }) as unknown as IncomingMessage;

function json(res: import('node:http').ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

describe('setUpDelegatedAuth', () => {
  let api: FakeApiServer;
  let restore: (l: string) => void;
  const logs: string[] = [];
  const bodies: { path: string; body: unknown }[] = [];
  let configMapForbidden = false;
  before(async () => {
    restore = setLogOutput((l) => logs.push(l));
    api = await startFakeApiServer();
    api.handle('POST', '/apis/authentication.k8s.io/v1/tokenreviews', (req, res) => {
      const body = JSON.parse(req.body) as { spec: { token: string } };
      bodies.push({ path: req.path, body });
      const ok = body.spec.token === 'good';
      json(res, 201, { ...body, status: ok ? { authenticated: true, user: { username: 'prom', groups: ['system:authenticated'] } } : { authenticated: false, error: 'invalid token' } });
    });
    api.handle('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', (req, res) => {
      const body = JSON.parse(req.body) as { spec: { user: string } };
      bodies.push({ path: req.path, body });
      json(res, 201, { ...body, status: { allowed: body.spec.user === 'prom', reason: body.spec.user === 'prom' ? 'RBAC: allowed' : '' } });
    });
    api.handle('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication', (_req, res) => {
      if (!configMapForbidden) return false;
      json(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'configmaps "extension-apiserver-authentication" is forbidden: User "x" cannot get resource "configmaps"' });
      return true;
    });
  });
  after(async () => {
    await api.close();
    setLogOutput(restore);
  });

  const config = async (args: string[] = []): Promise<DelegatedAuthConfig> => {
    const own = newRestConfig({ host: api.url, qps: -1 });
    return delegatedAuthConfig(parseFlags(delegatedAuthFlags, args).values, own, async () => own);
  };

  it("uses kube-controller-manager's defaults", async () => {
    const c = await config();
    assert.deepEqual(
      { ...c, authentication: undefined, authorization: undefined },
      {
        authentication: undefined,
        authorization: undefined,
        tokenCacheTtlMs: 10_000,
        clientCAFile: '',
        skipLookup: false,
        tolerateLookupFailure: false,
        requestHeader: { clientCAFile: '', usernameHeaders: ['x-remote-user'], groupHeaders: ['x-remote-group'], extraHeaderPrefixes: ['x-remote-extra-'], allowedNames: [] },
        alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
        allowCacheTtlMs: 10_000,
        denyCacheTtlMs: 10_000,
      },
    );
  });

  it('checks bearer tokens with TokenReview and non-resource access with SubjectAccessReview', async () => {
    const auth = await setUpDelegatedAuth(await config(), { clock: new FakeClock(Date.now()), logger: newLogger('t') });
    try {
      const good = await auth.authenticator.authenticate(withToken('good'));
      assert.deepEqual(good, { kind: 'user', user: { username: 'prom', groups: ['system:authenticated'] }, method: 'token' });
      assert.deepEqual(await auth.authenticator.authenticate(withToken('bad')), { kind: 'failed', errors: ['invalid token'] });
      assert.deepEqual(await auth.authenticator.authenticate(anonymousRequest), { kind: 'anonymous', user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } });
      const allowed = await auth.authorizer.authorize({ user: { username: 'prom', groups: ['system:authenticated'] }, verb: 'get', path: '/metrics' });
      assert.deepEqual(allowed, { decision: 'allow', reason: 'RBAC: allowed' });
      const denied = await auth.authorizer.authorize({ user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, verb: 'get', path: '/metrics' });
      assert.deepEqual(denied, { decision: 'noOpinion', reason: '' });
      assert.deepEqual(bodies.find((b) => b.path.endsWith('tokenreviews'))?.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good' } });
      assert.deepEqual(bodies.at(-1)?.body, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'system:anonymous', groups: ['system:unauthenticated'] },
      });
      assert.equal(auth.requestClientCertificates, true);
    } finally {
      await auth.close();
    }
  });

  it('looks the client CA and the front-proxy settings up in kube-system/extension-apiserver-authentication', async () => {
    const ca = newCA('cluster-ca');
    const proxy = newCA('front-proxy-ca');
    api.seed(GVR.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'extension-apiserver-authentication', namespace: 'kube-system' },
      data: {
        'client-ca-file': ca.certPem,
        'requestheader-client-ca-file': proxy.certPem,
        'requestheader-username-headers': '["X-Remote-User"]',
        'requestheader-group-headers': '["X-Remote-Group"]',
        'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
        'requestheader-allowed-names': '["front-proxy-client"]',
      },
    } as never);
    const lookups = () => api.requests.filter((r) => r.path.endsWith('/extension-apiserver-authentication')).length;
    const before = lookups();
    const auth = await setUpDelegatedAuth(await config(), { clock: new FakeClock(Date.now()), logger: newLogger('t') });
    try {
      const alice = newSignedCert(ca, { commonName: 'alice', organizations: ['devs'], usage: 'client' });
      assert.deepEqual(await auth.authenticator.authenticate(withCert(alice)), { kind: 'user', user: { username: 'alice', groups: ['devs', 'system:authenticated'] }, method: 'x509' });
      const front = newSignedCert(proxy, { commonName: 'front-proxy-client', usage: 'client' });
      assert.deepEqual(await auth.authenticator.authenticate(withCert(front, { 'x-remote-user': 'bob', 'x-remote-group': 'ops' })), {
        kind: 'user',
        user: { username: 'bob', groups: ['ops', 'system:authenticated'] },
        method: 'requestheader',
      });
      const stranger = newSignedCert(newCA('cluster-ca'), { commonName: 'mallory', usage: 'client' });
      assert.equal((await auth.authenticator.authenticate(withCert(stranger))).kind, 'failed');
    } finally {
      await auth.close();
    }
    assert.equal(lookups() - before, 1);
    // --authentication-skip-lookup: nothing is looked up, and without CA files nobody is asked for a certificate.
    const skip = await setUpDelegatedAuth(await config(['--authentication-skip-lookup']), { clock: new FakeClock(Date.now()), logger: newLogger('t') });
    await skip.close();
    assert.equal(lookups() - before, 1);
    assert.equal(skip.requestClientCertificates, false);
  });

  it('re-reads the ConfigMap every minute, so a client CA published later is used', async () => {
    const ns = `/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication`;
    let served: Record<string, string> | undefined;
    let active = true;
    api.handle('GET', ns, (_req, res) => {
      if (!active) return false;
      if (!served) json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' });
      else json(res, 200, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extension-apiserver-authentication', namespace: 'kube-system' }, data: served });
      return true;
    });
    const clock = new FakeClock(Date.now());
    const auth = await setUpDelegatedAuth(await config(), { clock, logger: newLogger('t') });
    try {
      const ca = newCA('later-ca');
      const alice = newSignedCert(ca, { commonName: 'alice', usage: 'client' });
      assert.equal((await auth.authenticator.authenticate(withCert(alice))).kind, 'anonymous');
      served = { 'client-ca-file': ca.certPem };
      await clock.advance(60_000);
      const deadline = Date.now() + 5000;
      while ((await auth.authenticator.authenticate(withCert(alice))).kind !== 'user' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal((await auth.authenticator.authenticate(withCert(alice))).kind, 'user');
    } finally {
      await auth.close();
      active = false;
    }
  });

  it('stops start-up when the ConfigMap cannot be read, unless told to tolerate it', async () => {
    configMapForbidden = true;
    try {
      await assert.rejects(setUpDelegatedAuth(await config(), { clock: new FakeClock(Date.now()), logger: newLogger('t') }), /^DelegatedAuthError: unable to load configmap based request-header-client-ca-file: configmaps "extension-apiserver-authentication" is forbidden/);
      assert.ok(logs.some((l) => l.includes("Usually fixed by 'kubectl create rolebinding -n kube-system ROLEBINDING_NAME --role=extension-apiserver-authentication-reader")));
      const tolerated = await setUpDelegatedAuth(await config(['--authentication-tolerate-lookup-failure']), { clock: new FakeClock(Date.now()), logger: newLogger('t') });
      await tolerated.close();
      assert.ok(logs.some((l) => l.includes('Continuing without authentication configuration. This may treat all requests as anonymous.')));
    } finally {
      configMapForbidden = false;
    }
  });

  it('rejects a bad always-allow path and an unreadable client CA file', async () => {
    await assert.rejects(setUpDelegatedAuth(await config(['--authorization-always-allow-paths=/a*b']), { clock: new FakeClock(), logger: newLogger('t') }), /only trailing \* allowed in "a\*b"/);
    await assert.rejects(setUpDelegatedAuth(await config(['--client-ca-file=/nonexistent/ca.crt']), { clock: new FakeClock(), logger: newLogger('t') }), /unable to load client CA file "\/nonexistent\/ca.crt"/);
  });
});
