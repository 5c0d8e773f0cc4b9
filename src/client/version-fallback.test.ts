import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '../util/clock/clock.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newKubeClient, type KubeClient } from './client.js';
import { newRestConfig } from './rest-config.js';
import { chooseVersionFallbacks, knownVersionFallbacks, pdbEmptySelectorKey, withVersionFallbacks } from './version-fallback.js';
import { DEFAULT_FAKE_RESOURCES, startFakeApiServer, type FakeApiServer } from './testing/fake-api-server.js';

const cronV1beta1 = { group: 'batch', version: 'v1beta1', resource: 'cronjobs' };
const sliceV1beta1 = { group: 'discovery.k8s.io', version: 'v1beta1', resource: 'endpointslices' };
const pdbV1beta1 = { group: 'policy', version: 'v1beta1', resource: 'poddisruptionbudgets' };

let server: FakeApiServer;
let client: KubeClient;
before(async () => {
  // A 1.20-like server: CronJob, EndpointSlice and PDB only in their beta versions.
  server = await startFakeApiServer({
    resources: [
      ...DEFAULT_FAKE_RESOURCES,
      { gvr: cronV1beta1, kind: 'CronJob', namespaced: true, subresources: ['status'] },
      { gvr: sliceV1beta1, kind: 'EndpointSlice', namespaced: true },
      { gvr: pdbV1beta1, kind: 'PodDisruptionBudget', namespaced: true, subresources: ['status'] },
    ],
  });
  client = newKubeClient(newRestConfig({ host: server.url, qps: -1 }), { clock: realClock });
});
after(async () => {
  await client.close();
  await server.close();
});

const served = (set: string[]) => (r: { group: string; version: string; resource: string }) => set.includes(`${r.group}/${r.version}/${r.resource}`);

describe('version fallbacks for older servers', () => {
  it('chooses a fallback only where the current version is missing and the older one is served', () => {
    const chosen = chooseVersionFallbacks(served(['batch/v1beta1/cronjobs', 'policy/v1/poddisruptionbudgets', 'policy/v1beta1/poddisruptionbudgets']));
    assert.deepEqual(
      chosen.map((f) => `${f.current.group}/${f.older.version}`),
      ['batch/v1beta1'],
    );
    assert.equal(chooseVersionFallbacks(served([])).length, 0, 'nothing served, nothing to fall back to');
  });

  it('sends requests for batch/v1 CronJobs to batch/v1beta1 and hands back batch/v1 objects', async () => {
    const c = withVersionFallbacks(client, chooseVersionFallbacks(served(['batch/v1beta1/cronjobs'])));
    const cj = c.resource(GVR.cronJobs).namespace('default');
    const created = await cj.create({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '@daily' } } as KubeObject);
    assert.equal(created.apiVersion, 'batch/v1');
    const stored = server.objects(cronV1beta1);
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.apiVersion, 'batch/v1beta1');
    const list = await cj.list();
    assert.equal(list.items[0]!.apiVersion, 'batch/v1');
    assert.equal(server.requests.filter((r) => r.path.startsWith('/apis/batch/v1/')).length, 0, 'nothing asked of batch/v1');

    const w = await cj.watch({ resourceVersion: '0' });
    server.seed(cronV1beta1, { apiVersion: 'batch/v1beta1', kind: 'CronJob', metadata: { name: 'hourly', namespace: 'default' } } as KubeObject);
    for await (const ev of w) {
      if (ev.type === 'ADDED' && ev.object.metadata?.name === 'hourly') {
        assert.equal(ev.object.apiVersion, 'batch/v1');
        break;
      }
    }
    w.stop();
  });

  it('converts EndpointSlice topology to nodeName and zone and back', async () => {
    const c = withVersionFallbacks(client, chooseVersionFallbacks(served(['discovery.k8s.io/v1beta1/endpointslices'])));
    const es = c.resource(GVR.endpointSlices).namespace('default');
    await es.create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-abc' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'n1', zone: 'z1', deprecatedTopology: { 'topology.kubernetes.io/region': 'r1' } }],
    } as KubeObject);
    const raw = server.objects(sliceV1beta1)[0] as unknown as { endpoints: Array<Record<string, unknown>> };
    assert.deepEqual(raw.endpoints[0]!.topology, { 'topology.kubernetes.io/region': 'r1', 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'z1' });
    assert.equal(raw.endpoints[0]!.zone, undefined);
    const back = (await es.get('web-abc')) as unknown as { endpoints: Array<Record<string, unknown>> };
    assert.deepEqual(back.endpoints[0], { addresses: ['10.0.0.1'], nodeName: 'n1', zone: 'z1', deprecatedTopology: { 'topology.kubernetes.io/region': 'r1' } });
  });

  it('keeps the v1beta1 meaning of an empty PodDisruptionBudget selector (no pods) across versions', () => {
    const pdb = knownVersionFallbacks().find((f) => f.current.resource === 'poddisruptionbudgets')!;
    const up = pdb.up({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'p' }, spec: { selector: {} } } as KubeObject);
    assert.deepEqual((up.spec as { selector: unknown }).selector, { matchExpressions: [{ key: pdbEmptySelectorKey, operator: 'Exists' }] });
    const down = pdb.down(up);
    assert.equal(down.apiVersion, 'policy/v1beta1');
    assert.deepEqual((down.spec as { selector: unknown }).selector, {});
    const labelled = pdb.up({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'p' }, spec: { selector: { matchLabels: { a: 'b' } } } } as KubeObject);
    assert.deepEqual((labelled.spec as { selector: unknown }).selector, { matchLabels: { a: 'b' } });
  });
});
