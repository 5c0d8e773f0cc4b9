import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateMedia } from './protobuf/negotiate.js';
import { startTestServer, type TestServer } from './test-server.js';

const tableOnly = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const message = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

describe('endpoints without a table convertor', () => {
  it('skip the Table clauses of an Accept header', () => {
    const noTable = { protobuf: true, noTable: true };
    assert.equal(negotiateMedia('application/json;as=Table;v=v1;g=meta.k8s.io', noTable), undefined);
    assert.deepEqual(negotiateMedia('application/json;as=Table;v=v1;g=meta.k8s.io, application/json', noTable), { rendering: 'object', encoding: 'json' });
    assert.deepEqual(
      negotiateMedia('application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json; as = Table ;g=meta.k8s.io;v=v1', noTable),
      { rendering: 'metadata', encoding: 'json' },
    );
  });

  describe('on the server', () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer();
      await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } });
      const pod = await t.request('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
      assert.equal(pod.status, 201, pod.text);
    });
    after(() => t.close());

    it('refuse Table-only requests with 406: bindings, evictions, token requests, logs', async () => {
      const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n1' } };
      const cases: [string, string, unknown][] = [
        ['POST', '/api/v1/namespaces/default/pods/p/binding', binding],
        ['POST', '/api/v1/namespaces/default/bindings', binding],
        ['POST', '/api/v1/namespaces/default/pods/p/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' } }],
        ['POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }],
        ['GET', '/api/v1/namespaces/default/pods/p/log', undefined],
      ];
      for (const [method, path, body] of cases) {
        const r = await t.request(method, path, body, tableOnly);
        assert.equal(r.status, 406, `${method} ${path}: ${r.text}`);
        assert.equal(r.body.reason, 'NotAcceptable');
        assert.equal(r.body.message, message);
      }
      // Nothing happened: the pod is neither bound nor evicted.
      const pod = await t.request('GET', '/api/v1/namespaces/default/pods/p');
      assert.equal(pod.status, 200);
      assert.equal(pod.body.spec.nodeName, undefined);
    });

    it('serve them when another clause is acceptable', async () => {
      const r = await t.request('POST', '/api/v1/namespaces/default/pods/p/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n1' } }, {
        Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json',
      });
      assert.equal(r.status, 201, r.text);
    });

    it('leave the endpoints with tables alone: pods/status renders a Table', async () => {
      const r = await t.request('GET', '/api/v1/namespaces/default/pods/p/status', undefined, tableOnly);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.kind, 'Table');
    });
  });
});

describe('renderings of write responses', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });
  const table = 'application/json;as=Table;g=meta.k8s.io;v=v1';
  const meta = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

  it('answers create, update and patch in the rendering asked for, as get (transformResponseObject)', async () => {
    const cms = '/api/v1/namespaces/default/configmaps';
    const created = await t.request('POST', cms, { metadata: { name: 'tbl' }, data: { a: 'b' } }, { Accept: table });
    assert.equal(created.status, 201);
    assert.equal(created.body.kind, 'Table');
    assert.deepEqual(created.body.rows.map((r: { cells: unknown[] }) => r.cells[0]), ['tbl']);
    const patched = await t.request('PATCH', `${cms}/tbl`, { data: { c: 'd' } }, { Accept: meta });
    assert.equal(patched.body.kind, 'PartialObjectMetadata');
    assert.equal(patched.body.metadata.name, 'tbl');
    assert.equal(patched.body.data, undefined);
    const updated = await t.request('PUT', `${cms}/tbl`, { metadata: { name: 'tbl' }, data: { e: 'f' } }, { Accept: table });
    assert.equal(updated.body.kind, 'Table');
    // A delete answers its Status whatever the rendering.
    assert.equal((await t.request('DELETE', `${cms}/tbl`, undefined, { Accept: table })).body.kind, 'Status');
  });
});
