import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { newMatchConditionEngine } from './match-condition-engine.js';
import { startTestServer, type TestServer } from '../test-server.js';

const user = { username: 'alice', groups: ['dev', 'system:authenticated'], uid: 'u1', extra: {} };
const request = {
  uid: 'r1',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
  name: 'web',
  namespace: 'default',
  operation: 'CREATE',
  userInfo: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  dryRun: false,
};
const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { tier: 'frontend' } }, spec: { replicas: 3 } };

describe('matchConditions CEL engine', () => {
  const engine = newMatchConditionEngine();

  it('refuses expressions that do not compile or are not bool, in upstream words', () => {
    assert.deepEqual(engine.check('object.metadata.name == "x"'), undefined);
    assert.deepEqual(engine.check('request.nope == 1'), { type: 'Invalid', detail: "compilation failed: ERROR: <input>:1:8: undefined field 'nope'\n | request.nope == 1\n | .......^" });
    assert.deepEqual(engine.check('object.spec.replicas'), { type: 'Invalid', detail: 'must evaluate to bool but got dyn' });
    assert.equal(engine.check("authorizer.group('apps').resource('deployments').check('create').allowed()"), undefined);
  });

  it('matches when every condition is true, and skips on the first false one', async () => {
    const m = engine.compile([
      { name: 'is-create', expression: "request.operation == 'CREATE'" },
      { name: 'frontend', expression: "has(object.metadata.labels) && object.metadata.labels.tier == 'frontend'" },
      { name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" },
    ]);
    assert.deepEqual(await m.evaluate({ object, oldObject: null, request, user }), { matches: true });
    const other = { ...object, metadata: { name: 'web', labels: { tier: 'backend' } } };
    assert.deepEqual(await m.evaluate({ object: other, oldObject: null, request, user }), { matches: false });
  });

  it('reports evaluation errors unless a condition is false', async () => {
    const m = engine.compile([
      { name: 'missing', expression: 'object.spec.paused == true' },
      { name: 'true', expression: 'oldObject == null' },
    ]);
    assert.deepEqual(await m.evaluate({ object, oldObject: null, request, user }), { error: "expression 'object.spec.paused == true' resulted in error: no such key: paused" });
    const withFalse = engine.compile([
      { name: 'missing', expression: 'object.spec.paused == true' },
      { name: 'false', expression: 'oldObject != null' },
    ]);
    assert.deepEqual(await withFalse.evaluate({ object, oldObject: null, request, user }), { matches: false });
  });

  it('answers authorizer checks with the configured authorizer', async () => {
    const asked: unknown[] = [];
    const denying = newMatchConditionEngine((u, attrs) => {
      asked.push([u.username, attrs]);
      return { decision: 'deny', reason: 'no' };
    });
    const m = denying.compile([{ name: 'allowed', expression: "authorizer.requestResource.check('update').allowed()" }]);
    assert.deepEqual(await m.evaluate({ object, oldObject: null, request, user }), { matches: false });
    assert.deepEqual(asked, [['alice', { group: 'apps', resource: 'deployments', subresource: '', namespace: 'default', name: 'web', verb: 'update' }]]);
  });
});

describe('matchConditions in webhook configurations', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => s.close());

  it('refuses a configuration whose expression does not compile', async () => {
    const res = await s.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'cfg' },
      webhooks: [
        {
          name: 'hook.example.com',
          clientConfig: { url: 'https://hook.example.com/validate' },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          matchConditions: [{ name: 'bad', expression: 'object.metadata.name ==' }, { name: 'int', expression: '1 + 1' }],
        },
      ],
    });
    assert.equal(res.status, 422, res.text);
    const causes = res.body.details.causes as { field: string; message: string }[];
    const byField = Object.fromEntries(causes.map((c) => [c.field, c.message]));
    assert.match(byField['webhooks[0].matchConditions[0].expression']!, /^Invalid value: "object\.metadata\.name ==": compilation failed: ERROR: <input>:1:\d+: Syntax error: /);
    assert.equal(byField['webhooks[0].matchConditions[1].expression'], 'Invalid value: "1 + 1": must evaluate to bool but got int');
  });
});
