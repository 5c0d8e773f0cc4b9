import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '../util/clock/clock.js';
import { newKubeClient, type KubeClient } from './client.js';
import { newRestConfig } from './rest-config.js';
import { isNoMatch } from './rest-mapper.js';
import { GroupDiscoveryFailedError } from './discovery.js';
import { startFakeApiServer, DEFAULT_FAKE_RESOURCES, type FakeApiServer } from './testing/fake-api-server.js';

let server: FakeApiServer;
let client: KubeClient;
before(async () => {
  server = await startFakeApiServer({
    resources: [
      ...DEFAULT_FAKE_RESOURCES,
      { gvr: { group: 'batch', version: 'v1', resource: 'jobs' }, kind: 'Job', namespaced: true },
      { gvr: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' }, kind: 'HorizontalPodAutoscaler', namespaced: true, shortNames: ['hpa'] },
      { gvr: { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' }, kind: 'HorizontalPodAutoscaler', namespaced: true, shortNames: ['hpa'] },
      { gvr: { group: 'autoscaling', version: 'v1', resource: 'oldonly' }, kind: 'OldOnly', namespaced: false },
    ],
  });
  client = newKubeClient(newRestConfig({ host: server.url, qps: -1 }), { clock: realClock });
});
after(async () => {
  await client.close();
  await server.close();
});

const count = (p: string) => server.requests.filter((r) => r.path === p).length;

describe('discovery', () => {
  it('lists groups with the core group first and caches until invalidated', async () => {
    const g = await client.discovery.serverGroups();
    assert.deepEqual(
      g.groups.map((x) => [x.name, x.preferredVersion?.version]),
      [
        ['', 'v1'],
        ['apps', 'v1'],
        ['coordination.k8s.io', 'v1'],
        ['batch', 'v1'],
        ['autoscaling', 'v2'],
      ],
    );
    const before = count('/apis');
    await client.discovery.serverGroups();
    assert.equal(count('/apis'), before);
    client.discovery.invalidate();
    await client.discovery.serverGroups();
    assert.equal(count('/apis'), before + 1);
  });

  it('returns a group version resource list and the server version', async () => {
    const apps = await client.discovery.serverResourcesForGroupVersion('apps/v1');
    assert.ok(apps.resources.some((r) => r.name === 'deployments/scale'));
    const v = await client.discovery.serverVersion();
    assert.equal(v.gitVersion, 'v1.30.0-fake');
  });

  it('prefers each resource in its preferred version and skips subresources', async () => {
    const { resources, error } = await client.discovery.serverPreferredResources();
    assert.equal(error, undefined);
    const auto = resources.filter((l) => l.groupVersion.startsWith('autoscaling/'));
    assert.deepEqual(
      auto.map((l) => [l.groupVersion, l.resources.map((r) => r.name)]),
      [
        ['autoscaling/v2', ['horizontalpodautoscalers']],
        ['autoscaling/v1', ['oldonly']],
      ],
    );
    assert.ok(resources.every((l) => l.resources.every((r) => !r.name.includes('/'))));
  });

  it('returns partial results when a group version fails', async () => {
    server.handle('GET', '/apis/batch/v1', (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('aggregated API down');
    });
    client.discovery.invalidate();
    const { resources, error } = await client.discovery.serverPreferredResources();
    assert.ok(error instanceof GroupDiscoveryFailedError);
    assert.deepEqual([...error.failed.keys()], ['batch/v1']);
    assert.match(error.message, /unable to retrieve the complete list of server APIs: batch\/v1/);
    assert.ok(resources.some((l) => l.groupVersion === 'apps/v1'));
    assert.ok(!resources.some((l) => l.groupVersion === 'batch/v1'));
  });
});

describe('REST mapper', () => {
  it('maps resources, singular and short names to their preferred version', async () => {
    assert.deepEqual(await client.restMapper.resourceFor('apps', 'deployments'), { group: 'apps', version: 'v1', resource: 'deployments' });
    assert.deepEqual(await client.restMapper.resourceFor('autoscaling', 'hpa'), { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' });
    assert.deepEqual(await client.restMapper.resourceFor('autoscaling', 'horizontalpodautoscaler', 'v1'), { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' });
    assert.deepEqual(await client.restMapper.resourceFor(undefined, 'po'), { group: '', version: 'v1', resource: 'pods' });
  });

  it('maps kinds to resources with scope and back', async () => {
    const m = await client.restMapper.restMapping('', 'Node');
    assert.deepEqual(m, { gvr: { group: '', version: 'v1', resource: 'nodes' }, gvk: { group: '', version: 'v1', kind: 'Node' }, namespaced: false });
    const hpa = await client.restMapper.restMapping('autoscaling', 'HorizontalPodAutoscaler');
    assert.equal(hpa.gvr.version, 'v2');
    assert.equal(hpa.namespaced, true);
    assert.deepEqual(await client.restMapper.kindFor({ group: 'apps', version: 'v1', resource: 'replicasets' }), { group: 'apps', version: 'v1', kind: 'ReplicaSet' });
  });

  it('refreshes discovery on a miss so new resources are found', async () => {
    await client.restMapper.resourceFor('apps', 'deployments');
    server.addResource({ gvr: { group: 'example.com', version: 'v1', resource: 'widgets' }, kind: 'Widget', namespaced: true });
    const m = await client.restMapper.restMapping('example.com', 'Widget');
    assert.equal(m.gvr.resource, 'widgets');
    await assert.rejects(client.restMapper.resourceFor('example.com', 'gadgets'), (e: unknown) => isNoMatch(e) && /doesn't have a resource type "gadgets.example.com"/.test((e as Error).message));
    await assert.rejects(client.restMapper.restMapping('x', 'Y'), /no matches for kind "Y" in group "x"/);
  });
});

describe('raw requests', () => {
  it('reaches non-resource paths through the client', async () => {
    server.handle('GET', '/healthz', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    assert.equal(await client.request('GET', '/healthz', { responseType: 'text' }), 'ok');
    assert.equal(client.config.host, server.url);
  });
});
