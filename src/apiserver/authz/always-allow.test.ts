import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setLogOutput } from '../../util/log/logger.js';
import { startTestServer, type TestServer } from '../test-server.js';
import { newAlwaysAllowAuthorizer } from './always-allow.js';

const sar = (user: string, groups: string[], path: string, verb = 'get') => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SubjectAccessReview',
  spec: { user, groups, nonResourceAttributes: { path, verb } },
});

describe('AlwaysAllow authorizer', () => {
  it('allows every authenticated user everything, anonymous users the public-information paths only', async () => {
    const a = newAlwaysAllowAuthorizer();
    const anonymous = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    assert.equal((await a.authorize({ user: { username: 'bob', groups: ['system:authenticated'] }, verb: 'get', resourceRequest: false, path: '/metrics' })).allowed, true);
    assert.equal((await a.authorize({ user: { username: 'bob', groups: [] }, verb: 'delete', resourceRequest: true, resource: 'nodes' })).allowed, true);
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await a.authorize({ user: anonymous, verb: 'get', resourceRequest: false, path })).allowed, true, path);
    assert.equal((await a.authorize({ user: anonymous, verb: 'get', resourceRequest: false, path: '/metrics' })).allowed, false);
    assert.equal((await a.authorize({ user: anonymous, verb: 'post', resourceRequest: false, path: '/healthz' })).allowed, false);
    assert.equal((await a.authorize({ user: anonymous, verb: 'list', resourceRequest: true, resource: 'pods' })).allowed, false);
  });
});

describe('the API server under AlwaysAllow', () => {
  let t: TestServer;
  before(async () => {
    setLogOutput(() => {});
    t = await startTestServer({ clientCA: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' });
  });
  after(() => t.close());

  it('answers access reviews about anonymous users as it treats them, so delegating components do not serve them /metrics', async () => {
    const anon = await t.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar('system:anonymous', ['system:unauthenticated'], '/metrics'));
    assert.equal(anon.status, 201);
    assert.equal(anon.body.status.allowed, false);
    const health = await t.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar('system:anonymous', ['system:unauthenticated'], '/healthz'));
    assert.equal(health.body.status.allowed, true);
    const bob = await t.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar('bob', ['system:authenticated'], '/metrics'));
    assert.equal(bob.body.status.allowed, true);
    // Rules reviews still list everything (no authorizer outside access reviews).
    const rules = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } });
    assert.deepEqual(rules.body.status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  });

  it('publishes the client CA in kube-system/extension-apiserver-authentication, as kube-apiserver does', async () => {
    const cm = await t.request('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
    assert.equal(cm.status, 200);
    assert.deepEqual(cm.body.data, { 'client-ca-file': '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' });
  });
});
