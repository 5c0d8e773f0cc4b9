/**
 * Go's JSON round trip through the whole write path: whatever the body
 * encoding (JSON, protobuf) or the patch type, the stored object reads as
 * kube-apiserver would return it after decoding into Go structs.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './test-server.js';
import { encodeKubernetesProtobuf, protobufMediaType } from './protobuf/envelope.js';

const ns = '/api/v1/namespaces/default';
const apps = '/apis/apps/v1/namespaces/default';
const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '6b1a6f1e-0000-4000-8000-000000000001', controller: true };
const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ownerReferences: [owner], labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
});
const sts = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name },
  spec: { replicas: 0, serviceName: name, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'db:1' }] } } },
});

describe("Go's JSON round trip on every write path", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', `${ns}/serviceaccounts`, { metadata: { name: 'default' } });
  });
  after(async () => {
    await t.close();
  });

  it('JSON create: zero counters without omitempty are written, the spec pointer keeps its 0, empty structs appear', async () => {
    assert.equal((await t.request('POST', `${apps}/statefulsets`, sts('json'))).status, 201);
    const got = (await t.request('GET', `${apps}/statefulsets/json`)).body;
    assert.deepEqual(got.status, { replicas: 0, availableReplicas: 0 });
    assert.equal(got.spec.replicas, 0);
    assert.equal(got.spec.template.metadata.creationTimestamp, null);
    assert.deepEqual(got.spec.template.spec.containers[0].resources, {});
  });

  it('protobuf create: the same object as from JSON', async () => {
    const body = encodeKubernetesProtobuf(sts('pb'));
    assert.ok(body);
    const res = await t.request('POST', `${apps}/statefulsets`, body, { 'Content-Type': protobufMediaType });
    assert.equal(res.status, 201, res.text);
    const got = (await t.request('GET', `${apps}/statefulsets/pb`)).body;
    assert.deepEqual(got.status, { replicas: 0, availableReplicas: 0 });
    assert.equal(got.spec.replicas, 0);
  });

  it('strategic merge patch deleting the last owner reference by uid leaves no ownerReferences field', async () => {
    await t.request('POST', `${ns}/pods`, pod('smp'));
    const res = await t.request('PATCH', `${ns}/pods/smp`, { metadata: { ownerReferences: [{ $patch: 'delete', uid: owner.uid }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    assert.ok(!('ownerReferences' in res.body.metadata), JSON.stringify(res.body.metadata));
    assert.ok(!('ownerReferences' in (await t.request('GET', `${ns}/pods/smp`)).body.metadata));
  });

  it('JSON patch and merge patch that empty a list leave no field', async () => {
    await t.request('POST', `${ns}/pods`, pod('jp'));
    const jp = await t.request('PATCH', `${ns}/pods/jp`, [{ op: 'remove', path: '/metadata/ownerReferences/0' }], { 'Content-Type': 'application/json-patch+json' });
    assert.equal(jp.status, 200, jp.text);
    assert.ok(!('ownerReferences' in jp.body.metadata));
    const mp = await t.request('PATCH', `${ns}/pods/jp`, { metadata: { finalizers: [] } });
    assert.equal(mp.status, 200, mp.text);
    assert.ok(!('finalizers' in mp.body.metadata), JSON.stringify(mp.body.metadata));
  });

  it('server-side apply: a DaemonSet reads back with its status counters at 0', async () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'agent:1' }] } } },
    };
    const res = await t.request('PATCH', `${apps}/daemonsets/agent?fieldManager=test`, JSON.stringify(ds), { 'Content-Type': 'application/apply-patch+yaml' });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  });

  it('status update: an old ReplicaSet scaled to 0 keeps status.replicas: 0', async () => {
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'old' }, spec: { replicas: 0, selector: { matchLabels: { app: 'old' } }, template: { metadata: { labels: { app: 'old' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    const created = (await t.request('POST', `${apps}/replicasets`, rs)).body;
    const res = await t.request('PUT', `${apps}/replicasets/old/status`, { ...created, status: { replicas: 0, readyReplicas: 0, observedGeneration: 1 } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.status, { replicas: 0, observedGeneration: 1 });
  });
});
