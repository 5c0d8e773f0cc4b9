import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, eventually, type TestServer } from '../test-server.js';

const cms = '/api/v1/namespaces/default/configmaps';
const cm = (metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata, ...extra });
const deployment = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...spec },
});
const cannot = (kind: string, rest: string) => `${kind} in version "v1" cannot be handled as a ${kind}: json: cannot unmarshal ${rest}`;

describe('request bodies decoded as Go decodes them', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    const crd = await t.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.decode.example.com' },
      spec: { group: 'decode.example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    assert.equal(crd.status, 201, crd.text);
    await eventually(async () => (await t.request('GET', '/apis/decode.example.com/v1/widgets')).status === 200, 10_000);
  });
  after(async () => {
    await t.close();
  });

  it('decodes a null list item or map value to the zero value, which validation then judges', async () => {
    const fin = await t.request('POST', cms, cm({ name: 'fin', finalizers: [null] }));
    assert.equal(fin.status, 422, fin.text);
    assert.match(fin.body.message, /^ConfigMap "fin" is invalid: \[?metadata\.finalizers\[0\]: Invalid value: ""/);
    const labels = await t.request('POST', cms, cm({ name: 'labels', labels: { a: null } }));
    assert.equal(labels.status, 201, labels.text);
    assert.deepEqual(labels.body.metadata.labels, { a: '' });
    const owners = await t.request('POST', cms, cm({ name: 'owners', ownerReferences: [null] }));
    assert.equal(owners.status, 422, owners.text);
    assert.match(owners.body.message, /metadata\.ownerReferences\[0\]\.apiVersion: Invalid value: ""/);
    const svc = await t.request('POST', '/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [null] } });
    assert.equal(svc.status, 422, svc.text);
  });

  it('decodes null fields as left out: metadata, a pointer, a struct', async () => {
    const meta = await t.request('POST', cms, cm({}, { metadata: null }));
    assert.equal(meta.status, 422, meta.text);
    assert.equal(meta.body.message, 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');
    const d = await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('nulls', { replicas: null, strategy: null }));
    assert.equal(d.status, 201, d.text);
    assert.equal(d.body.spec.replicas, 1);
    assert.equal(d.body.spec.strategy.type, 'RollingUpdate');
  });

  it('refuses a value of the wrong type anywhere with Go\'s unmarshal error', async () => {
    const cases: [string, unknown, string][] = [
      [cms, cm({ name: 'a', labels: { a: 1 } }), cannot('ConfigMap', 'number into Go struct field ObjectMeta.metadata.labels of type string')],
      [cms, cm({ name: 'a', annotations: { a: { b: 'c' } } }), cannot('ConfigMap', 'object into Go struct field ObjectMeta.metadata.annotations of type string')],
      [cms, cm({ name: 'a', ownerReferences: ['x'] }), cannot('ConfigMap', 'string into Go struct field ObjectMeta.metadata.ownerReferences of type v1.OwnerReference')],
      [cms, cm({ name: 'a' }, { data: [] }), cannot('ConfigMap', 'array into Go struct field ConfigMap.data of type map[string]string')],
      ['/apis/apps/v1/namespaces/default/deployments', { ...deployment('a'), spec: 5 }, cannot('Deployment', 'number into Go struct field Deployment.spec of type v1.DeploymentSpec')],
      ['/apis/apps/v1/namespaces/default/deployments', deployment('a', { replicas: 3_000_000_000 }), cannot('Deployment', 'number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32')],
      ['/apis/apps/v1/namespaces/default/deployments', deployment('a', { replicas: 1.5 }), cannot('Deployment', 'number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32')],
      [cms, cm({ name: 'a' }, { metadata: 'x' }), cannot('ConfigMap', 'string into Go struct field ConfigMap.metadata of type v1.ObjectMeta')],
    ];
    for (const [path, body, message] of cases) {
      const res = await t.request('POST', path, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.message, message);
    }
  });

  it('refuses a body that is no object as the apiVersion and kind decoder does', async () => {
    const typeMeta = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
    const list = await t.request('POST', cms, '[]');
    assert.equal(list.status, 400);
    assert.equal(list.body.message, `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type ${typeMeta} (5b5d)`);
    const version = await t.request('POST', cms, '{"apiVersion":5,"kind":"ConfigMap"}');
    assert.equal(version.body.message, 'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":5,"kind":"Config ...)');
    const syntax = await t.request('POST', cms, '{"apiVersion":"v1",');
    assert.equal(syntax.status, 400);
    assert.match(syntax.body.message, /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: .+ \(\{"apiVersion":"v1",\)$/);
    const nul = await t.request('POST', cms, 'null');
    assert.equal(nul.status, 422, 'null decodes as an empty object');
  });

  it('decodes a custom resource\'s metadata alone into ObjectMeta', async () => {
    const widgets = '/apis/decode.example.com/v1/namespaces/default/widgets';
    const w = (metadata: unknown) => ({ apiVersion: 'decode.example.com/v1', kind: 'Widget', metadata });
    const labels = await t.request('POST', widgets, w({ name: 'w', labels: { a: 1 } }));
    assert.equal(labels.status, 400);
    assert.equal(labels.body.message, cannot('Widget', 'number into Go struct field ObjectMeta.labels of type string'));
    const str = await t.request('POST', widgets, w('x'));
    assert.equal(str.body.message, cannot('Widget', 'string into Go value of type v1.ObjectMeta'));
    const fin = await t.request('POST', widgets, w({ name: 'w', finalizers: [null] }));
    assert.equal(fin.status, 422, fin.text);
  });

  it('types the bodies of subresources, deletions and evictions too', async () => {
    await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('sub'));
    const scale = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/sub/scale', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'sub' }, spec: { replicas: 'x' } });
    assert.equal(scale.status, 400);
    assert.equal(scale.body.message, cannot('Scale', 'string into Go struct field ScaleSpec.spec.replicas of type int32'));
    await t.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' } });
    const finalize = await t.request('PUT', '/api/v1/namespaces/fin/finalize', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin', finalizers: [1] }, spec: { finalizers: ['kubernetes'] } });
    assert.equal(finalize.status, 400);
    assert.equal(finalize.body.message, cannot('Namespace', 'number into Go struct field ObjectMeta.metadata.finalizers of type string'));
    await t.request('POST', cms, cm({ name: 'del' }));
    const del = await t.request('DELETE', `${cms}/del`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 'x' });
    assert.equal(del.status, 400);
    assert.equal(del.body.message, cannot('DeleteOptions', 'string into Go struct field DeleteOptions.gracePeriodSeconds of type int64'));
    const evict = await t.request('POST', '/api/v1/namespaces/default/pods/p/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' }, deleteOptions: { gracePeriodSeconds: [] } });
    assert.equal(evict.status, 400);
    assert.equal(evict.body.message, 'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal array into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64');
  });

  it('refuses an applied configuration of the wrong type as structured-merge-diff does', async () => {
    const apply = (body: unknown) => t.request('PATCH', `${cms}/applied?fieldManager=m`, body, { 'Content-Type': 'application/apply-patch+yaml' });
    const cases: [unknown, string][] = [
      [{ data: { a: 1 } }, '.data.a: expected string, got &value.valueUnstructured{Value:1}'],
      [{ metadata: { name: 'applied', labels: ['x'] } }, '.metadata.labels: expected map, got &{[x]}'],
      [{ immutable: 'yes' }, '.immutable: expected boolean, got &{yes}'],
    ];
    for (const [extra, detail] of cases) {
      const res = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, ...(extra as object) });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.message, `failed to create typed patch object (/v1, Kind=ConfigMap): ${detail}`);
    }
    const nulls = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', labels: { a: null }, finalizers: [null] }, data: { b: null } });
    assert.equal(nulls.status, 422, nulls.text);
    assert.match(nulls.body.message, /metadata\.finalizers\[0\]: Invalid value: ""/);
  });

  it('sends warnings about any field name as UTF-8 and drops those with control characters', async () => {
    const res = await t.request('POST', cms, cm({ name: 'warn' }, { 'ünknöwn': 1, 'bad\u0007': 2 }));
    assert.equal(res.status, 201, res.text);
    // strconv.QuoteToASCII's form, which client-go's strconv.Unquote reads back.
    assert.equal(res.headers.warning, '299 - "unknown field \\"\\u00fcnkn\\u00f6wn\\""');
  });
});
