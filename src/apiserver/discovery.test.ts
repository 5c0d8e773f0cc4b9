import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestServer, type TestServer } from './test-server.js';
import { decodeKubernetesProtobuf, readEnvelope } from './protobuf/envelope.js';

/** A GET with the given headers, body as bytes. */
function get(t: TestServer, path: string, headers: Record<string, string>): Promise<{ status: number; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(t.base + path, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

describe('discovery, health and metrics', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('serves /version', async () => {
    const v = (await t.request('GET', '/version')).body;
    assert.equal(v.major, '1');
    assert.equal(v.gitVersion, 'v1.33.0-kcm');
    assert.equal(v.platform, 'linux/amd64');
  });

  it('serves /api and /api/v1 with resources and subresources', async () => {
    assert.deepEqual((await t.request('GET', '/api')).body.versions, ['v1']);
    const core = (await t.request('GET', '/api/v1')).body;
    assert.equal(core.kind, 'APIResourceList');
    assert.equal(core.groupVersion, 'v1');
    const pods = core.resources.find((r: any) => r.name === 'pods');
    assert.equal(pods.kind, 'Pod');
    assert.equal(pods.namespaced, true);
    assert.deepEqual(pods.shortNames, ['po']);
    assert.ok(pods.categories.includes('all'));
    assert.ok(pods.verbs.includes('watch'));
    assert.ok(core.resources.some((r: any) => r.name === 'pods/status'));
    const evict = core.resources.find((r: any) => r.name === 'pods/eviction');
    assert.equal(evict.group, 'policy');
    assert.equal(evict.kind, 'Eviction');
  });

  it('serves /apis with preferred versions and /apis/<group>', async () => {
    const list = (await t.request('GET', '/apis')).body;
    assert.equal(list.kind, 'APIGroupList');
    const autoscaling = list.groups.find((g: any) => g.name === 'autoscaling');
    assert.equal(autoscaling.preferredVersion.version, 'v2');
    const apps = (await t.request('GET', '/apis/apps')).body;
    assert.equal(apps.kind, 'APIGroup');
    assert.deepEqual(apps.preferredVersion, { groupVersion: 'apps/v1', version: 'v1' });
    const appsV1 = (await t.request('GET', '/apis/apps/v1')).body;
    const scale = appsV1.resources.find((r: any) => r.name === 'deployments/scale');
    assert.deepEqual([scale.group, scale.version, scale.kind], ['autoscaling', 'v1', 'Scale']);
  });

  it('answers the aggregated discovery Accept with an APIGroupDiscoveryList', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    const res = await t.request('GET', '/apis', undefined, { Accept: accept });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal(res.body.kind, 'APIGroupDiscoveryList');
    assert.equal(res.body.apiVersion, 'apidiscovery.k8s.io/v2');
    const apps = res.body.items.find((g: any) => g.metadata.name === 'apps');
    assert.equal(apps.versions[0].version, 'v1');
    const deploy = apps.versions[0].resources.find((r: any) => r.resource === 'deployments');
    assert.deepEqual(deploy.responseKind, { group: 'apps', version: 'v1', kind: 'Deployment' });
    assert.equal(deploy.scope, 'Namespaced');
    assert.deepEqual(deploy.shortNames, ['deploy']);
    const scale = deploy.subresources.find((x: any) => x.subresource === 'scale');
    assert.deepEqual(scale.responseKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
    assert.equal(res.body.items.some((g: any) => !g.metadata.name), false);
    const auto = res.body.items.find((g: any) => g.metadata.name === 'autoscaling');
    assert.equal(auto.versions[0].version, 'v2');
  });

  it('serves the core group alone at /api in v2beta1 when asked', async () => {
    const res = await t.request('GET', '/api', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json' });
    assert.equal(res.body.apiVersion, 'apidiscovery.k8s.io/v2beta1');
    assert.equal(res.body.items.length, 1);
    assert.equal(res.body.items[0].metadata.name, undefined);
    const pods = res.body.items[0].versions[0].resources.find((r: any) => r.resource === 'pods');
    assert.equal(pods.singularResource, 'pod');
    assert.ok(pods.subresources.some((x: any) => x.subresource === 'status'));
  });

  it('keeps legacy JSON for a plain Accept', async () => {
    const res = await t.request('GET', '/apis', undefined, { Accept: 'application/json, */*' });
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.body.kind, 'APIGroupList');
  });

  it('answers health checks, verbosely on request', async () => {
    assert.equal((await t.request('GET', '/healthz')).text, 'ok');
    const v = await t.request('GET', '/readyz?verbose');
    assert.equal(v.status, 200);
    assert.match(v.text, /^\[\+\]ping ok\n/);
    assert.match(v.text, /readyz check passed\n$/);
    assert.equal((await t.request('GET', '/livez/ping')).text, 'ok');
  });

  it('exports request, storage and object metrics', async () => {
    await t.request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'm1' } });
    await t.request('GET', '/api/v1/namespaces/default/configmaps/nope');
    const text = (await t.request('GET', '/metrics')).text;
    assert.match(text, /apiserver_request_total\{verb="POST",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="201"\} 1/);
    assert.match(text, /apiserver_request_total\{verb="GET",[^}]*resource="configmaps"[^}]*code="404"\} 1/);
    assert.match(text, /apiserver_request_duration_seconds_bucket/);
    assert.match(text, /apiserver_storage_objects\{resource="configmaps"\} 1/);
    assert.match(text, /apiserver_storage_objects\{resource="namespaces"\} 4/);
    assert.match(text, /etcd_request_duration_seconds_count\{operation="create",type="configmaps"\}/);
  });

  it('counts open watches in apiserver_longrunning_requests', async () => {
    const w = await t.watch('/api/v1/namespaces/default/configmaps?watch=1');
    await w.next();
    assert.match((await t.request('GET', '/metrics')).text, /apiserver_longrunning_requests\{[^}]*resource="configmaps"[^}]*\} 1/);
    w.close();
  });

  it('answers discovery in protobuf to clients that prefer it, byte for byte as kube-apiserver', async () => {
    // kube-apiserver v1.20's answer to GET /apis/apps with client-go's protobuf Accept header.
    const real = '6b3873000a0e0a027631120841504947726f757012240a0461707073120d0a07617070732f7631120276311a0d0a07617070732f7631120276311a002200';
    const apps = await get(t, '/apis/apps', { Accept: 'application/vnd.kubernetes.protobuf, */*' });
    assert.equal(apps.type, 'application/vnd.kubernetes.protobuf');
    assert.equal(apps.body.toString('hex'), real);
    // APIVersions and the core APIResourceList carry no apiVersion: the envelope's is empty, as upstream's.
    for (const path of ['/api', '/api/v1']) {
      const r = await get(t, path, { Accept: 'application/vnd.kubernetes.protobuf' });
      assert.equal(r.type, 'application/vnd.kubernetes.protobuf', path);
      assert.equal(readEnvelope(r.body).apiVersion, '');
      const json = JSON.parse((await get(t, path, {})).body.toString());
      const pb = decodeKubernetesProtobuf(r.body);
      assert.equal(pb.kind, json.kind);
      assert.deepEqual(pb.versions ?? (pb.resources as { name: string }[]).map((x) => x.name), json.versions ?? json.resources.map((x: { name: string }) => x.name));
    }
    const list = decodeKubernetesProtobuf((await get(t, '/apis', { Accept: 'application/vnd.kubernetes.protobuf' })).body);
    assert.equal(list.kind, 'APIGroupList');
    assert.ok((list.groups as { name: string }[]).some((g) => g.name === 'apps'));
  });

  it('refuses discovery in a media type it cannot send with 406, and transformations too', async () => {
    for (const accept of ['text/html', 'application/json;as=Table;g=meta.k8s.io;v=v1']) {
      const r = await get(t, '/apis/apps', { Accept: accept });
      assert.equal(r.status, 406, accept);
      const st = JSON.parse(r.body.toString());
      assert.equal(st.reason, 'NotAcceptable');
      assert.equal(st.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
    }
  });

  it('writes JSON as Go does: compact with a newline, or pretty for ?pretty, pretty=1 and curl, Wget and browsers', async () => {
    const compact = (await get(t, '/api/v1/namespaces/default', {})).body.toString();
    assert.match(compact, /^\{"apiVersion":"v1","kind":"Namespace",/);
    assert.ok(compact.endsWith('}\n'));
    const pretty = (b: Buffer) => b.toString().startsWith('{\n  "') && !b.toString().endsWith('\n');
    assert.ok(pretty((await get(t, '/api/v1/namespaces/default?pretty=true', {})).body));
    assert.ok(pretty((await get(t, '/api/v1/namespaces/default', { Accept: 'application/json;pretty=1' })).body));
    for (const ua of ['curl/8.5.0', 'Wget/1.21', 'Mozilla/5.0 (X11; Linux x86_64)']) {
      assert.ok(pretty((await get(t, '/api/v1/namespaces/default', { 'User-Agent': ua })).body), ua);
      assert.ok(pretty((await get(t, '/api/v1/namespaces/nope', { 'User-Agent': ua })).body), `${ua}: errors too`);
    }
    // An explicit pretty parameter wins over the user agent; an invalid one means false, as strconv.ParseBool's error.
    assert.ok(!pretty((await get(t, '/api/v1/namespaces/default?pretty=0', { 'User-Agent': 'curl/8' })).body));
    assert.ok(!pretty((await get(t, '/api/v1/namespaces/default?pretty=yes', { 'User-Agent': 'curl/8' })).body));
    assert.ok(!pretty((await get(t, '/api/v1/namespaces/default', { 'User-Agent': 'kubectl/v1.32.0' })).body));
    assert.deepEqual(JSON.parse((await get(t, '/api/v1/namespaces/default?pretty=1', {})).body.toString()), JSON.parse(compact));
    // GET /version is always indented (upstream's WriteRawJSON).
    assert.ok(pretty((await get(t, '/version', {})).body));
  });

  it('never pretty-prints watch events, whoever asks', async () => {
    const w = await t.watch('/api/v1/namespaces?watch=1&pretty=1&fieldSelector=metadata.name%3Ddefault', { 'User-Agent': 'curl/8' });
    await w.next();
    w.close();
    const r = await new Promise<string>((resolve) => {
      http.get(t.base + '/api/v1/namespaces?watch=1&pretty=1&timeoutSeconds=1&fieldSelector=metadata.name%3Ddefault', { headers: { 'User-Agent': 'curl/8' } }, (res) => {
        let s = '';
        res.on('data', (d) => (s += d));
        res.on('end', () => resolve(s));
      });
    });
    assert.match(r, /^\{"type":"ADDED","object":\{"[^\n]*\}\}\n$/);
    assert.ok(r.endsWith('}}\n'));
  });

  it('gives stored resources the storageVersionHash of their storage version, as kube-apiserver', async () => {
    const hashOf = async (gv: string, name: string) => ((await t.request('GET', gv)).body.resources as { name: string; storageVersionHash?: string }[]).find((r) => r.name === name)?.storageVersionHash;
    // Values from kube-apiserver v1.20, whose storage versions for these are the same.
    assert.equal(await hashOf('/apis/apps/v1', 'deployments'), '8aSe+NMegvE=');
    assert.equal(await hashOf('/api/v1', 'pods'), 'xPOwRZ+Yhw8=');
    assert.equal(await hashOf('/api/v1', 'events'), 'r2yiGXH7wu8=');
    assert.equal(await hashOf('/apis/events.k8s.io/v1', 'events'), 'r2yiGXH7wu8=');
    for (const [gv, name] of [['/api/v1', 'bindings'], ['/api/v1', 'componentstatuses'], ['/api/v1', 'pods/status'], ['/apis/authorization.k8s.io/v1', 'selfsubjectaccessreviews']] as const) {
      assert.equal(await hashOf(gv, name), undefined, name);
    }
  });
});
