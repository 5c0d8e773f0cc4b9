import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, eventually, type TestServer } from '../test-server.js';
import type { Schema } from './schema.js';

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function crd(plural: string, kind: string, schema: Schema, scope = 'Namespaced') {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.serving.example.com` },
    spec: {
      group: 'serving.example.com',
      scope,
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}

const strictSchema: Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        bar: { type: 'string' },
        port: { 'x-kubernetes-int-or-string': true },
        maybe: { type: 'object', nullable: true, properties: { x: { type: 'string' } } },
        items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
      },
    },
  },
};

const rootPreserving: Schema = {
  type: 'object',
  description: 'preserve-unknown-properties at root',
  'x-kubernetes-preserve-unknown-fields': true,
  properties: { spec: { type: 'object', description: 'Specification', properties: { dummy: { type: 'object' } } } },
};

async function establish(s: TestServer, body: ReturnType<typeof crd>): Promise<void> {
  const res = await s.request('POST', crdPath, body);
  assert.equal(res.status, 201, res.text);
  await eventually(async () => {
    const r = await s.request('GET', `${crdPath}/${body.metadata.name}`);
    return !!r.body.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True');
  });
  // Served once discovery has the resource.
  await eventually(async () => (await s.request('GET', `/apis/serving.example.com/v1/${body.spec.names.plural}`)).status === 200);
}

describe('custom resources as kube-apiserver serves them', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await establish(s, crd('foos', 'Foo', strictSchema));
    await establish(s, crd('looses', 'Loose', rootPreserving));
    await establish(s, crd('defaulteds', 'Defaulted', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } }, 'Cluster'));
  });
  after(async () => s.close());

  describe('defaults from storage', () => {
    const base = '/apis/serving.example.com/v1/defaulteds';
    const patchSchema = async (ops: unknown[]) => {
      const res = await s.request('PATCH', `${crdPath}/defaulteds.serving.example.com`, ops, { 'Content-Type': 'application/json-patch+json' });
      assert.equal(res.status, 200, res.text);
    };

    it('shows a default added to the CRD later on get, list and watch, without a write', async () => {
      const created = await s.request('POST', base, { apiVersion: 'serving.example.com/v1', kind: 'Defaulted', metadata: { name: 'cr-1' } });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.a, undefined);
      await patchSchema([{ op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/a/default', value: 'A' }]);
      await eventually(async () => (await s.request('GET', `${base}/cr-1`)).body.a === 'A');
      const got = await s.request('GET', `${base}/cr-1`);
      assert.equal(got.body.metadata.resourceVersion, created.body.metadata.resourceVersion, 'nothing was written');
      const list = await s.request('GET', base);
      assert.equal(list.body.items.find((i: any) => i.metadata.name === 'cr-1').a, 'A');
      const w = await s.watch(`${base}?watch=true&resourceVersion=0`);
      const ev = await w.next();
      w.close();
      assert.equal(ev.type, 'ADDED');
      assert.equal(ev.object.a, 'A');
    });

    it('keeps a default stored at create when the CRD drops it, and applies the new one', async () => {
      const created = await s.request('POST', base, { apiVersion: 'serving.example.com/v1', kind: 'Defaulted', metadata: { name: 'cr-2' } });
      assert.equal(created.body.a, 'A', 'defaulted on create');
      await patchSchema([
        { op: 'remove', path: '/spec/versions/0/schema/openAPIV3Schema/properties/a/default' },
        { op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/b/default', value: 'B' },
      ]);
      await eventually(async () => (await s.request('GET', `${base}/cr-2`)).body.b === 'B');
      const got = (await s.request('GET', `${base}/cr-2`)).body;
      assert.equal(got.a, 'A');
      const first = (await s.request('GET', `${base}/cr-1`)).body;
      assert.equal(first.a, undefined, 'cr-1 never stored a');
      assert.equal(first.b, 'B');
    });

    it('sends watch events of later writes with the defaults applied', async () => {
      const list = await s.request('GET', base);
      const w = await s.watch(`${base}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
      const res = await s.request('PATCH', `${base}/cr-1`, { metadata: { labels: { x: 'y' } } }, { 'Content-Type': 'application/merge-patch+json' });
      assert.equal(res.status, 200, res.text);
      const ev = await w.next();
      w.close();
      assert.equal(ev.type, 'MODIFIED');
      assert.equal(ev.object.b, 'B');
    });
  });

  describe('OpenAPI', () => {
    it('publishes a version whose root preserves unknown fields as a bare object in v2, and whole in v3', async () => {
      const v2 = (await s.request('GET', '/openapi/v2')).body;
      assert.deepEqual(v2.definitions['com.example.serving.v1.Loose'], {
        type: 'object',
        'x-kubernetes-group-version-kind': [{ group: 'serving.example.com', version: 'v1', kind: 'Loose' }],
      });
      const v3 = (await s.request('GET', '/openapi/v3/apis/serving.example.com/v1')).body;
      const def = v3.components.schemas['com.example.serving.v1.Loose'];
      assert.equal(def['x-kubernetes-preserve-unknown-fields'], true);
      assert.equal(def.description, 'preserve-unknown-properties at root');
      assert.equal(def.properties.spec.description, 'Specification');
      assert.equal(def.properties.metadata.$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
      assert.equal(def.properties.apiVersion.type, 'string');
    });

    it('cuts nullable, preserving and int-or-string fields down for v2 and publishes them unfolded in v3', async () => {
      const v2 = (await s.request('GET', '/openapi/v2')).body.definitions['com.example.serving.v1.Foo'];
      const spec2 = v2.properties.spec.properties;
      assert.deepEqual(spec2.maybe, {}, 'nullable: no type, no properties');
      assert.deepEqual(spec2.free, { 'x-kubernetes-preserve-unknown-fields': true }, 'preserving object: no type, no properties');
      assert.deepEqual(spec2.port, { 'x-kubernetes-int-or-string': true }, 'no anyOf in swagger 2.0');
      assert.equal(v2.properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
      const v3 = (await s.request('GET', '/openapi/v3/apis/serving.example.com/v1')).body.components.schemas['com.example.serving.v1.Foo'];
      const spec3 = v3.properties.spec.properties;
      assert.deepEqual(spec3.maybe, { type: 'object', nullable: true, properties: { x: { type: 'string' } } });
      assert.deepEqual(spec3.port, { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
      assert.equal(spec3.free.properties.known.type, 'string');
    });
  });

  describe('field validation', () => {
    const foos = '/apis/serving.example.com/v1/namespaces/default/foos';
    const foo = (name: string, spec: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({ apiVersion: 'serving.example.com/v1', kind: 'Foo', metadata: { name, ...meta }, spec });

    it('refuses unknown fields with Strict in the words of kube-apiserver', async () => {
      const res = await s.request('POST', `${foos}?fieldValidation=Strict`, foo('f1', { bar: 'x', foo: 'y', maybe: { zz: 1 }, items: [{ name: 'a', extra: 1 }], free: { anything: 1 } }, { foo: 1 }));
      assert.equal(res.status, 400, res.text);
      assert.equal(
        res.body.message,
        'Foo in version "v1" cannot be handled as a Foo: strict decoding error: unknown field "spec.foo", unknown field "spec.items[0].extra", unknown field "spec.maybe.zz", unknown field "metadata.foo"',
      );
    });

    it('reports duplicate fields first', async () => {
      const body = JSON.stringify(foo('f1', { bar: 'x' })).replace('"bar":"x"', '"bar":"x","bar":"y","foo":1');
      const res = await s.request('POST', `${foos}?fieldValidation=Strict`, body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.message, 'Foo in version "v1" cannot be handled as a Foo: strict decoding error: duplicate field "spec.bar", unknown field "spec.foo"');
    });

    it('warns by default and prunes', async () => {
      const res = await s.request('POST', foos, foo('f1', { bar: 'x', foo: 'y' }));
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.warning, '299 - "unknown field \\"spec.foo\\""');
      assert.equal(res.body.spec.foo, undefined);
    });

    it('refuses a merge patch adding an unknown field as upstream\'s patch Invalid', async () => {
      const res = await s.request('PATCH', `${foos}/f1?fieldValidation=Strict`, { spec: { foo: 'y' } }, { 'Content-Type': 'application/merge-patch+json' });
      assert.equal(res.status, 422, res.text);
      assert.match(res.body.message, /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"serving.example.com\/v1\\",\\"kind\\":\\"Foo\\",\\"metadata\\":\{.*\\"spec\\":\{\\"bar\\":\\"x\\",\\"foo\\":\\"y\\"\}\}": strict decoding error: unknown field "spec.foo"$/);
      assert.equal(res.body.details.causes[0].field, 'patch');
    });

    it('refuses undeclared fields in a server-side apply', async () => {
      const res = await s.request('PATCH', `${foos}/f1?fieldManager=me&fieldValidation=Strict`, JSON.stringify(foo('f1', { bar: 'x', foo: 'y', free: { anything: 1 } })), { 'Content-Type': 'application/apply-patch+yaml' });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.message, 'failed to create typed patch object (serving.example.com/v1, Kind=Foo): .spec.foo: field not declared in schema');
    });

    it('accepts anything but unknown metadata under a root that preserves unknown fields', async () => {
      const looses = '/apis/serving.example.com/v1/namespaces/default/looses';
      const ok = await s.request('POST', `${looses}?fieldValidation=Strict`, { apiVersion: 'serving.example.com/v1', kind: 'Loose', metadata: { name: 'l1' }, a: { b: [{ c: 'd' }] } });
      assert.equal(ok.status, 201, ok.text);
      assert.deepEqual(ok.body.a, { b: [{ c: 'd' }] });
      const bad = await s.request('POST', `${looses}?fieldValidation=Strict`, { apiVersion: 'serving.example.com/v1', kind: 'Loose', metadata: { name: 'l2', bogus: 1 } });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.body.message, 'Loose in version "v1" cannot be handled as a Loose: strict decoding error: unknown field "metadata.bogus"');
    });
  });
});
