import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import type { KubeObject } from '../api/types.js';
import { isInvalid, StatusError } from '../client/errors.js';
import { startTestEnv, type TestEnv } from '../testing/test-env.js';
import { validateResource } from '../testing/validate.js';
import { setLogOutput } from '../util/log/logger.js';
import type { ObjectOf } from './kinds.js';
import { customResourceDefinition, defineResource, pluralize } from './resource.js';
import { Site, SiteV1beta1 } from './testdata/site-resource.js';

type SiteObject = ObjectOf<typeof Site>;

describe('defineResource', () => {
  it('derives names the way kubebuilder does, with overrides', () => {
    assert.deepEqual(['Widget', 'Policy', 'Ingress', 'Box', 'Patch', 'Gateway', 'Status'].map(pluralize), ['widgets', 'policies', 'ingresses', 'boxes', 'patches', 'gateways', 'statuses']);
    const d = defineResource({ group: 'x.example.com', version: 'v1', kind: 'Octopus', plural: 'octopi', singular: 'octo', scope: 'Cluster', spec: Type.Object({}) });
    assert.deepEqual([d.plural, d.singular, d.listKind, d.namespaced, d.apiVersion, d.kind], ['octopi', 'octo', 'OctopusList', false, 'x.example.com/v1', 'Octopus']);
    assert.throws(() => defineResource({ group: 'nodots', version: 'v1', kind: 'A', spec: Type.Object({}) }), /must be a domain name/);
  });

  it('makes the CustomResourceDefinition: names, scope, required spec, status and scale subresources, printer columns, rules', () => {
    const crd = Site.crd();
    assert.equal(crd.metadata?.name, 'staticsites.sites.example.com');
    assert.deepEqual(crd.spec.names, { kind: 'StaticSite', listKind: 'StaticSiteList', plural: 'staticsites', singular: 'staticsite', shortNames: ['site'], categories: ['all'] });
    assert.equal(crd.spec.scope, 'Namespaced');
    const v = crd.spec.versions[0]!;
    assert.deepEqual([v.name, v.served, v.storage], ['v1', true, true]);
    assert.deepEqual(v.subresources, { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } });
    assert.deepEqual(
      v.additionalPrinterColumns?.map((c) => c.name),
      ['Domain', 'Replicas', 'Ready', 'Age'],
    );
    const root = v.schema!.openAPIV3Schema!;
    assert.deepEqual(root.required, ['spec']);
    assert.deepEqual(Object.keys(root.properties!), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    assert.equal(root.description, 'A static web site.');
    assert.deepEqual(root.properties!.spec!.required, ['image', 'replicas', 'content', 'domain']);
    const ruled = defineResource({ group: 'x.example.com', version: 'v1', kind: 'Range', spec: Type.Object({ min: Type.Integer(), max: Type.Integer() }), validations: [{ rule: 'self.spec.min <= self.spec.max', message: 'min > max' }] });
    assert.deepEqual((ruled.openAPIV3Schema as Record<string, unknown>)['x-kubernetes-validations'], [{ rule: 'self.spec.min <= self.spec.max', message: 'min > max' }]);
  });

  it('combines versions of one kind into one CRD with one storage version', () => {
    const crd = customResourceDefinition(Site, SiteV1beta1);
    assert.deepEqual(
      crd.spec.versions.map((v) => [v.name, v.storage]),
      [
        ['v1', true],
        ['v1beta1', false],
      ],
    );
    assert.throws(() => customResourceDefinition(SiteV1beta1), /exactly one version must have storage: true \(have 0\)/);
    const other = defineResource({ group: 'other.example.com', version: 'v2', kind: 'StaticSite', spec: Type.Object({}) });
    assert.throws(() => customResourceDefinition(Site, other), /does not match/);
  });

  it('types objects from the schema', () => {
    const site: SiteObject = { apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'a' }, spec: { image: 'nginx', replicas: 2, content: { 'index.html': 'hi' }, domain: 'a.example.com', maxSurge: '25%', note: null } };
    // @ts-expect-error replicas is an integer, not a string
    site.spec.replicas = '3';
    // @ts-expect-error tier is 'free' or 'pro'
    site.spec.tier = 'gold';
    site.status = { availableReplicas: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'Up', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' }] };
    assert.equal(site.status.availableReplicas, 1);
  });
});

describe('defined resources on the API server', () => {
  let env: TestEnv;
  let restoreLog: (line: string) => void;
  before(async () => {
    restoreLog = setLogOutput(() => {});
    env = await startTestEnv({ crds: [customResourceDefinition(Site, SiteV1beta1)] });
  });
  after(async () => {
    await env.stop();
    setLogOutput(restoreLog);
  });

  const sites = () => env.client.resource<SiteObject & KubeObject>({ group: 'sites.example.com', version: 'v1', resource: 'staticsites' }).namespace('default');

  it('is accepted, defaults missing fields, and refuses invalid objects with the schema\'s messages, as validateResource predicts', async () => {
    const created = await sites().create({ apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'a' }, spec: { content: {}, domain: 'a.example.com' } } as unknown as SiteObject & KubeObject);
    assert.equal(created.spec.image, 'nginx:1.27');
    assert.equal(created.spec.replicas, 1);
    const local = validateResource(Site, { apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'a' }, spec: { content: {}, domain: 'a.example.com' } });
    assert.deepEqual(local.errors, []);
    assert.deepEqual(local.object.spec, created.spec);

    const bad = { apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'b' }, spec: { replicas: -1, content: {}, domain: 'Bad_Domain', tier: 'gold', bogus: true } };
    const predicted = validateResource(Site, bad);
    assert.deepEqual(predicted.unknownFields, ['spec.bogus']);
    assert.ok(predicted.errors.length >= 3, predicted.errors.join('\n'));
    try {
      await sites().create(bad as unknown as SiteObject & KubeObject);
      assert.fail('created an invalid object');
    } catch (err) {
      assert.ok(isInvalid(err), String(err));
      const causes = ((err as StatusError).status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
      assert.deepEqual([...causes].sort(), [...predicted.errors].sort());
    }
  });

  it('serves the scale subresource and the printer columns', async () => {
    await sites().create({ apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'scaled' }, spec: { replicas: 2, content: {}, domain: 's.example.com' } } as unknown as SiteObject & KubeObject);
    const scale = await sites().getSubresource<{ spec: { replicas: number } }>('scaled', 'scale');
    assert.equal(scale.spec.replicas, 2);
    await sites().updateSubresource('scaled', 'scale', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: 5 } });
    assert.equal((await sites().get('scaled')).spec.replicas, 5);
    const table = await env.client.request<{ columnDefinitions: { name: string }[] }>('GET', '/apis/sites.example.com/v1/namespaces/default/staticsites', {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Domain', 'Replicas', 'Ready', 'Age'],
    );
  });
});
