import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { createApiHandler, type ApiHandler } from '../handler.js';
import { newMemoryStorage } from '../storage/memory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { FakeClock } from '../../util/clock/clock.js';
import { newServiceAccountTokenAuthenticator, newServiceAccountTokenSigner } from '../serve/sa-token.js';
import { storageReader } from '../serve/sa-setup.js';

const admin = { username: 'root', groups: ['system:masters', 'system:authenticated'] };
const issuer = 'https://kubernetes.default.svc.cluster.local';

describe('TokenRequest (serviceaccounts/token)', () => {
  let handler: ApiHandler;
  let server: http.Server;
  let base = '';
  const clock = new FakeClock('2025-01-01T00:00:00Z');
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const storage = newMemoryStorage();
  const authn = newServiceAccountTokenAuthenticator({ keys: [key.publicKey], issuers: [issuer], reader: storageReader(storage), clock });
  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  }
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, any>;
  before(async () => {
    setLogOutput(() => {});
    handler = await createApiHandler({ storage, clock, auth: { tokenSigner: newServiceAccountTokenSigner({ key: key.privateKey, issuer, clock }) } });
    server = http.createServer((req, res) => handler.handle(req, res, admin));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    assert.equal((await call('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'builder' } })).status, 201);
  });
  after(async () => {
    await handler.close();
    await new Promise((r) => server.close(r));
  });

  it('signs a one-hour token for the API audiences by default, which then authenticates', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/serviceaccounts/builder/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    assert.equal(r.status, 201);
    assert.equal(r.body.kind, 'TokenRequest');
    assert.equal(r.body.metadata.name, 'builder');
    assert.deepEqual(r.body.spec.audiences, [issuer]);
    assert.equal(r.body.spec.expirationSeconds, 3600);
    assert.equal(r.body.status.expirationTimestamp, '2025-01-01T01:00:00Z');
    const c = claimsOf(r.body.status.token);
    assert.equal(c.sub, 'system:serviceaccount:default:builder');
    assert.equal(c.iss, issuer);
    assert.equal(c.exp - c.iat, 3600);
    const who = await authn.authenticate(r.body.status.token);
    assert.equal(who.kind, 'user');
  });

  it('refuses durations under ten minutes and a missing service account', async () => {
    const short = await call('POST', '/api/v1/namespaces/default/serviceaccounts/builder/token', { spec: { expirationSeconds: 599 } });
    assert.equal(short.status, 422);
    assert.equal(short.body.message, 'TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
    const missing = await call('POST', '/api/v1/namespaces/default/serviceaccounts/ghost/token', { spec: {} });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'serviceaccounts "ghost" not found');
  });

  it('binds to a pod of that service account, checks the uid, and extends 3607-second pod tokens', async () => {
    const pod = await call('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'web' }, spec: { serviceAccountName: 'builder', containers: [{ name: 'c', image: 'nginx' }] } });
    assert.equal(pod.status, 201);
    const uid = pod.body.metadata.uid as string;
    const ok = await call('POST', '/api/v1/namespaces/default/serviceaccounts/builder/token', { spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid } } });
    assert.equal(ok.status, 201);
    const c = claimsOf(ok.body.status.token);
    assert.deepEqual(c['kubernetes.io'].pod, { name: 'web', uid });
    assert.equal(c.exp - c.iat, 365 * 86400);
    assert.equal(c['kubernetes.io'].warnafter - c.iat, 3607);
    assert.equal(ok.body.status.expirationTimestamp, '2025-01-01T01:00:07Z');
    const wrongUid = await call('POST', '/api/v1/namespaces/default/serviceaccounts/builder/token', { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'nope' } } });
    assert.equal(wrongUid.status, 409);
    assert.match(wrongUid.body.message, /the UID in the bound object reference \(nope\) does not match the UID in record/);
    assert.equal((await call('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'other' } })).status, 201);
    const wrongSa = await call('POST', '/api/v1/namespaces/default/serviceaccounts/other/token', { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } } });
    assert.equal(wrongSa.status, 400);
    assert.equal(wrongSa.body.message, 'cannot bind token for serviceaccount "other" to pod running with serviceaccount "builder"');
    const badKind = await call('POST', '/api/v1/namespaces/default/serviceaccounts/builder/token', { spec: { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } } });
    assert.equal(badKind.status, 400);
    assert.equal(badKind.body.message, 'cannot bind token to object of type /v1, Kind=ConfigMap');
    // Deleting the pod invalidates its token (after the deletion leeway; here the pod is gone at once).
    const token = ok.body.status.token as string;
    assert.equal((await authn.authenticate(token)).kind, 'user');
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0')).status, 200);
    assert.deepEqual(await authn.authenticate(token), { kind: 'invalid', error: 'pod default/web has been deleted' });
  });
});
