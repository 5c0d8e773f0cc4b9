import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './test-server.js';

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
});
