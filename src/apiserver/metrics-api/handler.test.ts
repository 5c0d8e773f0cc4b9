import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { startTestServer, type TestServer } from '../test-server.js';
import { FakeClock } from '../../util/clock/clock.js';
import type { ResourceMetricsSource } from './types.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** A source with fixed usage: pods named `*-nometrics` and nodes named `*-cold` have none. */
function fixedSource(): ResourceMetricsSource & { calls: number } {
  const src = {
    calls: 0,
    async podSamples(pods: readonly Pod[]) {
      src.calls++;
      return pods.map((p) =>
        p.metadata?.name?.endsWith('-nometrics')
          ? undefined
          : { timestamp: '2024-01-01T00:00:00Z', window: '15s', containers: (p.spec?.containers ?? []).map((c) => ({ name: c.name, usage: { cpu: '1053784n', memory: '3508Ki' } })) },
      );
    },
    async nodeSamples(nodes: readonly Node[]) {
      return nodes.map((n) => (n.metadata?.name?.endsWith('-cold') ? undefined : { timestamp: '2024-01-01T00:00:00Z', window: '15s', usage: { cpu: '250m', memory: '512Mi' } }));
    },
  };
  return src;
}

describe('metrics.k8s.io/v1beta1', () => {
  let t: TestServer;
  const clock = new FakeClock('2024-01-01T00:00:30Z');
  before(async () => {
    t = await startTestServer({ clock, resourceMetrics: fixedSource() });
    const mkPod = async (ns: string, name: string, labels: Record<string, string>, phase: string, containers = ['app']) => {
      const res = await t.request('POST', `/api/v1/namespaces/${ns}/pods`, { metadata: { name, labels }, spec: { containers: containers.map((c) => ({ name: c, image: 'nginx' })) } });
      assert.equal(res.status, 201, res.text);
      const pod = res.body;
      pod.status = { phase };
      assert.equal((await t.request('PUT', `/api/v1/namespaces/${ns}/pods/${name}/status`, pod)).status, 200);
    };
    for (const ns of ['default', 'kube-system']) await t.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } });
    await mkPod('default', 'web-1', { app: 'web' }, 'Running', ['app', 'sidecar']);
    await mkPod('default', 'web-2', { app: 'web' }, 'Running');
    await mkPod('default', 'db-1', { app: 'db' }, 'Running');
    await mkPod('default', 'web-3-nometrics', { app: 'web' }, 'Running');
    await mkPod('default', 'pending', { app: 'web' }, 'Pending');
    await mkPod('kube-system', 'dns', { app: 'dns' }, 'Running');
    for (const name of ['node-a', 'node-b-cold']) {
      const res = await t.request('POST', '/api/v1/nodes', { metadata: { name, labels: { role: name === 'node-a' ? 'worker' : 'spare' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      assert.equal(res.status, 201, res.text);
    }
  });
  after(async () => {
    await t.close();
  });

  it('is discovered as a group with nodes and pods (get, list), as metrics-server registers it', async () => {
    const groups = (await t.request('GET', '/apis')).body;
    const g = groups.groups.find((x: any) => x.name === 'metrics.k8s.io');
    assert.deepEqual(g, { name: 'metrics.k8s.io', versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }], preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' } });
    assert.equal((await t.request('GET', '/apis/metrics.k8s.io')).body.kind, 'APIGroup');
    const rl = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1')).body;
    assert.deepEqual(rl.resources, [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ]);
    const agg = (await t.request('GET', '/apis', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).body;
    const ag = agg.items.find((x: any) => x.metadata.name === 'metrics.k8s.io');
    assert.deepEqual(ag.versions[0].resources.map((r: any) => [r.resource, r.scope, r.responseKind.kind]), [
      ['nodes', 'Cluster', 'NodeMetrics'],
      ['pods', 'Namespaced', 'PodMetrics'],
    ]);
  });

  it('lists PodMetrics of Running pods with metrics, sorted, with a label selector and across namespaces', async () => {
    const list = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods')).body;
    assert.equal(list.kind, 'PodMetricsList');
    assert.equal(list.apiVersion, 'metrics.k8s.io/v1beta1');
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['db-1', 'web-1', 'web-2']);
    const first = list.items[1];
    assert.deepEqual(Object.keys(first), ['metadata', 'timestamp', 'window', 'containers']);
    assert.deepEqual(first.metadata, { name: 'web-1', namespace: 'default', creationTimestamp: '2024-01-01T00:00:30Z', labels: { app: 'web' } });
    assert.deepEqual(first.containers, [
      { name: 'app', usage: { cpu: '1053784n', memory: '3508Ki' } },
      { name: 'sidecar', usage: { cpu: '1053784n', memory: '3508Ki' } },
    ]);
    const web = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb')).body;
    assert.deepEqual(web.items.map((i: any) => i.metadata.name), ['web-1', 'web-2']);
    const all = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/pods')).body;
    assert.deepEqual(all.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`), ['default/db-1', 'default/web-1', 'default/web-2', 'kube-system/dns']);
    const byField = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace%3Dkube-system')).body;
    assert.deepEqual(byField.items.map((i: any) => i.metadata.name), ['dns']);
    const bad = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dx');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'field label not supported: spec.nodeName');
  });

  it('gets one PodMetrics, and answers NotFound as metrics-server does', async () => {
    const one = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-2');
    assert.equal(one.status, 200);
    assert.equal(one.body.kind, 'PodMetrics');
    assert.equal(one.body.window, '15s');
    const missing = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'pods "nope" not found');
    const noMetrics = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-3-nometrics');
    assert.equal(noMetrics.status, 404);
    assert.equal(noMetrics.body.message, 'podmetrics.metrics.k8s.io "default/web-3-nometrics" not found');
    const pending = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pending');
    assert.equal(pending.status, 404);
  });

  it('lists and gets NodeMetrics of nodes with metrics, with label selectors', async () => {
    const list = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes')).body;
    assert.equal(list.kind, 'NodeMetricsList');
    assert.deepEqual(list.items, [{ metadata: { name: 'node-a', creationTimestamp: '2024-01-01T00:00:30Z', labels: { role: 'worker' } }, timestamp: '2024-01-01T00:00:00Z', window: '15s', usage: { cpu: '250m', memory: '512Mi' } }]);
    assert.equal((await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=role%3Dspare')).body.items.length, 0);
    assert.equal((await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes/node-a')).body.kind, 'NodeMetrics');
    const cold = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes/node-b-cold');
    assert.equal(cold.status, 404);
    assert.equal(cold.body.message, 'nodemetrics.metrics.k8s.io "node-b-cold" not found');
    assert.equal((await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes/none')).body.message, 'nodes "none" not found');
  });

  it("renders metrics-server's table columns", async () => {
    const table = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', undefined, { Accept: TABLE })).body;
    assert.equal(table.kind, 'Table');
    assert.deepEqual(table.columnDefinitions.map((c: any) => c.name), ['Name', 'cpu', 'memory', 'Window']);
    assert.deepEqual(table.rows[1].cells, ['web-1', '2107568n', '7016Ki', '15s']);
    assert.equal(table.rows[1].object.kind, 'PartialObjectMetadata');
    const nodes = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes', undefined, { Accept: TABLE })).body;
    assert.deepEqual(nodes.rows.map((r: any) => r.cells), [['node-a', '250m', '512Mi', '15s']]);
  });

  it('renders metadata only when asked (kubectl get -o name)', async () => {
    const meta = (await t.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes', undefined, { Accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' })).body;
    assert.equal(meta.kind, 'PartialObjectMetadataList');
    assert.deepEqual(meta.items.map((i: any) => [i.kind, i.metadata.name]), [['PartialObjectMetadata', 'node-a']]);
  });

  it('refuses writes and watches', async () => {
    const post = await t.request('POST', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { metadata: { name: 'x' } });
    assert.equal(post.status, 405);
    const watch = await t.request('GET', '/apis/metrics.k8s.io/v1beta1/pods?watch=true');
    assert.equal(watch.status, 405);
  });

  it('is absent without a metrics source', async () => {
    const plain = await startTestServer({ clock });
    try {
      assert.equal((await plain.request('GET', '/apis/metrics.k8s.io/v1beta1/pods')).status, 404);
      assert.ok(!(await plain.request('GET', '/apis')).body.groups.some((g: any) => g.name === 'metrics.k8s.io'));
    } finally {
      await plain.close();
    }
  });
});
