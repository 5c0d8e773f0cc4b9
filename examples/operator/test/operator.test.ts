/**
 * The StaticSite operator against kcm/testing: kcm's API server in this
 * process with kcm's garbage collector, namespace, Deployment and
 * ReplicaSet controllers, a scheduler and a simulated node, so the
 * operator's Deployments really become available and its children really
 * go with the site.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap, Event, Service } from 'kubernetes-types/core/v1.js';
import { GVR, isNotFound, type KubeObject } from 'kcm/client';
import { findStatusCondition, setLogOutput } from 'kcm/runtime';
import { eventually, startTestEnv, type TestEnv } from 'kcm/testing';
import { CONTENT_HASH_ANNOTATION, FINALIZER, setupStaticSiteController } from '../src/controller.js';
import { RECORDS } from '../src/dns.js';
import { StaticSite } from '../src/resources.js';
import { staticSiteWebhooks } from '../src/webhooks.js';

type Site = StaticSite & KubeObject;

describe('the StaticSite operator', () => {
  let env: TestEnv;
  let restoreLog: (line: string) => void;

  before(async () => {
    restoreLog = setLogOutput(() => {});
    env = await startTestEnv({
      crds: [StaticSite],
      controllers: ['garbagecollector', 'namespace', 'deployment', 'replicaset'],
      nodes: 1,
      webhooks: { admission: staticSiteWebhooks },
    });
    const mgr = env.newManager({ name: 'staticsite-operator' });
    setupStaticSiteController(mgr, { dnsNamespace: 'dns' });
    await env.startManager(mgr);
  });
  after(async () => {
    await env.stop();
    setLogOutput(restoreLog);
  });

  const sites = () => env.client.resource<Site>({ group: StaticSite.group, version: StaticSite.version, resource: StaticSite.plural }).namespace('default');
  const deployments = () => env.client.resource<Deployment & KubeObject>(GVR.deployments).namespace('default');
  const services = () => env.client.resource<Service & KubeObject>(GVR.services).namespace('default');
  const configMaps = (ns = 'default') => env.client.resource<ConfigMap & KubeObject>(GVR.configMaps).namespace(ns);
  const record = async (domain: string) => {
    try {
      return (await configMaps('dns').get(RECORDS)).data?.[domain];
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const reasons = async (name: string) =>
    (await env.client.resource<Event & KubeObject>(GVR.events).namespace('default').list()).items.filter((e) => e.involvedObject.name === name && e.involvedObject.kind === 'StaticSite').map((e) => e.reason);
  const create = (name: string, spec: Partial<StaticSite['spec']> = {}) =>
    sites().create({ apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name }, spec: { domain: `${name}.example.com`, content: { 'index.html': `<h1>${name}</h1>` }, ...spec } } as Site);
  const ready = async (name: string) => {
    const s = await sites().get(name);
    const c = findStatusCondition(s.status?.conditions, 'Ready');
    assert.equal(c?.status, 'True', `${name} Ready: ${JSON.stringify(c)}`);
    assert.equal(s.status?.observedGeneration, s.metadata?.generation);
    return s;
  };

  it('creates the content ConfigMap, Deployment and Service, publishes the DNS record and reports Ready', async () => {
    await create('home', { replicas: 2 });
    const site = await eventually(() => ready('home'), { timeoutMs: 20_000 });
    assert.equal(site.status?.availableReplicas, 2);
    assert.ok(site.metadata?.finalizers?.includes(FINALIZER));
    const cm = await configMaps().get('home-content');
    assert.deepEqual(cm.data, { 'index.html': '<h1>home</h1>' });
    const d = await deployments().get('home');
    for (const child of [cm, d, await services().get('home')]) {
      assert.deepEqual(
        child.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
        [['StaticSite', 'home', true]],
      );
    }
    const svc = await services().get('home');
    assert.equal(site.status?.clusterIP, svc.spec?.clusterIP);
    assert.equal(await record('home.example.com'), svc.spec?.clusterIP);
    const events = await reasons('home');
    for (const r of ['CreatedConfigMap', 'CreatedDeployment', 'CreatedService', 'DNSRecordPublished', 'Ready']) assert.ok(events.includes(r), `event ${r} in ${events.join(', ')}`);
  });

  it('rolls the pods when the content changes', async () => {
    const before = (await deployments().get('home')).spec?.template.metadata?.annotations?.[CONTENT_HASH_ANNOTATION];
    await sites().patch('home', 'merge', { spec: { content: { 'index.html': '<h1>welcome home</h1>' } } });
    await eventually(async () => assert.deepEqual((await configMaps().get('home-content')).data, { 'index.html': '<h1>welcome home</h1>' }));
    await eventually(async () => assert.notEqual((await deployments().get('home')).spec?.template.metadata?.annotations?.[CONTENT_HASH_ANNOTATION], before));
    await eventually(() => ready('home'), { timeoutMs: 20_000 });
  });

  it('scales through the scale subresource', async () => {
    await sites().updateSubresource('home', 'scale', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'home', namespace: 'default' }, spec: { replicas: 3 } });
    await eventually(async () => assert.equal((await deployments().get('home')).spec?.replicas, 3));
    const s = await eventually(() => ready('home'), { timeoutMs: 20_000 });
    await eventually(async () => assert.equal((await sites().get('home')).status?.availableReplicas, 3), { timeoutMs: 20_000 });
    const scale = await sites().getSubresource<{ status: { replicas: number; selector: string } }>('home', 'scale');
    assert.equal(scale.status.selector, 'app.kubernetes.io/name=staticsite,app.kubernetes.io/instance=home');
    assert.ok(s);
  });

  it('puts back a child changed by hand', async () => {
    await deployments().patch('home', 'merge', { spec: { replicas: 7, template: { spec: { containers: [{ name: 'web', image: 'httpd:2.4' }] } } } });
    await eventually(async () => {
      const d = await deployments().get('home');
      assert.equal(d.spec?.replicas, 3);
      assert.equal(d.spec?.template.spec?.containers[0]?.image, 'nginx:1.27');
    });
  });

  it('recreates a child deleted by hand, and follows its new cluster IP in DNS', async () => {
    const old = await services().get('home');
    await services().delete('home');
    const recreated = await eventually(async () => {
      const s = await services().get('home');
      assert.notEqual(s.metadata?.uid, old.metadata?.uid);
      return s;
    });
    await eventually(async () => assert.equal(await record('home.example.com'), recreated.spec?.clusterIP));
    await eventually(async () => assert.equal((await sites().get('home')).status?.clusterIP, recreated.spec?.clusterIP));
  });

  it('canonicalizes the domain and fills in missing content through its defaulting webhook', async () => {
    const created = await sites().create({ apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'shouty' }, spec: { domain: 'Shouty.Example.COM.' } } as Site);
    assert.equal(created.spec.domain, 'shouty.example.com');
    assert.deepEqual(created.spec.content, { 'index.html': '<h1>shouty</h1>\n' });
    await eventually(() => ready('shouty'), { timeoutMs: 20_000 });
    assert.equal(await record('shouty.example.com'), (await services().get('shouty')).spec?.clusterIP);
  });

  it('refuses a domain change with its CEL rule, as the API server checks it', async () => {
    await create('fixed');
    await assert.rejects(
      sites().patch('fixed', 'merge', { spec: { domain: 'moved.example.com' } }),
      (err: unknown) => err instanceof Error && err.message === 'StaticSite.sites.example.com "fixed" is invalid: spec: Invalid value: "object": domain is immutable: create another StaticSite for another domain',
    );
    await sites().patch('fixed', 'merge', { spec: { replicas: 2 } });
  });

  it('keeps reconciling after its watches are dropped', async () => {
    await eventually(() => assert.ok(env.faults.dropWatches() > 0));
    await create('after-drop');
    await eventually(() => ready('after-drop'), { timeoutMs: 20_000 });
  });

  it('marks a site Degraded when the API refuses a child, and heals when the spec is fixed', async () => {
    await create('bad-files', { content: { 'no/slashes': 'x' } });
    await eventually(async () => {
      const s = await sites().get('bad-files');
      const d = findStatusCondition(s.status?.conditions, 'Degraded');
      assert.equal(d?.status, 'True');
      assert.equal(d?.reason, 'ReconcileFailed');
      assert.match(d?.message ?? '', /no\/slashes/);
    });
    // Events are written asynchronously, after the status.
    await eventually(async () => assert.ok((await reasons('bad-files')).includes('ReconcileFailed')));
    // Fixing the spec heals it.
    await sites().patch('bad-files', 'merge', { spec: { content: { 'no/slashes': null, 'index.html': 'ok' } } });
    await eventually(async () => {
      await ready('bad-files');
      assert.equal(findStatusCondition((await sites().get('bad-files')).status?.conditions, 'Degraded')?.status, 'False');
    }, { timeoutMs: 20_000 });
  });

  it('removes the DNS record before the site goes, retrying a failed cleanup, and its children go with it', async () => {
    await create('temp');
    await eventually(() => ready('temp'), { timeoutMs: 20_000 });
    assert.ok(await record('temp.example.com'));
    // The DNS provider refuses the first two attempts.
    env.faults.conflictNextUpdate('configmaps', { namespace: 'dns', name: RECORDS }, 2);
    await sites().delete('temp');
    await eventually(async () => {
      await assert.rejects(sites().get('temp'), (err: unknown) => isNotFound(err));
    }, { timeoutMs: 20_000 });
    assert.equal(await record('temp.example.com'), undefined);
    assert.ok(await record('home.example.com'), 'other records stay');
    assert.equal(env.faults.injected().conflicts, 2);
    const events = await reasons('temp');
    assert.ok(events.includes('DNSCleanupFailed'), events.join(', '));
    assert.ok(events.includes('DNSRecordRemoved'), events.join(', '));
    await eventually(async () => {
      await assert.rejects(deployments().get('temp'), (err: unknown) => isNotFound(err));
      await assert.rejects(services().get('temp'), (err: unknown) => isNotFound(err));
      await assert.rejects(configMaps().get('temp-content'), (err: unknown) => isNotFound(err));
    }, { timeoutMs: 20_000 });
  });
});
