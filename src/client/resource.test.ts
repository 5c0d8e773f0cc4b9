import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '../util/clock/clock.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject, Status } from '../api/types.js';
import { isConflict, isNotFound } from './errors.js';
import { newKubeClient, type KubeClient } from './client.js';
import { newRestConfig } from './rest-config.js';
import { resourcePath } from './resource.js';
import { typed } from './typed.js';
import { startFakeApiServer, type FakeApiServer } from './testing/fake-api-server.js';

let server: FakeApiServer;
let client: KubeClient;
before(async () => {
  server = await startFakeApiServer();
  client = newKubeClient(newRestConfig({ host: server.url, qps: -1 }), { clock: realClock });
});
after(async () => {
  await client.close();
  await server.close();
});

const last = () => server.requests.at(-1)!;

describe('resource paths', () => {
  it('builds core, group, namespaced, named and subresource paths', () => {
    assert.equal(resourcePath(GVR.pods), '/api/v1/pods');
    assert.equal(resourcePath(GVR.pods, 'ns'), '/api/v1/namespaces/ns/pods');
    assert.equal(resourcePath(GVR.pods, 'ns', 'web', 'status'), '/api/v1/namespaces/ns/pods/web/status');
    assert.equal(resourcePath(GVR.deployments, 'ns', 'd', 'scale'), '/apis/apps/v1/namespaces/ns/deployments/d/scale');
    assert.equal(resourcePath(GVR.nodes, undefined, 'n1'), '/api/v1/nodes/n1');
    assert.equal(resourcePath(GVR.namespaces, undefined, 'kube-system', 'finalize'), '/api/v1/namespaces/kube-system/finalize');
    assert.equal(resourcePath(GVR.configMaps, 'a b', 'x/y'), '/api/v1/namespaces/a%20b/configmaps/x%2Fy');
    assert.throws(() => resourcePath(GVR.pods, 'ns', ''), /may not be empty/);
  });
});

describe('ResourceInterface verbs', () => {
  it('creates, gets, updates, patches and deletes with the right requests', async () => {
    const cms = client.resource(GVR.configMaps).namespace('ns');
    const created = await cms.create({ metadata: { name: 'a' }, data: { k: 'v' } }, { fieldManager: 'kcm', fieldValidation: 'Strict' });
    assert.equal(last().method, 'POST');
    assert.equal(last().path, '/api/v1/namespaces/ns/configmaps');
    assert.equal(last().query.get('fieldManager'), 'kcm');
    assert.equal(last().query.get('fieldValidation'), 'Strict');
    assert.equal(last().headers['content-type'], 'application/json');
    assert.equal(created.metadata?.namespace, 'ns');

    const got = await cms.get('a', { resourceVersion: '0' });
    assert.equal(last().path, '/api/v1/namespaces/ns/configmaps/a');
    assert.equal(last().query.get('resourceVersion'), '0');

    const updated = await cms.update({ ...got, data: { k: 'v2' } }, { dryRun: 'All' });
    assert.equal(last().method, 'PUT');
    assert.equal(last().path, '/api/v1/namespaces/ns/configmaps/a');
    assert.equal(last().query.get('dryRun'), 'All');
    assert.deepEqual(updated.data, { k: 'v2' });
    await assert.rejects(cms.update({ ...got, data: { k: 'v3' } }), isConflict);

    const patched = await cms.patch('a', 'merge', { data: { extra: '1' } });
    assert.equal(last().method, 'PATCH');
    assert.equal(last().headers['content-type'], 'application/merge-patch+json');
    assert.deepEqual(patched.data, { k: 'v2', extra: '1' });

    const deleted = (await cms.delete('a', { propagationPolicy: 'Foreground', gracePeriodSeconds: 0, preconditions: { uid: created.metadata!.uid }, dryRun: 'All' })) as KubeObject;
    assert.equal(last().method, 'DELETE');
    assert.deepEqual(JSON.parse(last().body), {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
      preconditions: { uid: created.metadata!.uid },
      dryRun: ['All'],
    });
    assert.equal(deleted.metadata?.name, 'a');
    await assert.rejects(cms.get('a'), isNotFound);

    // discardResult: nothing decoded, nothing client-side sent, failures still reject with their Status.
    await cms.create({ metadata: { name: 'b' } });
    assert.equal(await cms.delete('b', { propagationPolicy: 'Background', discardResult: true }), undefined);
    assert.deepEqual(JSON.parse(last().body), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
    await assert.rejects(cms.get('b'), isNotFound);
    await assert.rejects(cms.delete('b', { discardResult: true }), isNotFound);
  });

  it('uses the object namespace when the client is not scoped', async () => {
    const pods = client.resource(GVR.pods);
    await pods.create({ metadata: { name: 'p', namespace: 'other' } });
    assert.equal(last().path, '/api/v1/namespaces/other/pods');
    const p = await pods.namespace('other').get('p');
    await pods.updateStatus({ ...p, status: { phase: 'Running' } });
    assert.equal(last().path, '/api/v1/namespaces/other/pods/p/status');
    assert.equal(last().method, 'PUT');
    assert.equal(server.objects(GVR.pods).find((x) => x.metadata?.name === 'p')?.status?.['phase' as never], 'Running');
  });

  it('sends each patch type with its content type and apply options', async () => {
    const seen: { ct: string | undefined; path: string; query: string; body: string }[] = [];
    server.handle('PATCH', /^\/apis\/apps\/v1\/namespaces\/ns\/deployments\/d/, (req, res) => {
      seen.push({ ct: req.headers['content-type'], path: req.path, query: req.query.toString(), body: req.body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"Deployment"}');
    });
    const d = client.resource(GVR.deployments).namespace('ns');
    await d.patch('d', 'json', [{ op: 'replace', path: '/spec/replicas', value: 2 }]);
    await d.patch('d', 'strategic', { spec: { replicas: 3 } }, { subresource: 'scale' });
    await d.patch('d', 'apply', 'apiVersion: apps/v1\nkind: Deployment\n', { fieldManager: 'kcm', force: true });
    assert.deepEqual(
      seen.map((s) => [s.ct, s.path, s.query]),
      [
        ['application/json-patch+json', '/apis/apps/v1/namespaces/ns/deployments/d', ''],
        ['application/strategic-merge-patch+json', '/apis/apps/v1/namespaces/ns/deployments/d/scale', ''],
        ['application/apply-patch+yaml', '/apis/apps/v1/namespaces/ns/deployments/d', 'fieldManager=kcm&force=true'],
      ],
    );
    assert.equal(seen[2]!.body, 'apiVersion: apps/v1\nkind: Deployment\n');
    assert.deepEqual(JSON.parse(seen[0]!.body), [{ op: 'replace', path: '/spec/replicas', value: 2 }]);
  });

  it('reaches subresources with GET, POST and PUT', async () => {
    const calls: string[] = [];
    server.handle('*', /^\/api\/v1\/namespaces\/ns\/pods\/p1\/(binding|eviction|ephemeralcontainers)$/, (req, res) => {
      calls.push(`${req.method} ${req.path} ${req.body}`);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","apiVersion":"v1","status":"Success"}');
    });
    const pods = client.resource(GVR.pods).namespace('ns');
    const s = await pods.createSubresource<Status>('p1', 'binding', { target: { kind: 'Node', name: 'n1' } }, { dryRun: 'All' });
    assert.equal(s.status, 'Success');
    assert.equal(last().query.get('dryRun'), 'All');
    await pods.updateSubresource('p1', 'ephemeralcontainers', { spec: {} });
    await pods.getSubresource('p1', 'eviction');
    assert.deepEqual(calls, [
      'POST /api/v1/namespaces/ns/pods/p1/binding {"target":{"kind":"Node","name":"n1"}}',
      'PUT /api/v1/namespaces/ns/pods/p1/ephemeralcontainers {"spec":{}}',
      'GET /api/v1/namespaces/ns/pods/p1/eviction ',
    ]);
    server.seed(GVR.deployments, { metadata: { name: 'web', namespace: 'ns' }, spec: { replicas: 4 } });
    const scale = await client.resource(GVR.deployments).namespace('ns').getSubresource<{ spec: { replicas: number } }>('web', 'scale');
    assert.equal(scale.spec.replicas, 4);
  });

  it('lists with every query parameter and deletes a collection', async () => {
    const nodes = client.resource(GVR.nodes);
    await nodes.list({ labelSelector: 'a=b', fieldSelector: 'metadata.name=n', limit: 5, continue: 'tok', resourceVersion: '10', resourceVersionMatch: 'NotOlderThan', timeoutSeconds: 9 }).catch(() => undefined);
    assert.equal(last().path, '/api/v1/nodes');
    assert.equal(last().query.toString(), 'labelSelector=a%3Db&fieldSelector=metadata.name%3Dn&limit=5&continue=tok&resourceVersion=10&resourceVersionMatch=NotOlderThan&timeoutSeconds=9');
    server.seed(GVR.nodes, { metadata: { name: 'n1' } });
    server.seed(GVR.nodes, { metadata: { name: 'n2', labels: { a: 'b' } } });
    const sel = await nodes.list({ labelSelector: 'a=b' });
    assert.deepEqual(sel.items.map((n) => n.metadata?.name), ['n2']);
    const r = await nodes.deleteCollection({ propagationPolicy: 'Background' }, { labelSelector: 'a=b' });
    assert.equal((r as Status).status, 'Success');
    assert.equal(last().query.get('labelSelector'), 'a=b');
    assert.equal(JSON.parse(last().body).propagationPolicy, 'Background');
  });

  it('follows continue tokens in listAll and keeps the first page resourceVersion', async () => {
    for (let i = 0; i < 7; i++) server.seed(GVR.leases, { metadata: { name: `l${i}`, namespace: 'ha' } });
    const before = server.requests.length;
    const all = await client.resource(GVR.leases).namespace('ha').listAll({ limit: 3 });
    assert.deepEqual(all.items.map((x) => x.metadata?.name), ['l0', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6']);
    assert.equal(all.metadata.continue, undefined);
    assert.equal(all.metadata.resourceVersion, String(server.resourceVersion()));
    const pages = server.requests.slice(before);
    assert.equal(pages.length, 3);
    assert.deepEqual(pages.map((p) => p.query.get('limit')), ['3', '3', '3']);
    assert.equal(pages[0]!.query.get('continue'), null);
    assert.ok(pages[1]!.query.get('continue'));
    const dflt = await client.resource(GVR.leases).namespace('ha').listAll();
    assert.equal(dflt.items.length, 7);
    assert.equal(last().query.get('limit'), '500');
  });

  it('lists everything again when a continue token expires', async () => {
    let n = 0;
    server.handle('GET', '/api/v1/namespaces/exp/configmaps', (req, res) => {
      n++;
      res.writeHead(req.query.get('continue') ? 410 : 200, { 'content-type': 'application/json' });
      if (req.query.get('continue')) res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 }));
      else if (req.query.get('limit')) res.end(JSON.stringify({ metadata: { continue: 'c1', resourceVersion: '5' }, items: [{ metadata: { name: 'x' } }] }));
      else res.end(JSON.stringify({ metadata: { resourceVersion: '6' }, items: [{ metadata: { name: 'x' } }, { metadata: { name: 'y' } }] }));
    });
    const all = await client.resource(GVR.configMaps).namespace('exp').listAll({ limit: 1 });
    assert.deepEqual(all.items.map((x) => x.metadata?.name), ['x', 'y']);
    assert.equal(n, 3);
  });

  it('asks for metadata only and reduces full objects when the server ignores it', async () => {
    server.seed(GVR.replicaSets, { metadata: { name: 'rs1', namespace: 'm', labels: { a: '1' } }, spec: { replicas: 1 } });
    const md = client.metadata(GVR.replicaSets).namespace('m');
    const one = await md.get('rs1');
    assert.equal(last().headers.accept, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json');
    assert.deepEqual(Object.keys(one).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.equal(one.kind, 'PartialObjectMetadata');
    const list = await md.list();
    assert.equal(last().headers.accept, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json');
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.equal(list.items[0]!.metadata.labels?.a, '1');
    server.handle('GET', '/apis/apps/v1/namespaces/full/replicasets/r', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r' }, spec: { replicas: 2 } }));
    });
    const reduced = await client.metadata(GVR.replicaSets).namespace('full').get('r');
    assert.deepEqual(reduced, { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'r' } });
  });

  it('leaves managedFields out of a metadata answer when asked', async () => {
    const managedFields = [{ manager: 'kcm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }];
    server.handle('GET', '/apis/apps/v1/namespaces/mf/replicasets/r', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'r', uid: 'u1', managedFields, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u0' }] } }));
    });
    const md = client.metadata(GVR.replicaSets).namespace('mf');
    const lean = await md.get('r', { omitManagedFields: true });
    assert.deepEqual(lean.metadata, { name: 'r', uid: 'u1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u0' }] });
    assert.equal(last().query.get('omitManagedFields'), null, 'not sent');
    assert.deepEqual((await md.get('r')).metadata.managedFields, managedFields);
  });
});

describe('typed accessors', () => {
  it('offers every built-in resource with the right path', async () => {
    const t = typed(client);
    for (const name of Object.keys(GVR) as (keyof typeof GVR)[]) assert.equal(typeof t[name], 'function', name);
    server.seed(GVR.pods, { metadata: { name: 'typed', namespace: 'tt' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    const pod = await t.pods('tt').get('typed');
    assert.equal(pod.spec?.containers[0]?.image, 'i');
    await t.deployments().list();
    assert.equal(last().path, '/apis/apps/v1/deployments');
    assert.equal(t.leases('kube-system').gvr, GVR.leases);
  });
});
