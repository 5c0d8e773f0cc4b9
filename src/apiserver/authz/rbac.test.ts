import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler, type ApiHandler } from '../handler.js';
import { newMemoryStorage } from '../storage/memory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { forbiddenError, ruleAllows } from './rbac.js';

const alice = { username: 'alice', groups: ['system:authenticated'] };
const admin = { username: 'root', groups: ['system:masters', 'system:authenticated'] };

describe('RBAC authorization', () => {
  let handler: ApiHandler;
  let server: http.Server;
  let base = '';
  async function call(user: object, method: string, path: string, body?: unknown) {
    const res = await fetch(base + path, {
      method,
      headers: { 'x-user': JSON.stringify(user), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
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

  it('denies a user without bindings with Kubernetes message', async () => {
    const res = await call(alice, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"');
    const one = await call(alice, 'GET', '/apis/apps/v1/namespaces/default/deployments/web');
    assert.equal(one.body.message, 'deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments" in API group "apps" in the namespace "default"');
    const nodes = await call(alice, 'GET', '/api/v1/nodes');
    assert.equal(nodes.body.message, 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope');
  });

  it('always allows system:masters and bootstraps cluster-admin and discovery', async () => {
    assert.equal((await call(admin, 'GET', '/api/v1/nodes')).status, 200);
    const crs = await call(admin, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin');
    assert.equal(crs.status, 200);
    assert.equal((await call(alice, 'GET', '/version')).status, 200);
  });

  it('allows after a RoleBinding to the view ClusterRole, in that namespace only', async () => {
    const rb = {
      metadata: { name: 'alice-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    };
    assert.equal((await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', rb)).status, 201);
    assert.equal((await call(alice, 'GET', '/api/v1/namespaces/default/pods')).status, 200);
    assert.equal((await call(alice, 'GET', '/api/v1/namespaces/kube-system/pods')).status, 403);
    const create = await call(alice, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } });
    assert.equal(create.status, 403);
    assert.equal(create.body.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default"');
  });

  it('matches service accounts, groups, subresources, resourceNames and wildcards', () => {
    const a = { user: alice, verb: 'update', resourceRequest: true, apiGroup: '', resource: 'pods', subresource: 'status', namespace: 'ns', name: 'p' };
    assert.ok(ruleAllows(a, { apiGroups: [''], resources: ['pods/status'], verbs: ['update'] }));
    assert.ok(!ruleAllows(a, { apiGroups: [''], resources: ['pods'], verbs: ['update'] }));
    assert.ok(ruleAllows(a, { apiGroups: ['*'], resources: ['*/status'], verbs: ['*'] }));
    assert.ok(!ruleAllows(a, { apiGroups: [''], resources: ['pods/status'], verbs: ['update'], resourceNames: ['other'] }));
    const path = { user: alice, verb: 'get', resourceRequest: false, path: '/apis/apps' };
    assert.ok(ruleAllows(path, { nonResourceURLs: ['/apis/*'], verbs: ['get'] }));
    assert.ok(!ruleAllows(path, { nonResourceURLs: ['/api'], verbs: ['get'] }));
    assert.equal(forbiddenError(path).status.message, 'forbidden: User "alice" cannot get path "/apis/apps"');
  });

  it('grants a service account through a ClusterRoleBinding to its group', async () => {
    const sa = { username: 'system:serviceaccount:default:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] };
    assert.equal((await call(sa, 'GET', '/api/v1/nodes')).status, 403);
    const crb = {
      metadata: { name: 'sa-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'nodes-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'default' }],
    };
    const cr = { metadata: { name: 'nodes-reader' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] };
    assert.equal((await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', cr)).status, 201);
    assert.equal((await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', crb)).status, 201);
    assert.equal((await call(sa, 'GET', '/api/v1/nodes')).status, 200);
  });
});
