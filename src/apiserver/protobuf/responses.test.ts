import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestServer, eventually, type TestServer } from '../test-server.js';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf, protobufMediaType } from './envelope.js';
import { decodeWatchEventFrame, protobufWatchMediaType, splitFrames } from './watch-event.js';

const pbFirst = `${protobufMediaType}, */*`;
const gcAccept = `${protobufMediaType};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json`;
const cms = '/api/v1/namespaces/default/configmaps';

interface Raw {
  status: number;
  type: string;
  body: Buffer;
}

function raw(t: TestServer, method: string, path: string, accept: string | undefined, body?: unknown): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {};
    if (accept !== undefined) headers.Accept = accept;
    if (data !== undefined) headers['Content-Type'] = 'application/json';
    const req = http.request(t.base + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

/** A protobuf watch: frames decoded as they arrive. */
function watchProto(t: TestServer, path: string, accept: string) {
  const events: { type: string; object: any }[] = [];
  let contentType = '';
  let buf: Buffer = Buffer.alloc(0);
  const req = http.request(t.base + path, { headers: { Accept: accept } }, (res) => {
    contentType = String(res.headers['content-type']);
    res.on('data', (c: Buffer) => {
      const { frames, rest } = splitFrames(Buffer.concat([buf, c]));
      for (const f of frames) events.push(decodeWatchEventFrame(f));
      buf = Buffer.from(rest);
    });
    res.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  req.end();
  return { events, contentType: () => contentType, close: () => req.destroy() };
}

describe('protobuf responses', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' } });
    await t.request('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, binaryData: { bin: 'AP8=' } });
  });
  after(async () => {
    await t.close();
  });

  it('answers GET in protobuf with exactly the bytes of the JSON answer encoded', async () => {
    const json = await t.request('GET', `${cms}/a`);
    const r = await raw(t, 'GET', `${cms}/a`, pbFirst);
    assert.equal(r.status, 200);
    assert.equal(r.type, protobufMediaType);
    assert.equal(r.body.toString('hex'), Buffer.from(encodeKubernetesProtobuf(json.body)!).toString('hex'));
    assert.equal(decodeKubernetesProtobuf(r.body).metadata && (decodeKubernetesProtobuf(r.body).metadata as any).name, 'a');
  });

  it('answers LIST with the <Kind>List message, and JSON to clients that prefer it', async () => {
    const json = await t.request('GET', cms);
    const r = await raw(t, 'GET', cms, pbFirst);
    assert.equal(r.type, protobufMediaType);
    assert.equal(r.body.toString('hex'), Buffer.from(encodeKubernetesProtobuf(json.body)!).toString('hex'));
    const list = decodeKubernetesProtobuf(r.body) as any;
    assert.equal(list.kind, 'ConfigMapList');
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['a', 'b']);
    assert.equal((await raw(t, 'GET', cms, `application/json, ${protobufMediaType}`)).type, 'application/json');
    assert.equal((await raw(t, 'GET', cms, undefined)).type, 'application/json');
  });

  it('answers metadata-only lists and gets (the garbage collector) in protobuf', async () => {
    const r = await raw(t, 'GET', cms, gcAccept);
    assert.equal(r.type, protobufMediaType);
    const list = decodeKubernetesProtobuf(r.body) as any;
    assert.equal(list.apiVersion, 'meta.k8s.io/v1');
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['a', 'b']);
    assert.equal(list.items[0].data, undefined);
  });

  it('keeps Tables in JSON when protobuf comes first', async () => {
    const r = await raw(t, 'GET', cms, `${protobufMediaType};as=Table;g=meta.k8s.io;v=v1,application/json;as=Table;g=meta.k8s.io;v=v1,application/json`);
    assert.equal(r.type, 'application/json');
    assert.equal(JSON.parse(r.body.toString()).kind, 'Table');
  });

  it('answers create, update, patch and delete in protobuf', async () => {
    const c = await raw(t, 'POST', cms, pbFirst, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    assert.equal(c.status, 201);
    assert.equal(c.type, protobufMediaType);
    const created = decodeKubernetesProtobuf(c.body) as any;
    assert.equal(created.metadata.name, 'c');
    const u = await raw(t, 'PUT', `${cms}/c`, pbFirst, { ...created, data: { u: '1' } });
    assert.equal(u.status, 200);
    assert.deepEqual((decodeKubernetesProtobuf(u.body) as any).data, { u: '1' });
    const d = await raw(t, 'DELETE', `${cms}/c`, pbFirst);
    assert.equal(d.status, 200);
    assert.equal(d.type, protobufMediaType);
    const st = decodeKubernetesProtobuf(d.body) as any;
    assert.deepEqual([st.kind, st.status], ['Status', 'Success']);
  });

  it('answers errors with a protobuf Status to protobuf clients and JSON to others', async () => {
    const r = await raw(t, 'GET', `${cms}/nope`, pbFirst);
    assert.equal(r.status, 404);
    assert.equal(r.type, protobufMediaType);
    const st = decodeKubernetesProtobuf(r.body) as any;
    assert.deepEqual([st.apiVersion, st.kind, st.reason, st.code], ['v1', 'Status', 'NotFound', 404]);
    const j = await raw(t, 'GET', `${cms}/nope`, 'application/json');
    assert.equal(j.type, 'application/json');
  });

  it('refuses with 406 what it cannot send', async () => {
    const r = await raw(t, 'GET', `${cms}/a`, 'text/plain');
    assert.equal(r.status, 406);
    const st = JSON.parse(r.body.toString());
    assert.equal(st.reason, 'NotAcceptable');
    assert.match(st.message, /only the following media types are accepted/);
  });

  it('streams watch events as length-prefixed WatchEvent frames', async () => {
    const w = watchProto(t, `${cms}?watch=true&resourceVersion=0&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, `${protobufMediaType};stream=watch, */*`);
    try {
      await eventually(() => w.events.length >= 3);
      assert.equal(w.contentType(), protobufWatchMediaType);
      assert.deepEqual(w.events.slice(0, 2).map((e) => [e.type, e.object.kind, e.object.metadata.name]), [['ADDED', 'ConfigMap', 'a'], ['ADDED', 'ConfigMap', 'b']]);
      assert.equal(w.events[2]!.type, 'BOOKMARK');
      assert.equal(w.events[2]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
      await t.request('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' } });
      await eventually(() => w.events.length >= 4);
      assert.deepEqual([w.events[3]!.type, w.events[3]!.object.metadata.name], ['ADDED', 'w']);
      await t.request('DELETE', `${cms}/w`);
      await eventually(() => w.events.length >= 5);
      assert.equal(w.events[4]!.type, 'DELETED');
    } finally {
      w.close();
    }
  });

  it('streams metadata-only watches as PartialObjectMetadata', async () => {
    const w = watchProto(t, `${cms}?watch=true&resourceVersion=0`, gcAccept);
    try {
      await eventually(() => w.events.length >= 2);
      assert.equal(w.contentType(), protobufWatchMediaType);
      assert.deepEqual(w.events.map((e) => [e.object.kind, e.object.metadata.name]), [['PartialObjectMetadata', 'a'], ['PartialObjectMetadata', 'b']]);
    } finally {
      w.close();
    }
  });

  it('sends a protobuf ERROR event for a compacted resourceVersion', async () => {
    const rv = (await t.request('GET', cms)).body.metadata.resourceVersion;
    await t.request('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gone' } });
    await t.storage.compact(t.storage.currentRevision());
    const w = watchProto(t, `${cms}?watch=true&resourceVersion=${rv}`, pbFirst);
    try {
      await eventually(() => w.events.length >= 1);
      assert.equal(w.events[0]!.type, 'ERROR');
      assert.deepEqual([w.events[0]!.object.kind, w.events[0]!.object.code, w.events[0]!.object.reason], ['Status', 410, 'Expired']);
    } finally {
      w.close();
    }
  });
});

describe('protobuf and custom resources', () => {
  let t: TestServer;
  const widgets = '/apis/example.com/v1/namespaces/default/widgets';
  before(async () => {
    t = await startTestServer();
    await t.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    await eventually(async () => (await t.request('POST', widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' } })).status === 201);
  });
  after(async () => {
    await t.close();
  });

  it('answers custom resources in JSON when the client also accepts */*, 406 when it takes protobuf only', async () => {
    const r = await raw(t, 'GET', `${widgets}/w1`, pbFirst);
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/json');
    const only = await raw(t, 'GET', `${widgets}/w1`, protobufMediaType);
    assert.equal(only.status, 406);
    // kube-apiserver encodes that Status in protobuf: its error path negotiates without the custom resource's restriction.
    assert.equal(only.type, protobufMediaType);
    assert.equal((decodeKubernetesProtobuf(only.body) as any).reason, 'NotAcceptable');
  });

  it('answers metadata-only lists of custom resources in protobuf', async () => {
    const r = await raw(t, 'GET', widgets, gcAccept);
    assert.equal(r.type, protobufMediaType);
    const list = decodeKubernetesProtobuf(r.body) as any;
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['w1']);
  });
});
