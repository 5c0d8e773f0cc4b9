import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler, type ApiHandler } from '../handler.js';
import { newMemoryStorage } from '../storage/memory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { impersonatedUser, impersonationRequests } from './impersonation.js';

const admin = { username: 'root', groups: ['system:masters', 'system:authenticated'] };
const alice = { username: 'alice', groups: ['system:authenticated'] };

describe('impersonation headers', () => {
  it('reads a service-account user, groups, extras and a uid', () => {
    const reqs = impersonationRequests({
      'impersonate-user': ['system:serviceaccount:default:bot'],
      'impersonate-group': ['a', 'b'],
      'impersonate-extra-Scopes%2Fx': ['s1'],
      'impersonate-uid': ['u-1'],
    });
    assert.deepEqual(reqs, [
      { kind: 'ServiceAccount', namespace: 'default', name: 'bot' },
      { kind: 'Group', name: 'a' },
      { kind: 'Group', name: 'b' },
      { kind: 'UserExtra', name: 's1', extraKey: 'scopes/x' },
      { kind: 'UID', name: 'u-1' },
    ]);
  });

  it('refuses groups without a user with a 500 status', async () => {
    await assert.rejects(impersonatedUser({ 'impersonate-group': ['g'] }, admin, undefined), (err: any) => err.code === 500 && /without impersonating a user/.test(err.message));
  });

  it('gives a service account its groups and a plain user system:authenticated', async () => {
    assert.deepEqual(await impersonatedUser({ 'impersonate-user': ['system:serviceaccount:ns1:bot'] }, admin, undefined), {
      username: 'system:serviceaccount:ns1:bot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
    });
    assert.deepEqual(await impersonatedUser({ 'impersonate-user': ['jane'], 'impersonate-group': ['devs'] }, admin, undefined), {
      username: 'jane',
      groups: ['devs', 'system:authenticated'],
    });
    assert.deepEqual(await impersonatedUser({ 'impersonate-user': ['system:anonymous'] }, admin, undefined), {
      username: 'system:anonymous',
      groups: ['system:unauthenticated'],
    });
    assert.equal(await impersonatedUser({}, admin, undefined), admin);
  });
});

describe('impersonation through the API handler with RBAC', () => {
  let handler: ApiHandler;
  let server: http.Server;
  let base = '';
  async function call(user: object, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
    const res = await fetch(base + path, {
      method,
      headers: { 'x-user': JSON.stringify(user), ...(opts.body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      ...(opts.body ? { body: JSON.stringify(opts.body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  before(async () => {
    setLogOutput(() => {});
    handler = await createApiHandler({ storage: newMemoryStorage(), authorizationMode: 'RBAC' });
    server = http.createServer((req, res) => handler.handle(req, res, JSON.parse(String(req.headers['x-user']))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await handler.close();
    await new Promise((r) => server.close(r));
  });

  it('runs an admin request as the impersonated service account, so RBAC denies what it lacks', async () => {
    const res = await call(admin, 'GET', '/api/v1/namespaces/default/services', { headers: { 'Impersonate-User': 'system:serviceaccount:default:bot' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'services is forbidden: User "system:serviceaccount:default:bot" cannot list resource "services" in API group "" in the namespace "default"');
  });

  it('answers a SelfSubjectAccessReview for the impersonated user (kubectl auth can-i --as)', async () => {
    const rb = {
      metadata: { name: 'bot-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'default' }],
    };
    assert.equal((await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { body: rb })).status, 201);
    const review = (verb: string) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'default', verb, resource: 'pods' } },
    });
    const as = { 'Impersonate-User': 'system:serviceaccount:default:bot' };
    const list = await call(admin, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: review('list'), headers: as });
    assert.equal(list.status, 201);
    assert.equal(list.body.status.allowed, true);
    const del = await call(admin, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: review('delete'), headers: as });
    assert.equal(del.body.status.allowed, false);
  });

  it('forbids impersonating without the impersonate verb, with the upstream message', async () => {
    const res = await call(alice, 'GET', '/api/v1/namespaces/default/pods', { headers: { 'Impersonate-User': 'jane' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'users "jane" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
    const sa = await call(alice, 'GET', '/api/v1/namespaces/default/pods', { headers: { 'Impersonate-User': 'system:serviceaccount:kube-system:x' } });
    assert.equal(sa.body.message, 'serviceaccounts "x" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"');
  });

  it('lets an impersonated group carry system:masters', async () => {
    const res = await call(admin, 'GET', '/api/v1/nodes', { headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters' } });
    assert.equal(res.status, 200);
  });
});
