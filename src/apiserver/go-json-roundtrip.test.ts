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

let t: TestServer;
before(async () => {
  t = await startTestServer();
  await t.request('POST', `${ns}/serviceaccounts`, { metadata: { name: 'default' } });
});
after(async () => {
  await t.close();
});

describe("Go's JSON round trip on every write path", () => {

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

describe('the same object whether written as JSON or as protobuf, per kind', () => {
  const tmpl = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'i:1', ports: [{ containerPort: 80 }] }] } });
  const sel = (app: string) => ({ matchLabels: { app } });
  const kinds: Array<[string, Record<string, unknown>]> = [
    ['/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', spec: tmpl('p').spec }],
    ['/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', spec: { selector: { app: 's' }, ports: [{ port: 80 }] } }],
    ['/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '' } }],
    ['/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', data: { a: '' } }],
    ['/api/v1/namespaces/default/endpoints', { apiVersion: 'v1', kind: 'Endpoints', subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }],
    ['/api/v1/namespaces/default/persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    ['/apis/apps/v1/namespaces/default/deployments', { apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: 0, selector: sel('d'), template: tmpl('d') } }],
    ['/apis/apps/v1/namespaces/default/replicasets', { apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: { replicas: 0, selector: sel('r'), template: tmpl('r') } }],
    ['/apis/apps/v1/namespaces/default/statefulsets', { apiVersion: 'apps/v1', kind: 'StatefulSet', spec: { replicas: 0, serviceName: 's', selector: sel('s'), template: tmpl('s') } }],
    ['/apis/apps/v1/namespaces/default/daemonsets', { apiVersion: 'apps/v1', kind: 'DaemonSet', spec: { selector: sel('ds'), template: tmpl('ds') } }],
    ['/apis/batch/v1/namespaces/default/jobs', { apiVersion: 'batch/v1', kind: 'Job', spec: { parallelism: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i:1' }] } } } }],
    ['/apis/batch/v1/namespaces/default/cronjobs', { apiVersion: 'batch/v1', kind: 'CronJob', spec: { schedule: '@daily', suspend: false, jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i:1' }] } } } } } }],
    ['/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4', endpoints: [] }],
    ['/apis/policy/v1/namespaces/default/poddisruptionbudgets', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', spec: { minAvailable: 0, selector: sel('p') } }],
    ['/apis/coordination.k8s.io/v1/namespaces/default/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', spec: { leaseDurationSeconds: 10, leaseTransitions: 0 } }],
  ];
  /** What differs between two objects of different names by construction. */
  const comparable = (o: Record<string, any>) => {
    const c = structuredClone(o);
    const uid = c.metadata.uid;
    for (const k of ['name', 'uid', 'resourceVersion', 'creationTimestamp', 'managedFields']) delete c.metadata[k];
    if (c.spec?.clusterIP) delete c.spec.clusterIP, delete c.spec.clusterIPs;
    // Names and uids the server derives from the object's own (job labels, generated volume names).
    return JSON.parse(JSON.stringify(c).replaceAll(uid, '<uid>').replace(/via-(json|pb)/g, '<name>').replace(/kube-api-access-[a-z0-9]{5}/g, 'kube-api-access-<rand>'));
  };
  for (const [path, obj] of kinds) {
    it(`${obj.kind}: a JSON and a protobuf create read back alike`, async () => {
      const a = await t.request('POST', path, { ...obj, metadata: { name: 'via-json' } });
      assert.equal(a.status, 201, a.text);
      const body = encodeKubernetesProtobuf({ ...obj, metadata: { name: 'via-pb' } });
      assert.ok(body, `${obj.kind} has a protobuf message`);
      const b = await t.request('POST', path, body, { 'Content-Type': protobufMediaType });
      assert.equal(b.status, 201, b.text);
      const ja = (await t.request('GET', `${path}/via-json`)).body;
      const jb = (await t.request('GET', `${path}/via-pb`)).body;
      assert.deepEqual(comparable(jb), comparable(ja));
    });
  }
});
