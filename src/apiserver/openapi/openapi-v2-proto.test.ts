import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { float64, readFields, toInt64, type WireField } from '../protobuf/wire.js';
import { goStringCompare } from './go-yaml.js';
import { builtinSwagger } from './openapi-data.js';
import { encodeOpenApiV2Proto } from './openapi-v2-proto.js';

// A small reader over the wire fields, independent of the encoder: field
// numbers are spelled out from OpenAPIv2.proto in each check.
class Msg {
  readonly fields: WireField[];
  constructor(buf: Uint8Array) {
    this.fields = readFields(buf);
  }
  all(no: number): WireField[] {
    return this.fields.filter((f) => f.no === no);
  }
  has(no: number): boolean {
    return this.all(no).length > 0;
  }
  private one(no: number): WireField {
    const f = this.all(no);
    assert.equal(f.length, 1, `field ${no} once`);
    return f[0]!;
  }
  str(no: number): string {
    const f = this.all(no);
    return f.length ? Buffer.from(f[0]!.v as Uint8Array).toString('utf8') : '';
  }
  strs(no: number): string[] {
    return this.all(no).map((f) => Buffer.from(f.v as Uint8Array).toString('utf8'));
  }
  msg(no: number): Msg {
    return new Msg(this.one(no).v as Uint8Array);
  }
  msgs(no: number): Msg[] {
    return this.all(no).map((f) => new Msg(f.v as Uint8Array));
  }
  varint(no: number): number {
    const f = this.one(no);
    assert.equal(f.wt, 0);
    return toInt64(f.v as { lo: number; hi: number });
  }
  double(no: number): number {
    return float64(this.one(no).v as Uint8Array);
  }
  /** A repeated Named* field (name = 1, value = 2) as [name, value] pairs in wire order. */
  named(no: number): [string, Msg][] {
    return this.msgs(no).map((e) => [e.str(1), e.has(2) ? e.msg(2) : new Msg(new Uint8Array())]);
  }
  entry(no: number, name: string): Msg {
    const e = this.named(no).find(([n]) => n === name);
    assert.ok(e, `entry ${name}`);
    return e[1];
  }
  /** The `yaml` of a NamedAny's Any. */
  ext(no: number, name: string): string {
    return this.entry(no, name).str(2);
  }
}

const doc = new Msg(encodeOpenApiV2Proto(builtinSwagger()));
const definitions = doc.msg(9).named(1);
const definition = (name: string): Msg => doc.msg(9).entry(1, name);
const pathItem = (p: string): Msg => doc.msg(8).entry(2, p);

describe('the protobuf OpenAPI v2 document of the built-in API', () => {
  it('has swagger 2.0, the info and the security definitions', () => {
    assert.equal(doc.str(1), '2.0');
    assert.equal(doc.msg(2).str(1), 'Kubernetes'); // info.title
    assert.match(doc.msg(2).str(2), /^v1\.\d+/); // info.version
    const bearer = doc.msg(13).entry(1, 'BearerToken'); // securityDefinitions
    const apiKey = bearer.msg(2); // SecurityDefinitionsItem.api_key_security
    assert.deepEqual([apiKey.str(1), apiKey.str(2), apiKey.str(3)], ['apiKey', 'authorization', 'header']);
    const security = doc.msgs(12); // [{BearerToken: []}]
    assert.deepEqual(security.map((s) => s.named(1).map(([n, v]) => [n, v.strs(1)])), [[['BearerToken', []]]]);
  });

  it('has every definition once, in Go sorted order', () => {
    const names = definitions.map(([n]) => n);
    assert.equal(names.length, Object.keys(builtinSwagger().definitions).length);
    assert.deepEqual(names, [...names].sort(goStringCompare));
  });

  it('has Pod with its properties, type and group-version-kind extension', () => {
    const pod = definition('io.k8s.api.core.v1.Pod');
    assert.match(pod.str(4), /^Pod is a collection of containers/); // description
    assert.deepEqual(pod.msg(22).strs(1), ['object']); // type
    const props = pod.msg(25).named(1);
    assert.deepEqual(props.map(([n]) => n), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    assert.equal(pod.msg(25).entry(1, 'spec').str(1), '#/definitions/io.k8s.api.core.v1.PodSpec'); // $ref
    assert.deepEqual(pod.msg(25).entry(1, 'kind').msg(22).strs(1), ['string']);
    assert.equal(pod.ext(31, 'x-kubernetes-group-version-kind'), '- group: ""\n  kind: Pod\n  version: v1\n');
  });

  it('has PodSpec containers with items, required and the patch extensions', () => {
    const spec = definition('io.k8s.api.core.v1.PodSpec');
    assert.ok(spec.strs(19).includes('containers')); // required
    const containers = spec.msg(25).entry(1, 'containers');
    assert.deepEqual(containers.msg(22).strs(1), ['array']);
    const items = containers.msg(23).msgs(1); // ItemsItem.schema
    assert.equal(items.length, 1);
    assert.equal(items[0]!.str(1), '#/definitions/io.k8s.api.core.v1.Container');
    assert.equal(containers.ext(31, 'x-kubernetes-patch-merge-key'), 'name\n');
    assert.equal(containers.ext(31, 'x-kubernetes-patch-strategy'), 'merge\n');
  });

  it('has a pod path with its operations, parameters and responses', () => {
    const item = pathItem('/api/v1/namespaces/{namespace}/pods/{name}');
    const [name, namespace, pretty] = item.msgs(9).map((p) => p.msg(1).msg(2)); // ParametersItem.parameter.non_body_parameter
    const nameParam = name!.msg(4); // path_parameter_sub_schema
    assert.deepEqual([nameParam.varint(1), nameParam.str(2), nameParam.str(4), nameParam.str(5)], [1, 'path', 'name', 'string']);
    assert.equal(namespace!.msg(4).str(4), 'namespace');
    assert.equal(pretty!.msg(3).str(4), 'pretty'); // query_parameter_sub_schema

    const get = item.msg(2);
    assert.equal(get.str(5), 'readCoreV1NamespacedPod'); // operationId
    assert.deepEqual(get.strs(1), ['core_v1']); // tags
    assert.deepEqual(get.strs(10), ['https']); // schemes
    const codes = get.msg(9).named(1); // responses.response_code
    assert.deepEqual(codes.map(([c]) => c), ['200', '401']);
    const ok = codes[0]![1].msg(1); // ResponseValue.response
    assert.equal(ok.str(1), 'OK');
    assert.equal(ok.msg(2).msg(1).str(1), '#/definitions/io.k8s.api.core.v1.Pod'); // SchemaItem.schema.$ref
    assert.equal(get.ext(13, 'x-kubernetes-action'), 'get\n');
    assert.equal(get.ext(13, 'x-kubernetes-group-version-kind'), 'group: ""\nkind: Pod\nversion: v1\n');

    const body = item.msg(3).msgs(8).map((p) => p.msg(1)).find((p) => p.has(1))!.msg(1); // put: the body_parameter
    assert.deepEqual([body.str(2), body.str(3), body.varint(4)], ['body', 'body', 1]);
    assert.equal(body.msg(5).str(1), '#/definitions/io.k8s.api.core.v1.Pod');
    const patch = item.msg(8);
    assert.ok(patch.msgs(8).some((p) => p.msg(1).has(2) && p.msg(1).msg(2).msg(3).str(4) === 'fieldValidation'));
  });

  it('lists the paths in Go sorted order', () => {
    const names = doc.msg(8).named(2).map(([n]) => n);
    assert.equal(names.length, Object.keys(builtinSwagger().paths).length);
    assert.deepEqual(names, [...names].sort(goStringCompare));
  });
});

describe('encodeOpenApiV2Proto', () => {
  const reverse = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(reverse) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reverse(x)])) : v;
  const small = {
    swagger: '2.0',
    info: { title: 't', version: 'v' },
    paths: {
      '/x/{name}': {
        parameters: [{ $ref: '#/parameters/pretty' }],
        post: {
          parameters: [
            { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/A' } },
            { name: 'h', in: 'header', type: 'string' },
            { name: 'f', in: 'formData', type: 'file' },
          ],
          responses: { '201': { description: 'file', schema: { type: 'file' } }, '200': { $ref: '#/responses/ok' } },
        },
      },
      'x-paths': 1,
    },
    definitions: {
      B: { type: 'object', additionalProperties: false, maximum: 2.5, minLength: 3, maxLength: -1, enum: ['a', 1], default: { z: 1, a: [] } },
      A: { type: ['string', 'null'], additionalProperties: { type: 'string' }, items: { type: 'integer' }, 'x-b': 'two', 'x-a': true, properties: {} },
    },
  };
  const encoded = encodeOpenApiV2Proto(small);

  it('does not depend on the key order of the JSON', () => {
    assert.deepEqual(encodeOpenApiV2Proto(reverse(small) as Record<string, unknown>), encoded);
  });

  it('resolves oneofs as gnostic does', () => {
    const m = new Msg(encoded);
    const item = m.msg(8).entry(2, '/x/{name}');
    assert.equal(item.msgs(9)[0]!.msg(2).str(1), '#/parameters/pretty'); // ParametersItem.json_reference
    const [body, header, form] = item.msg(4).msgs(8).map((p) => p.msg(1));
    assert.equal(body!.msg(1).str(2), 'body'); // Parameter.body_parameter
    assert.equal(header!.msg(2).msg(1).str(4), 'h'); // non_body.header_parameter_sub_schema
    assert.equal(form!.msg(2).msg(2).str(6), 'file'); // non_body.form_data_parameter_sub_schema.type
    const codes = item.msg(4).msg(9).named(1);
    assert.deepEqual(codes.map(([c]) => c), ['200', '201']);
    assert.equal(codes[0]![1].msg(2).str(1), '#/responses/ok'); // ResponseValue.json_reference
    assert.equal(codes[1]![1].msg(1).msg(2).msg(2).str(6), 'file'); // Response.schema -> SchemaItem.file_schema.type
    assert.equal(m.msg(8).ext(1, 'x-paths'), '1\n');
  });

  it('writes schema fields: false kept in a oneof, zero and empty values dropped, an empty object kept', () => {
    const m = new Msg(encoded);
    assert.deepEqual(m.msg(9).named(1).map(([n]) => n), ['A', 'B']);
    const a = m.msg(9).entry(1, 'A');
    assert.deepEqual(a.msg(22).strs(1), ['string', 'null']);
    assert.deepEqual(a.msg(21).msg(1).msg(22).strs(1), ['string']); // additionalProperties schema
    assert.deepEqual(a.msg(23).msgs(1)[0]!.msg(22).strs(1), ['integer']);
    assert.equal(a.msg(25).fields.length, 0); // properties: {} is present and empty
    assert.deepEqual(a.named(31).map(([n, v]) => [n, v.str(2)]), [['x-a', 'true\n'], ['x-b', 'two\n']]);
    const b = m.msg(9).entry(1, 'B');
    assert.deepEqual(b.all(21).map((f) => [...(f.v as Uint8Array)]), [[0x10, 0x00]]); // AdditionalPropertiesItem.boolean = false
    assert.equal(b.double(7), 2.5);
    assert.equal(b.varint(12), 3);
    assert.equal(b.varint(11), -1);
    assert.deepEqual(b.msgs(20).map((e) => e.str(2)), ['a\n', '1\n']);
    assert.equal(b.msg(5).str(2), 'a: []\nz: 1\n');
    assert.equal(b.has(9), false); // minimum absent
  });
});
