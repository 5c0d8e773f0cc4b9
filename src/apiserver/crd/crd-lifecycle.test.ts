import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function widgetCrd(extra: { scope?: string; plural?: string; group?: string; kind?: string } = {}) {
  const group = extra.group ?? 'example.com';
  const plural = extra.plural ?? 'widgets';
  const kind = extra.kind ?? 'Widget';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: extra.scope ?? 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: [plural.slice(0, 2)], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['size'],
                  properties: {
                    size: { type: 'string', enum: ['S', 'M', 'L'] },
                    replicas: { type: 'integer', minimum: 0, default: 1 },
                    selector: { type: 'string' },
                  },
                },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' } } },
              },
            },
          },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' } },
          additionalPrinterColumns: [
            { name: 'Size', type: 'string', jsonPath: '.spec.size' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      ],
    },
  };
}

async function until<T>(fn: () => Promise<T | undefined>, what: string, ms = 3000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('CustomResourceDefinition lifecycle', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const res = await s.request('POST', crdPath, widgetCrd());
    assert.equal(res.status, 201, res.text);
    await until(async () => {
      const r = await s.request('GET', `${crdPath}/widgets.example.com`);
      return r.body.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True') ? r : undefined;
    }, 'Established');
  });
  after(async () => s.close());

  it('reports NamesAccepted and Established with upstream reasons, accepted names and stored versions', async () => {
    const crd = (await s.request('GET', `${crdPath}/widgets.example.com`)).body;
    const byType = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, c]));
    assert.equal(byType.NamesAccepted.status, 'True');
    assert.equal(byType.NamesAccepted.reason, 'NoConflicts');
    assert.equal(byType.NamesAccepted.message, 'no conflicts found');
    assert.equal(byType.Established.reason, 'InitialNamesAccepted');
    assert.equal(byType.Established.message, 'the initial names have been accepted');
    assert.equal(crd.status.acceptedNames.plural, 'widgets');
    assert.equal(crd.status.acceptedNames.listKind, 'WidgetList');
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    assert.equal(crd.spec.conversion.strategy, 'None');
  });

  it('serves the group in discovery with short names, categories and subresources', async () => {
    const groups = (await s.request('GET', '/apis')).body.groups;
    const g = groups.find((x: any) => x.name === 'example.com');
    assert.deepEqual(g.versions.map((v: any) => v.version), ['v1', 'v1beta1']);
    assert.equal(g.preferredVersion.version, 'v1');
    const list = (await s.request('GET', '/apis/example.com/v1')).body;
    const names = list.resources.map((r: any) => r.name);
    assert.deepEqual(names, ['widgets', 'widgets/status', 'widgets/scale']);
    assert.deepEqual(list.resources[0].shortNames, ['wi']);
    assert.deepEqual(list.resources[0].categories, ['all']);
    assert.equal(list.resources[0].namespaced, true);
    assert.equal(list.resources[2].kind, 'Scale');
  });

  it('creates with defaults and pruning, and refuses invalid objects naming the field', async () => {
    const ok = await s.request('POST', '/apis/example.com/v1/namespaces/default/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 'S', unknown: 1 }, status: { phase: 'ignored' } });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.spec, { size: 'S', replicas: 1 });
    assert.equal(ok.body.status, undefined);
    assert.equal(ok.body.metadata.generation, 1);
    const bad = await s.request('POST', '/apis/example.com/v1/namespaces/default/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { size: 'XL', replicas: 'two' } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.reason, 'Invalid');
    assert.deepEqual(bad.body.details.causes.map((c: any) => c.field), ['spec.size', 'spec.replicas']);
    assert.match(bad.body.message, /^Widget\.example\.com "w2" is invalid: \[spec\.size: Unsupported value: "XL": supported values: "S", "M", "L", spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"\]$/);
  });

  it('serves every version from one storage with apiVersion rewritten', async () => {
    const got = await s.request('GET', '/apis/example.com/v1beta1/namespaces/default/widgets/w1');
    assert.equal(got.status, 200);
    assert.equal(got.body.apiVersion, 'example.com/v1beta1');
    assert.equal(got.body.spec.size, 'S');
  });

  it('splits status from the main resource and bumps generation on spec changes only', async () => {
    const st = await s.request('PATCH', '/apis/example.com/v1/namespaces/default/widgets/w1/status', { status: { phase: 'Ready', replicas: 1 }, spec: { size: 'L' } });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.body.status.phase, 'Ready');
    assert.equal(st.body.spec.size, 'S');
    assert.equal(st.body.metadata.generation, 1);
    const main = await s.request('PATCH', '/apis/example.com/v1/namespaces/default/widgets/w1', { spec: { size: 'M' }, status: { phase: 'Hacked' } });
    assert.equal(main.status, 200, main.text);
    assert.equal(main.body.spec.size, 'M');
    assert.equal(main.body.status.phase, 'Ready');
    assert.equal(main.body.metadata.generation, 2);
  });

  it('refuses strategic merge patches with 415', async () => {
    const r = await s.request('PATCH', '/apis/example.com/v1/namespaces/default/widgets/w1', { spec: { size: 'L' } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(r.status, 415);
  });

  it('reads and writes the scale subresource through the CRD paths', async () => {
    await s.request('PATCH', '/apis/example.com/v1/namespaces/default/widgets/w1', { spec: { selector: 'app=w1' } });
    const sc = await s.request('GET', '/apis/example.com/v1/namespaces/default/widgets/w1/scale');
    assert.equal(sc.status, 200, sc.text);
    assert.equal(sc.body.kind, 'Scale');
    assert.deepEqual(sc.body.spec, { replicas: 1 });
    assert.deepEqual(sc.body.status, { replicas: 1, selector: 'app=w1' });
    const up = await s.request('PATCH', '/apis/example.com/v1/namespaces/default/widgets/w1/scale', { spec: { replicas: 4 } });
    assert.equal(up.status, 200, up.text);
    const w = await s.request('GET', '/apis/example.com/v1/namespaces/default/widgets/w1');
    assert.equal(w.body.spec.replicas, 4);
  });

  it('renders additionalPrinterColumns in tables', async () => {
    const t = await s.request('GET', '/apis/example.com/v1/namespaces/default/widgets', undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(t.status, 200);
    assert.deepEqual(t.body.columnDefinitions.map((c: any) => c.name), ['Name', 'Size', 'Replicas', 'Age']);
    assert.deepEqual(t.body.rows[0].cells.slice(0, 3), ['w1', 'M', 4]);
    assert.match(t.body.rows[0].cells[3], /^\d+s$/);
  });

  it('publishes the schema in OpenAPI v2 and v3', async () => {
    const v2 = (await s.request('GET', '/openapi/v2')).body;
    const def = v2.definitions['com.example.v1.Widget'];
    assert.ok(def, 'definition present');
    assert.deepEqual(def['x-kubernetes-group-version-kind'], [{ group: 'example.com', version: 'v1', kind: 'Widget' }]);
    assert.equal(def.properties.spec.properties.size.type, 'string');
    const idx = (await s.request('GET', '/openapi/v3')).body;
    assert.ok(idx.paths['apis/example.com/v1']);
  });

  it('does not establish a second CRD whose kind is taken in the group', async () => {
    const dup = widgetCrd({ plural: 'gadgets', kind: 'Widget' });
    dup.spec.names.singular = 'gadget';
    const r = await s.request('POST', crdPath, dup);
    assert.equal(r.status, 201, r.text);
    const crd = await until(async () => {
      const x = (await s.request('GET', `${crdPath}/gadgets.example.com`)).body;
      return x.status?.conditions?.length ? x : undefined;
    }, 'conditions');
    const byType = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, c]));
    assert.equal(byType.NamesAccepted.status, 'False');
    assert.equal(byType.NamesAccepted.reason, 'KindConflict');
    assert.equal(byType.Established.status, 'False');
    assert.equal((await s.request('GET', '/apis/example.com/v1/namespaces/default/gadgets')).status, 404);
  });

  it('refuses invalid definitions, and webhook conversion without a webhook, with a clear message', async () => {
    const bad = widgetCrd({ plural: 'things' });
    bad.metadata.name = 'wrong.example.com';
    (bad.spec.versions[1] as any).storage = true;
    (bad.spec as any).conversion = { strategy: 'Webhook' };
    const r = await s.request('POST', crdPath, bad);
    assert.equal(r.status, 422);
    const fields = r.body.details.causes.map((c: any) => c.field);
    assert.ok(fields.includes('metadata.name'));
    assert.ok(fields.includes('spec.versions'));
    assert.ok(fields.includes('spec.conversion.webhookClientConfig'));
    assert.ok(r.body.message.includes('spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook'), r.body.message);
  });

  it('serves cluster-scoped custom resources', async () => {
    await s.request('POST', crdPath, widgetCrd({ scope: 'Cluster', plural: 'clusterwidgets', kind: 'ClusterWidget', group: 'cluster.example.com' }));
    await until(async () => ((await s.request('GET', '/apis/cluster.example.com/v1')).status === 200 ? true : undefined), 'discovery');
    const c = await s.request('POST', '/apis/cluster.example.com/v1/clusterwidgets', { metadata: { name: 'cw' }, spec: { size: 'L' } });
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.metadata.namespace, undefined);
    assert.equal(c.body.kind, 'ClusterWidget');
  });

  it('deletes every object when the CRD is deleted, then the CRD and its discovery', async () => {
    await s.request('POST', '/apis/example.com/v1/namespaces/kube-system/widgets', { metadata: { name: 'w3' }, spec: { size: 'L' } });
    const del = await s.request('DELETE', `${crdPath}/widgets.example.com`);
    assert.ok(del.status === 200 || del.status === 202, del.text);
    await until(async () => ((await s.request('GET', `${crdPath}/widgets.example.com`)).status === 404 ? true : undefined), 'CRD gone');
    assert.equal((await s.request('GET', '/apis/example.com/v1')).status, 404);
    const left = await s.storage.list('/registry/example.com/widgets/');
    assert.equal(left.items.length, 0);
    // A re-created CRD starts empty.
    await s.request('POST', crdPath, widgetCrd());
    const list = await until(async () => {
      const r = await s.request('GET', '/apis/example.com/v1/widgets');
      return r.status === 200 ? r.body : undefined;
    }, 'served again');
    assert.deepEqual(list.items, []);
  });
});
