import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';
import { duplicateKeys } from './field-validation.js';

const deploys = '/apis/apps/v1/namespaces/default/deployments';
const deployment = (name: string, extraSpec: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...extraSpec },
});

describe('duplicateKeys', () => {
  it('reports keys repeated in one object with their paths, in document order', () => {
    assert.deepEqual(duplicateKeys('{"a":1,"b":{"c":[{"d":1,"d":2}],"c":3},"a":"x\\"y"}'), [['b', 'c', 0, 'd'], ['b', 'c'], ['a']]);
    assert.deepEqual(duplicateKeys('{"a":[1,2,{"b":{}}]}'), []);
  });
});

describe('field validation and managedFields on writes', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('refuses unknown and duplicate fields with fieldValidation=Strict', async () => {
    const body = JSON.stringify(deployment('strict', { foo: 1 })).replace('"replicas":1', '"replicas":1,"replicas":2').replace('"image":"nginx"', '"image":"nginx","bar":true');
    const res = await t.request('POST', `${deploys}?fieldValidation=Strict`, body);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.reason, 'BadRequest');
    assert.equal(res.body.message, 'strict decoding error: unknown field "spec.template.spec.containers[0].bar", unknown field "spec.foo", duplicate field "spec.replicas"');
  });

  it('warns about unknown fields by default and drops them', async () => {
    const res = await t.request('POST', deploys, deployment('warn', { foo: 1 }));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.warning, '299 - "unknown field \\"spec.foo\\""');
    assert.equal(res.body.spec.foo, undefined);
  });

  it('ignores unknown fields silently with fieldValidation=Ignore', async () => {
    const res = await t.request('POST', `${deploys}?fieldValidation=Ignore`, deployment('ignore', { foo: 1 }));
    assert.equal(res.status, 201);
    assert.equal(res.headers.warning, undefined);
    assert.equal(res.body.spec.foo, undefined);
  });

  it('rejects an unsupported fieldValidation value', async () => {
    const res = await t.request('POST', `${deploys}?fieldValidation=Loud`, deployment('loud'));
    assert.equal(res.status, 400);
  });

  it('checks the patched object of a strategic merge patch', async () => {
    const res = await t.request('PATCH', `${deploys}/warn?fieldValidation=Strict`, { spec: { template: { spec: { containers: [{ name: 'c', imagee: 'x' }] } } } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'strict decoding error: unknown field "spec.template.spec.containers[0].imagee"');
  });

  it('records managedFields for the creating and the patching manager', async () => {
    const created = await t.request('POST', `${deploys}?fieldManager=creator`, deployment('owned'));
    const entry = created.body.metadata.managedFields[0];
    assert.equal(entry.manager, 'creator');
    assert.equal(entry.operation, 'Update');
    assert.ok(entry.fieldsV1['f:spec']['f:replicas']);
    assert.ok(entry.fieldsV1['f:spec']['f:strategy'], 'defaulted fields are owned by the creator');
    const patched = await t.request('PATCH', `${deploys}/owned`, { spec: { replicas: 4 } }, { 'Content-Type': 'application/merge-patch+json', 'User-Agent': 'scaler/v1.0 (linux)' });
    const mf = patched.body.metadata.managedFields;
    assert.deepEqual(mf.map((e: any) => e.manager), ['creator', 'scaler']);
    assert.equal(mf[0].fieldsV1['f:spec']['f:replicas'], undefined);
    assert.deepEqual(mf[1].fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  });

  it('server-side apply conflicts with another manager unless forced', async () => {
    const apply = (body: object, q: string) => t.request('PATCH', `${deploys}/owned?${q}`, JSON.stringify(body), { 'Content-Type': 'application/apply-patch+yaml' });
    const cfg = { ...deployment('owned'), spec: { ...deployment('owned').spec, replicas: 7 } };
    const res = await apply(cfg, 'fieldManager=applier');
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.message, 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas');
    assert.equal(res.body.details.causes[0].field, '.spec.replicas');
    const forced = await apply(cfg, 'fieldManager=applier&force=true');
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.body.spec.replicas, 7);
    const managers = forced.body.metadata.managedFields.map((e: any) => `${e.manager}/${e.operation}`);
    assert.ok(managers.includes('applier/Apply'));
    assert.ok(!managers.includes('scaler/Update'), 'the forced apply took the only field scaler owned');
  });

  it('server-side apply creates a missing object and refuses undeclared fields', async () => {
    const res = await t.request('PATCH', `${deploys}/fresh?fieldManager=applier`, JSON.stringify(deployment('fresh')), { 'Content-Type': 'application/apply-patch+yaml' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.metadata.managedFields[0].operation, 'Apply');
    const bad = await t.request('PATCH', `${deploys}/fresh?fieldManager=applier`, JSON.stringify(deployment('fresh', { foo: 1 })), { 'Content-Type': 'application/apply-patch+yaml' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'failed to create typed patch object (apps/v1, Kind=Deployment): .spec.foo: field not declared in schema');
  });
});
