import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareKubeAwareVersions, newResourceTable } from '../resources.js';
import { servedResourcesOf } from './custom-resource.js';
import { startTestServer } from '../test-server.js';
import { newMemoryStorage } from '../storage/memory.js';

const crd = (versions: { name: string; served: boolean; storage: boolean }[]) => ({
  metadata: { name: 'foos.x.io' },
  spec: {
    group: 'x.io',
    scope: 'Namespaced',
    names: { plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList' },
    versions: versions.map((v) => ({ ...v, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
  },
});

describe('dynamic resource table', () => {
  it('orders versions as Kubernetes prefers them', () => {
    const vs = ['v1alpha1', 'foo1', 'v2beta1', 'v1', 'v10', 'v2', 'v1beta2', 'foo10'];
    assert.deepEqual([...vs].sort(compareKubeAwareVersions), ['v10', 'v2', 'v1', 'v2beta1', 'v1beta2', 'v1alpha1', 'foo1', 'foo10']);
  });

  it('adds and removes a CRD group, notifying listeners, with the storage version for keys', () => {
    const t = newResourceTable();
    let changes = 0;
    t.onChange(() => changes++);
    t.setDynamic('foos.x.io', servedResourcesOf(crd([{ name: 'v1beta1', served: true, storage: true }, { name: 'v1', served: true, storage: false }, { name: 'v2', served: false, storage: false }]) as never));
    assert.deepEqual(t.groups().find((g) => g.group === 'x.io')?.versions, ['v1', 'v1beta1']);
    assert.equal(t.find('x.io', 'v1', 'foos')?.kind, 'Foo');
    assert.equal(t.find('x.io', 'v2', 'foos'), undefined);
    assert.equal(t.storageResource('x.io', 'foos')?.version, 'v1beta1');
    t.setDynamic('foos.x.io', []);
    assert.equal(t.find('x.io', 'v1', 'foos'), undefined);
    assert.equal(t.groups().some((g) => g.group === 'x.io'), false);
    assert.equal(changes, 2);
  });

  it('never replaces a built-in resource', () => {
    const t = newResourceTable();
    const before = t.find('apps', 'v1', 'deployments');
    const fake = servedResourcesOf({ ...crd([{ name: 'v1', served: true, storage: true }]), spec: { ...crd([]).spec, group: 'apps', names: { plural: 'deployments', singular: 'deployment', kind: 'Deployment', listKind: 'DeploymentList' }, versions: crd([{ name: 'v1', served: true, storage: true }]).spec.versions } } as never);
    t.setDynamic('deployments.apps', fake);
    assert.equal(t.find('apps', 'v1', 'deployments'), before);
  });
});

describe('CRDs across restarts', () => {
  it('serves stored CRDs and their objects as soon as a new server starts', async () => {
    const storage = newMemoryStorage();
    const a = await startTestServer({ storage });
    const def = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd([{ name: 'v1', served: true, storage: true }]) };
    assert.equal((await a.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', def)).status, 201);
    for (let i = 0; i < 100 && (await a.request('GET', '/apis/x.io/v1')).status !== 200; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await a.request('POST', '/apis/x.io/v1/namespaces/default/foos', { metadata: { name: 'f' }, anything: { goes: true } })).status, 201);
    await a.close();
    const b = await startTestServer({ storage });
    try {
      const got = await b.request('GET', '/apis/x.io/v1/namespaces/default/foos/f');
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body.anything, { goes: true });
    } finally {
      await b.close();
      await storage.close();
    }
  });
});
