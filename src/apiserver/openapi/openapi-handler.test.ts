import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenApiHandler, negotiateOpenApiV2, openApiV2ProtobufType } from './openapi-handler.js';
import { builtinSwagger, withLazyPaths, type SwaggerDocument } from './openapi-data.js';
import { readFields } from '../protobuf/wire.js';

/** kubectl's (client-go's) Accept for the protobuf OpenAPI v2 document. */
const kubectlAccept = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

describe('the built-in OpenAPI v2 document', () => {
  it('has batch/v1 CronJob with timeZone and its paths', () => {
    const doc = builtinSwagger();
    const cj = doc.definitions['io.k8s.api.batch.v1.CronJob'] as any;
    assert.deepEqual(cj['x-kubernetes-group-version-kind'], [{ group: 'batch', kind: 'CronJob', version: 'v1' }]);
    assert.equal((doc.definitions['io.k8s.api.batch.v1.CronJobSpec'] as any).properties.jobTemplate.$ref, '#/definitions/io.k8s.api.batch.v1.JobTemplateSpec');
    assert.equal((doc.definitions['io.k8s.api.batch.v1.CronJobSpec'] as any).properties.timeZone.type, 'string');
    const patch = (doc.paths['/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}'] as any).patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'batch', kind: 'CronJob', version: 'v1' });
    assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation'));
  });

  it('has the GA kinds and the newer fields the controllers use', () => {
    const d = builtinSwagger().definitions as any;
    for (const n of ['io.k8s.api.discovery.v1.EndpointSlice', 'io.k8s.api.policy.v1.PodDisruptionBudget', 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler', 'io.k8s.api.events.v1.Event', 'io.k8s.api.node.v1.RuntimeClass']) assert.ok(d[n], n);
    assert.ok(d['io.k8s.api.discovery.v1.Endpoint'].properties.hints);
    assert.ok(d['io.k8s.api.policy.v1.PodDisruptionBudgetSpec'].properties.unhealthyPodEvictionPolicy);
    assert.ok(d['io.k8s.api.batch.v1.JobSpec'].properties.podFailurePolicy);
    assert.ok(d['io.k8s.api.batch.v1.JobStatus'].properties.uncountedTerminatedPods);
    assert.ok(d['io.k8s.api.apps.v1.StatefulSetSpec'].properties.persistentVolumeClaimRetentionPolicy);
    assert.ok(d['io.k8s.api.core.v1.PodSpec'].properties.schedulingGates);
    assert.ok(d['io.k8s.api.core.v1.Container'].properties.restartPolicy);
    assert.ok(d['io.k8s.api.apps.v1.RollingUpdateDaemonSet'].properties.maxSurge);
  });
});

describe('withLazyPaths', () => {
  it('reads the paths once, on first use, and serialises them where they stood', () => {
    let loads = 0;
    const doc = withLazyPaths({ definitions: { D: {} }, info: {}, paths: null, swagger: '2.0' } as unknown as SwaggerDocument, () => {
      loads++;
      return { '/api': {} };
    });
    assert.equal(doc.definitions.D !== undefined, true);
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(doc)) as SwaggerDocument;
    assert.equal(loads, 0, 'neither reading definitions nor copying descriptors reads the paths');
    assert.equal(JSON.stringify(doc), '{"definitions":{"D":{}},"info":{},"paths":{"/api":{}},"swagger":"2.0"}');
    assert.deepEqual(copy.paths, { '/api': {} });
    assert.equal(loads, 1);
  });
});

describe('the OpenAPI handler', () => {
  let server: Server;
  let base = '';
  const handler = createOpenApiHandler();
  before(async () => {
    server = createServer((req, res) => {
      if (!handler(req, res)) {
        res.statusCode = 404;
        res.end('not mine');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('leaves other paths to the router', async () => {
    const r = await fetch(`${base}/api/v1`);
    assert.equal(await r.text(), 'not mine');
  });

  it('serves JSON to a JSON Accept, with an ETag that 304s', async () => {
    const r = await fetch(`${base}/openapi/v2`, { headers: { accept: 'application/json' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json');
    const doc = (await r.json()) as any;
    assert.equal(doc.swagger, '2.0');
    const etag = r.headers.get('etag')!;
    const again = await fetch(`${base}/openapi/v2`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });

  it('serves protobuf to kubectl, with the JSON ETag, 304 and gzip', async () => {
    const r = await fetch(`${base}/openapi/v2`, { headers: { accept: kubectlAccept, 'accept-encoding': 'gzip' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), openApiV2ProtobufType);
    assert.equal(r.headers.get('content-encoding'), 'gzip');
    assert.match(r.headers.get('vary')!, /Accept/);
    const body = new Uint8Array(await r.arrayBuffer()); // fetch has gunzipped it
    const swagger = readFields(body).find((f) => f.no === 1)!;
    assert.equal(Buffer.from(swagger.v as Uint8Array).toString(), '2.0');
    const json = await fetch(`${base}/openapi/v2`);
    assert.equal(r.headers.get('etag'), json.headers.get('etag'), 'kube-openapi reuses the JSON ETag');
    await json.body?.cancel();
    const again = await fetch(`${base}/openapi/v2`, { headers: { accept: kubectlAccept, 'if-none-match': r.headers.get('etag')! } });
    assert.equal(again.status, 304);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
  });

  it('answers 406 when the Accept names nothing it serves', async () => {
    const r = await fetch(`${base}/openapi/v2`, { headers: { accept: 'text/html' } });
    assert.equal(r.status, 406);
    await r.body?.cancel();
  });

  it('serves a v3 index whose URLs lead to documents with resolvable refs', async () => {
    const idx = (await (await fetch(`${base}/openapi/v3`)).json()) as any;
    const entry = idx.paths['apis/batch/v1'];
    assert.match(entry.serverRelativeURL, /^\/openapi\/v3\/apis\/batch\/v1\?hash=[0-9A-F]+$/);
    assert.ok(idx.paths['api/v1']);
    const r = await fetch(base + entry.serverRelativeURL);
    assert.equal(r.headers.get('cache-control'), 'public, immutable');
    const doc = (await r.json()) as any;
    assert.equal(doc.openapi, '3.0.0');
    const schemas = doc.components.schemas;
    // Every $ref resolves inside the document.
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) k === '$ref' ? refs.push(x as string) : walk(x);
    };
    walk(doc);
    assert.ok(refs.length > 10);
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\//);
      assert.ok(schemas[ref.slice('#/components/schemas/'.length)], ref);
    }
    assert.equal(schemas['io.k8s.api.batch.v1.CronJobSpec'].properties.timeZone.type, 'string');
    const patch = doc.paths['/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}'].patch;
    assert.ok(patch.requestBody.content['application/strategic-merge-patch+json']);
    assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query'));
  });

  it('redirects a stale hash and 404s an unknown group-version', async () => {
    const r = await fetch(`${base}/openapi/v3/apis/apps/v1?hash=STALE`, { redirect: 'manual' });
    assert.equal(r.status, 301);
    assert.match(r.headers.get('location')!, /hash=[0-9A-F]+/);
    const nf = await fetch(`${base}/openapi/v3/apis/nope.io/v1`);
    assert.equal(nf.status, 404);
  });

  it('includes extra schemas and rebuilds after invalidate, in both representations', async () => {
    let extra: any;
    const h = createOpenApiHandler({ extraSchemas: () => extra });
    const s = createServer((req, res) => void h(req, res));
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/openapi/v2`;
    try {
      const definitionNames = async (): Promise<string[]> => {
        const body = new Uint8Array(await (await fetch(url, { headers: { accept: kubectlAccept } })).arrayBuffer());
        const definitions = readFields(body).find((f) => f.no === 9)!;
        return readFields(definitions.v as Uint8Array).map((e) => Buffer.from(readFields(e.v as Uint8Array)[0]!.v as Uint8Array).toString());
      };
      assert.equal(h.swagger().definitions['io.example.v1.Foo'], undefined);
      assert.ok(!(await definitionNames()).includes('io.example.v1.Foo'));
      extra = { definitions: { 'io.example.v1.Foo': { type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'example.io', version: 'v1', kind: 'Foo' }] } }, paths: {} };
      h.invalidate();
      assert.ok(h.swagger().definitions['io.example.v1.Foo']);
      const names = await definitionNames();
      assert.ok(names.includes('io.example.v1.Foo'));
      assert.ok(names.indexOf('io.example.v1.Foo') < names.indexOf('io.k8s.api.apps.v1.DaemonSet'), 'a custom resource definition sorts among the built-in ones');
    } finally {
      await new Promise<void>((r) => s.close(() => r()));
    }
  });
});

describe('negotiateOpenApiV2', () => {
  it('picks what kube-openapi picks', () => {
    assert.equal(negotiateOpenApiV2(undefined), 'json');
    assert.equal(negotiateOpenApiV2(''), 'json');
    assert.equal(negotiateOpenApiV2('*/*'), 'json');
    assert.equal(negotiateOpenApiV2('application/*'), 'json');
    assert.equal(negotiateOpenApiV2('application/json'), 'json');
    assert.equal(negotiateOpenApiV2(kubectlAccept), 'protobuf');
    assert.equal(negotiateOpenApiV2('application/com.github.proto-openapi.spec.v2.v1.0+protobuf'), 'protobuf');
    assert.equal(negotiateOpenApiV2(`${kubectlAccept}, application/json`), 'protobuf', 'header order among equal q');
    assert.equal(negotiateOpenApiV2(`application/json, ${kubectlAccept}`), 'json');
    assert.equal(negotiateOpenApiV2(`application/json;q=0.5, ${kubectlAccept}`), 'protobuf');
    assert.equal(negotiateOpenApiV2(`${kubectlAccept};q=0.9, application/json`), 'json');
    assert.equal(negotiateOpenApiV2(`*/*, ${kubectlAccept}`), 'protobuf', 'a specific type goes before a wildcard');
    assert.equal(negotiateOpenApiV2('application/json;q=0'), 'json', 'goautoneg keeps q=0 clauses');
    assert.equal(negotiateOpenApiV2('text/html, application/xml'), undefined);
    assert.equal(negotiateOpenApiV2('application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=x'), 'protobuf');
  });
});
