/**
 * Unit tests of the StaticSite controller's pure parts: the desired
 * children and the status computed from them, and the schema.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Service } from 'kubernetes-types/core/v1.js';
import { findStatusCondition } from 'kcm/runtime';
import { validateResource } from 'kcm/testing';
import { CONTENT_HASH_ANNOTATION, computeStatus, contentHash, desiredDeployment, desiredService } from '../src/controller.js';
import { StaticSite } from '../src/resources.js';

const site = (over: Partial<StaticSite['spec']> = {}, generation = 3): StaticSite => ({
  apiVersion: 'sites.example.com/v1',
  kind: 'StaticSite',
  metadata: { name: 'home', namespace: 'web', uid: 'uid-1', generation },
  spec: { image: 'nginx:1.27', replicas: 2, content: { 'index.html': '<h1>hi</h1>' }, domain: 'home.example.com', ...over },
});

const deployment = (status: Deployment['status'], generation = 1): Deployment => ({ metadata: { name: 'home', generation }, status });
const service: Service = { spec: { clusterIP: '10.0.0.42' } };

describe('StaticSite children', () => {
  it('runs the files in a web server Deployment owned by the site, rolled by a content hash', () => {
    const d = desiredDeployment(site());
    assert.equal(d.metadata?.ownerReferences?.[0]?.kind, 'StaticSite');
    assert.equal(d.metadata?.ownerReferences?.[0]?.controller, true);
    assert.equal(d.spec?.replicas, 2);
    assert.deepEqual(d.spec?.selector?.matchLabels, { 'app.kubernetes.io/name': 'staticsite', 'app.kubernetes.io/instance': 'home' });
    const pod = d.spec!.template;
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.27');
    assert.equal(pod.spec?.volumes?.[0]?.configMap?.name, 'home-content');
    const hash = pod.metadata?.annotations?.[CONTENT_HASH_ANNOTATION];
    assert.equal(hash, contentHash({ 'index.html': '<h1>hi</h1>' }));
    assert.notEqual(desiredDeployment(site({ content: { 'index.html': '<h1>new</h1>' } })).spec!.template.metadata?.annotations?.[CONTENT_HASH_ANNOTATION], hash);
    assert.equal(contentHash({ a: '1', b: '2' }), contentHash({ b: '2', a: '1' }));
  });

  it('puts a Service on port 80 in front of the pods', () => {
    const s = desiredService(site());
    assert.deepEqual(s.spec?.ports, [{ name: 'http', port: 80, targetPort: 'http' }]);
    assert.deepEqual(s.spec?.selector, { 'app.kubernetes.io/name': 'staticsite', 'app.kubernetes.io/instance': 'home' });
    assert.equal(s.metadata?.ownerReferences?.[0]?.uid, 'uid-1');
  });
});

describe('StaticSite status', () => {
  const now = '2024-01-01T00:00:00Z';

  it('is Ready when the pods are available, Progressing while they roll, never Degraded after a good reconcile', () => {
    const rolling = computeStatus(site(), deployment({ observedGeneration: 1, replicas: 2, updatedReplicas: 1, availableReplicas: 1 }), service, now);
    assert.equal(findStatusCondition(rolling.conditions, 'Ready')?.status, 'False');
    assert.equal(findStatusCondition(rolling.conditions, 'Ready')?.reason, 'Unavailable');
    assert.equal(findStatusCondition(rolling.conditions, 'Progressing')?.reason, 'RollingOut');
    assert.equal(findStatusCondition(rolling.conditions, 'Degraded')?.status, 'False');
    const done = computeStatus({ ...site(), status: rolling }, deployment({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }), service, '2024-01-01T00:01:00Z');
    const ready = findStatusCondition(done.conditions, 'Ready')!;
    assert.deepEqual([ready.status, ready.reason, ready.message], ['True', 'Available', '2/2 web server pods available at http://home.example.com']);
    assert.equal(ready.lastTransitionTime, '2024-01-01T00:01:00Z');
    assert.equal(findStatusCondition(done.conditions, 'Progressing')?.reason, 'RolloutComplete');
    // Degraded did not change status: its transition time stays.
    assert.equal(findStatusCondition(done.conditions, 'Degraded')?.lastTransitionTime, now);
    assert.deepEqual(
      [done.replicas, done.availableReplicas, done.clusterIP, done.url, done.observedGeneration],
      [2, 2, '10.0.0.42', 'http://home.example.com', 3],
    );
    assert.equal(done.selector, 'app.kubernetes.io/name=staticsite,app.kubernetes.io/instance=home');
    for (const c of done.conditions!) assert.equal(c.observedGeneration, 3);
  });

  it('says why a site scaled to zero is not Ready', () => {
    const s = computeStatus(site({ replicas: 0 }), deployment({ observedGeneration: 1, replicas: 0 }), service, now);
    assert.equal(findStatusCondition(s.conditions, 'Ready')?.reason, 'ScaledToZero');
  });
});

describe('the StaticSite schema', () => {
  it('defaults image, replicas and content, and refuses bad domains and negative replicas', () => {
    const ok = validateResource(StaticSite, { apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'a' }, spec: { domain: 'a.example.com' } });
    assert.deepEqual(ok.errors, []);
    assert.deepEqual(ok.object.spec, { domain: 'a.example.com', image: 'nginx:1.27', replicas: 1, content: {} });
    const bad = validateResource(StaticSite, { apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'a' }, spec: { domain: 'Not A Domain', replicas: -2 } });
    assert.equal(bad.errors.length, 2, bad.errors.join('\n'));
    assert.ok(bad.errors.some((e) => e.startsWith('spec.domain: Invalid value: "Not A Domain"')));
    assert.ok(bad.errors.some((e) => e.startsWith('spec.replicas: Invalid value: -2')));
  });
});
