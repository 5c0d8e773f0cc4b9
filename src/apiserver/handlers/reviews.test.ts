import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler, type ApiHandler } from '../handler.js';
import { newMemoryStorage } from '../storage/memory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { startTestServer, type TestServer } from '../test-server.js';

const admin = { username: 'root', groups: ['system:masters', 'system:authenticated'] };
const alice = { username: 'alice', uid: 'a-1', groups: ['devs', 'system:authenticated'] };

async function serve(mode: 'AlwaysAllow' | 'RBAC') {
  const handler: ApiHandler = await createApiHandler({
    storage: newMemoryStorage(),
    authorizationMode: mode,
    auth: {
      async reviewToken(token, audiences) {
        if (token !== 'good') return { error: 'invalid bearer token' };
        return { user: { ...alice, groups: [...alice.groups] }, audiences: audiences.length ? [...audiences] : ['api'] };
      },
    },
  });
  const server = http.createServer((req, res) => handler.handle(req, res, JSON.parse(String(req.headers['x-user']))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (user: object, path: string, body: unknown) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'x-user': JSON.stringify(user), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { call, close: async () => { await handler.close(); await new Promise((r) => server.close(r)); } };
}

const ssar = (attrs: object) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attrs } });

describe('review APIs under RBAC', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    setLogOutput(() => {});
    s = await serve('RBAC');
  });
  after(() => s.close());

  it('answers who am I with the caller\'s user info, for any authenticated user', async () => {
    const r = await s.call(alice, '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.status.userInfo, { username: 'alice', uid: 'a-1', groups: ['devs', 'system:authenticated'] });
  });

  it('reviews tokens: a good one names its user and audiences, a bad one carries the error', async () => {
    const ok = await s.call(admin, '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'good', audiences: ['vault'] } });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.kind, 'TokenReview');
    assert.equal(ok.body.status.authenticated, true);
    assert.equal(ok.body.status.user.username, 'alice');
    assert.deepEqual(ok.body.status.audiences, ['vault']);
    const bad = await s.call(admin, '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'bad' } });
    assert.equal(bad.body.status.authenticated, false);
    assert.equal(bad.body.status.error, 'invalid bearer token');
    const empty = await s.call(admin, '/apis/authentication.k8s.io/v1/tokenreviews', { spec: {} });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.message, 'token is required for TokenReview in authentication');
    // Creating token reviews is not in system:basic-user.
    assert.equal((await s.call(alice, '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'good' } })).status, 403);
  });

  it('answers self access reviews with the authorizer, before and after a binding', async () => {
    const attrs = { verb: 'create', resource: 'pods', namespace: 'default' };
    const no = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar(attrs));
    assert.equal(no.status, 201);
    assert.equal(no.body.status.allowed, false);
    const rb = { metadata: { name: 'devs-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' }] };
    assert.equal((await s.call(admin, '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', rb)).status, 201);
    const yes = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar(attrs));
    assert.equal(yes.body.status.allowed, true);
    assert.match(yes.body.status.reason, /RoleBinding "devs-edit\/default"/);
    const elsewhere = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar({ ...attrs, namespace: 'kube-system' }));
    assert.equal(elsewhere.body.status.allowed, false);
  });

  it('answers subject access reviews for another user and validates the spec', async () => {
    const r = await s.call(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'bob', groups: ['system:authenticated'], nonResourceAttributes: { path: '/version', verb: 'get' } } });
    assert.equal(r.status, 201);
    assert.equal(r.body.status.allowed, true);
    const none = await s.call(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    assert.equal(none.status, 422);
    assert.equal(none.body.message, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified');
    const both = await s.call(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'bob' } });
    assert.equal(both.status, 422);
    assert.match(both.body.message, /exactly one of nonResourceAttributes or resourceAttributes must be specified/);
  });

  it('lists the caller\'s rules in a namespace', async () => {
    const r = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'default' } });
    assert.equal(r.status, 201);
    assert.ok(r.body.status.resourceRules.some((x: { verbs: string[]; resources?: string[] }) => x.verbs.includes('create') && x.resources?.includes('pods')));
    assert.ok(r.body.status.resourceRules.some((x: { resources?: string[] }) => x.resources?.includes('selfsubjectaccessreviews')));
    assert.ok(r.body.status.nonResourceRules.some((x: { nonResourceURLs: string[] }) => x.nonResourceURLs.includes('/version')));
    const other = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'kube-system' } });
    assert.ok(!other.body.status.resourceRules.some((x: { resources?: string[] }) => x.resources?.includes('pods')));
  });
});

describe('review APIs under AlwaysAllow', () => {
  it('allows every access review and lists every rule', async () => {
    setLogOutput(() => {});
    const s = await serve('AlwaysAllow');
    try {
      const r = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar({ verb: 'delete', resource: 'nodes' }));
      assert.equal(r.body.status.allowed, true);
      const rules = await s.call(alice, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'default' } });
      assert.deepEqual(rules.body.status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
    } finally {
      await s.close();
    }
  });
});


describe('review APIs and Accept negotiation', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  const tableOnly = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
  const notAcceptableStatus = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    reason: 'NotAcceptable',
    code: 406,
  };

  it('refuses a Table-only request with 406 NotAcceptable, as kube-apiserver for kinds without tables', async () => {
    const r = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar({ verb: 'get', resource: 'pods' }), tableOnly);
    assert.equal(r.status, 406);
    assert.deepEqual(r.body, notAcceptableStatus);
  });

  it('negotiates before reading the body', async () => {
    const r = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', '{not json', tableOnly);
    assert.equal(r.status, 406);
  });

  it('refuses Tables for every review kind', async () => {
    for (const path of [
      '/apis/authentication.k8s.io/v1/tokenreviews',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
    ]) {
      const r = await t.request('POST', path, {}, { Accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' });
      assert.equal(r.status, 406, path);
      assert.equal(r.body.reason, 'NotAcceptable', path);
    }
  });

  it('falls back to the next acceptable clause, as kubectl asks', async () => {
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    const r = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar({ verb: 'get', resource: 'pods' }), { Accept: accept });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.kind, 'SelfSubjectAccessReview');
    assert.equal(r.body.status.allowed, true);
  });

  it('answers PartialObjectMetadata when asked for it', async () => {
    const r = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ssar({ verb: 'get', resource: 'pods' }), {
      Accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { creationTimestamp: null } });
  });
});
