import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ALL_VERBS,
  builtinResources,
  findByShortName,
  findKind,
  findResource,
  groupVersions,
  preferredVersion,
  resolveResource,
  resourcesFor,
  resourcesInCategory,
} from './registry.js';

describe('builtin resources', () => {
  it('lists core pods as discovery does', () => {
    const pods = findResource('', 'pods')!;
    assert.equal(pods.kind, 'Pod');
    assert.equal(pods.listKind, 'PodList');
    assert.equal(pods.singular, 'pod');
    assert.equal(pods.namespaced, true);
    assert.deepEqual(pods.shortNames, ['po']);
    assert.deepEqual(pods.categories, ['all']);
    assert.deepEqual(pods.verbs, ALL_VERBS);
    assert.deepEqual(Object.keys(pods.subresources), ['binding', 'ephemeralcontainers', 'eviction', 'exec', 'log', 'portforward', 'status']);
    assert.deepEqual(pods.subresources.eviction, { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] });
    assert.deepEqual(pods.subresources.exec!.verbs, ['create', 'get']);
    assert.equal(pods.subresources.log!.kind, 'Pod');
  });

  it('gives scale subresources the autoscaling/v1 Scale kind', () => {
    for (const [g, r] of [['apps', 'deployments'], ['apps', 'replicasets'], ['apps', 'statefulsets'], ['', 'replicationcontrollers']] as const) {
      const scale = findResource(g, r)!.subresources.scale!;
      assert.deepEqual([scale.group, scale.version, scale.kind, scale.verbs], ['autoscaling', 'v1', 'Scale', ['get', 'patch', 'update']], r);
    }
    assert.equal(findResource('apps', 'daemonsets')!.subresources.scale, undefined);
  });

  it('keeps the verb exceptions of the real API server', () => {
    assert.deepEqual(findResource('', 'namespaces')!.verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(findResource('', 'namespaces')!.subresources.finalize!.verbs, ['update']);
    assert.deepEqual(findResource('', 'bindings')!.verbs, ['create']);
    assert.deepEqual(findResource('', 'componentstatuses')!.verbs, ['get', 'list']);
    assert.deepEqual(findResource('authorization.k8s.io', 'subjectaccessreviews')!.verbs, ['create']);
    assert.deepEqual(findResource('authentication.k8s.io', 'tokenreviews')!.verbs, ['create']);
    assert.deepEqual(findResource('', 'services')!.verbs, ALL_VERBS);
    assert.equal(findResource('', 'serviceaccounts')!.subresources.token!.kind, 'TokenRequest');
    assert.equal(findResource('', 'serviceaccounts')!.subresources.token!.group, 'authentication.k8s.io');
    assert.equal(findResource('certificates.k8s.io', 'certificatesigningrequests')!.subresources.approval!.kind, 'CertificateSigningRequest');
  });

  it('lists verbs sorted, and only unique resources per group version', () => {
    const seen = new Set<string>();
    for (const r of builtinResources) {
      assert.deepEqual([...r.verbs], [...r.verbs].sort(), `${r.resource}.${r.group}`);
      const key = `${r.group}/${r.version}/${r.resource}`;
      assert.equal(seen.has(key), false, key);
      seen.add(key);
      assert.equal(Object.isFrozen(r), true);
    }
    // 17 core/v1 resources + 38 in the other groups (HPA counted in v2 and v1; admissionregistration's four).
    assert.equal(builtinResources.filter((r) => r.group === '').length, 17);
    assert.equal(builtinResources.length, 55);
  });

  it('puts exactly the kubectl "all" resources in the all category', () => {
    assert.deepEqual(
      resourcesInCategory('all').map((r) => r.resource).sort(),
      ['cronjobs', 'daemonsets', 'deployments', 'horizontalpodautoscalers', 'jobs', 'pods', 'replicasets', 'replicationcontrollers', 'services', 'statefulsets'],
    );
    assert.deepEqual(findResource('apiextensions.k8s.io', 'customresourcedefinitions')!.categories, ['api-extensions']);
  });

  it('uses the irregular singular of endpoints and cluster scope where Kubernetes does', () => {
    assert.equal(findResource('', 'endpoints')!.singular, 'endpoints');
    for (const r of ['nodes', 'namespaces', 'persistentvolumes', 'componentstatuses']) assert.equal(findResource('', r)!.namespaced, false, r);
    assert.equal(findResource('rbac.authorization.k8s.io', 'clusterroles')!.namespaced, false);
    assert.equal(findResource('rbac.authorization.k8s.io', 'roles')!.namespaced, true);
  });
});

describe('lookups', () => {
  it('serves autoscaling v2 as preferred and v1 as well', () => {
    assert.deepEqual(groupVersions().find((g) => g.group === 'autoscaling')!.versions, ['v2', 'v1']);
    assert.equal(preferredVersion('autoscaling'), 'v2');
    assert.equal(findResource('autoscaling', 'horizontalpodautoscalers')!.version, 'v2');
    assert.equal(findResource('autoscaling', 'horizontalpodautoscalers', 'v1')!.version, 'v1');
    assert.equal(findResource('autoscaling', 'horizontalpodautoscalers', 'v2beta2'), undefined);
  });

  it('lists the core group first and every group once', () => {
    const groups = groupVersions().map((g) => g.group);
    assert.equal(groups[0], '');
    assert.equal(new Set(groups).size, groups.length);
    assert.equal(groups.length, 18);
    assert.ok(groups.includes('admissionregistration.k8s.io'));
  });

  it('finds resources by kind and by short name', () => {
    assert.equal(findKind('apps', 'v1', 'Deployment')!.resource, 'deployments');
    assert.equal(findKind('', 'v1', 'Binding')!.resource, 'bindings');
    assert.equal(findKind('apps', 'v1', 'Pod'), undefined);
    assert.equal(findByShortName('ev')!.group, '', 'core events win over events.k8s.io');
    assert.equal(findByShortName('crds')!.resource, 'customresourcedefinitions');
    assert.equal(findByShortName('nope'), undefined);
  });

  it('lists the resources of one group version', () => {
    assert.deepEqual(resourcesFor('batch', 'v1').map((r) => r.resource), ['cronjobs', 'jobs']);
  });

  it('resolves what a kubectl user types', () => {
    assert.equal(resolveResource('deploy')!.resource, 'deployments');
    assert.equal(resolveResource('Deployment')!.resource, 'deployments');
    assert.equal(resolveResource('pod')!.resource, 'pods');
    assert.equal(resolveResource('hpa')!.version, 'v2');
    assert.equal(resolveResource('hpa.v1.autoscaling')!.version, 'v1');
    assert.equal(resolveResource('events.events.k8s.io')!.group, 'events.k8s.io');
    assert.equal(resolveResource('widgets'), undefined);
  });
});
