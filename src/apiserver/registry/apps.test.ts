import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { strategyFor } from './strategy.js';

function workload(kind: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } },
      ...spec,
    },
  };
}

function create(resource: string, obj: KubeObject): KubeObject {
  const s = strategyFor('apps', resource);
  s.defaults(obj);
  s.prepareForCreate(obj);
  return obj;
}

describe('apps strategies', () => {
  it('defaults a deployment as a real cluster prints it', () => {
    const d = create('deployments', workload('Deployment'));
    const s = d.spec as any;
    assert.equal(s.replicas, 1);
    assert.deepEqual(s.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(s.revisionHistoryLimit, 10);
    assert.equal(s.progressDeadlineSeconds, 600);
    assert.equal(s.template.spec.restartPolicy, 'Always');
    assert.equal(s.template.spec.containers[0].imagePullPolicy, 'Always');
    assert.equal(s.template.spec.enableServiceLinks, undefined, 'templates do not get pod-only defaults');
    assert.equal(d.metadata?.generation, 1);
    assert.deepEqual(d.status, {});
    assert.deepEqual(strategyFor('apps', 'deployments').validate(d), []);
  });

  it('does not add rollingUpdate to a Recreate deployment', () => {
    const d = create('deployments', workload('Deployment', { strategy: { type: 'Recreate' } }));
    assert.deepEqual((d.spec as any).strategy, { type: 'Recreate' });
  });

  it('defaults statefulsets, daemonsets and replicasets', () => {
    const sts = create('statefulsets', workload('StatefulSet', {
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    }));
    const ss = sts.spec as any;
    assert.equal(ss.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(ss.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.deepEqual(ss.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.equal(ss.replicas, 1);
    assert.equal(ss.revisionHistoryLimit, 10);
    assert.equal(ss.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem');
    assert.equal(ss.volumeClaimTemplates[0].status.phase, 'Pending');

    const ds = create('daemonsets', workload('DaemonSet'));
    assert.deepEqual((ds.spec as any).updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal((ds.spec as any).revisionHistoryLimit, 10);

    const rs = create('replicasets', workload('ReplicaSet'));
    assert.equal((rs.spec as any).replicas, 1);
  });

  it('lets a statefulset mount its claim templates, and still refuses mounts of unknown volumes', () => {
    const spec = (mount: string) =>
      workload('StatefulSet', {
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      });
    const ok = create('statefulsets', spec('data'));
    (ok.spec as any).template.spec.containers[0].volumeMounts = [{ name: 'data', mountPath: '/data' }];
    assert.deepEqual(strategyFor('apps', 'statefulsets').validate(ok), []);
    const bad = structuredClone(ok);
    (bad.spec as any).template.spec.containers[0].volumeMounts = [{ name: 'nope', mountPath: '/data' }];
    assert.ok(strategyFor('apps', 'statefulsets').validate(bad).some((e) => e.message.includes('volumeMounts[0].name: Not found')));
  });

  it('rejects a selector that does not match the template labels with the upstream message', () => {
    const d = create('deployments', workload('Deployment', { selector: { matchLabels: { app: 'other' } } }));
    const msgs = strategyFor('apps', 'deployments').validate(d).map((e) => e.message);
    assert.ok(
      msgs.includes('spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'),
      msgs.join('\n'),
    );
  });

  it('requires a selector and non-negative replicas', () => {
    const d = create('replicasets', workload('ReplicaSet', { replicas: -1 }));
    delete (d.spec as any).selector;
    const msgs = strategyFor('apps', 'replicasets').validate(d).map((e) => e.message);
    assert.ok(msgs.includes('spec.replicas: Invalid value: -1: must be greater than or equal to 0'), msgs.join('\n'));
    assert.ok(msgs.includes('spec.selector: Required value'), msgs.join('\n'));
  });

  it('requires restartPolicy Always in workload templates', () => {
    const d = create('deployments', workload('Deployment'));
    (d.spec as any).template.spec.restartPolicy = 'Never';
    const msgs = strategyFor('apps', 'deployments').validate(d).map((e) => e.message);
    assert.ok(msgs.includes('spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'), msgs.join('\n'));
  });

  it('rejects both maxUnavailable and maxSurge being zero', () => {
    const d = create('deployments', workload('Deployment', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }));
    const msgs = strategyFor('apps', 'deployments').validate(d).map((e) => e.message);
    assert.ok(msgs.includes('spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0'), msgs.join('\n'));
  });

  it('keeps the selector immutable', () => {
    const s = strategyFor('apps', 'deployments');
    const old = create('deployments', workload('Deployment'));
    const next = structuredClone(old);
    (next.spec as any).selector = { matchLabels: { app: 'web2' } };
    (next.spec as any).template.metadata.labels = { app: 'web2' };
    const msgs = s.validateUpdate(next, old).map((e) => e.message);
    assert.ok(
      msgs.includes('spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'),
      msgs.join('\n'),
    );
  });

  it('bumps generation on spec or annotation changes but not on label or status changes', () => {
    const s = strategyFor('apps', 'deployments');
    const old = create('deployments', workload('Deployment'));
    const scaled = structuredClone(old);
    (scaled.spec as any).replicas = 3;
    s.prepareForUpdate(scaled, old);
    assert.equal(scaled.metadata?.generation, 2);

    const annotated = structuredClone(old);
    annotated.metadata!.annotations = { 'deployment.kubernetes.io/revision': '2' };
    s.prepareForUpdate(annotated, old);
    assert.equal(annotated.metadata?.generation, 2);

    const labelled = structuredClone(old);
    labelled.metadata!.labels = { a: 'b' };
    (labelled.metadata as any).generation = 7;
    (labelled as any).status = { replicas: 9 };
    s.prepareForUpdate(labelled, old);
    assert.equal(labelled.metadata?.generation, 1, 'clients cannot set generation');
    assert.deepEqual(labelled.status, {});
  });

  it('records the daemonset template generation annotation and bumps it only on template changes', () => {
    const s = strategyFor('apps', 'daemonsets');
    const TG = 'deprecated.daemonset.template.generation';
    const old = create('daemonsets', workload('DaemonSet'));
    assert.equal(old.metadata?.annotations?.[TG], '1');

    const resized = structuredClone(old);
    delete resized.metadata!.annotations;
    (resized.spec as any).minReadySeconds = 5;
    s.prepareForUpdate(resized, old);
    assert.equal(resized.metadata?.annotations?.[TG], '1', 'a spec change outside the template keeps it');
    assert.equal(resized.metadata?.generation, 2);

    const updated = structuredClone(resized);
    (updated.spec as any).template.spec.containers[0].image = 'nginx:2';
    updated.metadata!.annotations = { [TG]: '9' };
    s.prepareForUpdate(updated, resized);
    assert.equal(updated.metadata?.annotations?.[TG], '2', 'clients cannot set it on update');
  });

  it('status updates keep spec and labels of a deployment', () => {
    const s = strategyFor('apps', 'deployments');
    const old = create('deployments', workload('Deployment'));
    old.metadata!.labels = { app: 'web' };
    const next = structuredClone(old);
    (next.spec as any).replicas = 5;
    next.metadata!.labels = { changed: 'yes' };
    next.status = { replicas: 1, observedGeneration: 1 };
    s.prepareForStatusUpdate!(next, old);
    assert.equal((next.spec as any).replicas, 1);
    assert.deepEqual(next.metadata!.labels, { app: 'web' });
    assert.deepEqual(next.status, { replicas: 1, observedGeneration: 1 });
  });

  it('forbids statefulset spec changes outside the mutable fields', () => {
    const s = strategyFor('apps', 'statefulsets');
    const old = create('statefulsets', workload('StatefulSet', { serviceName: 'web' }));
    const ok = structuredClone(old);
    (ok.spec as any).replicas = 4;
    (ok.spec as any).template.spec.containers[0].image = 'nginx:2';
    assert.deepEqual(s.validateUpdate(ok, old), []);
    const bad = structuredClone(old);
    (bad.spec as any).serviceName = 'other';
    assert.ok(s.validateUpdate(bad, old).some((e) => e.message.startsWith("spec: Forbidden: updates to statefulset spec for fields other than 'replicas'")));
  });

  it('reads and writes the scale subresource', () => {
    const s = strategyFor('apps', 'deployments');
    const d = create('deployments', workload('Deployment', { replicas: 3 }));
    (d.metadata as any).resourceVersion = '42';
    d.status = { replicas: 2 };
    const scale = s.scale!.get(d);
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.metadata?.name, 'web');
    assert.equal(scale.metadata?.resourceVersion, '42');
    assert.equal(scale.spec?.replicas, 3);
    assert.equal(scale.status?.replicas, 2);
    assert.equal(scale.status?.selector, 'app=web');
    s.scale!.set(d, 7);
    assert.equal((d.spec as any).replicas, 7);
    assert.ok(strategyFor('apps', 'statefulsets').scale);
    assert.ok(strategyFor('apps', 'replicasets').scale);
    assert.equal(strategyFor('apps', 'daemonsets').scale, undefined);
  });

  it('exposes status.replicas as a replicaset field', () => {
    const rs = create('replicasets', workload('ReplicaSet'));
    rs.status = { replicas: 3 };
    assert.equal(strategyFor('apps', 'replicasets').fields(rs)['status.replicas'], '3');
  });
});
