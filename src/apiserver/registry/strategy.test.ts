import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import { strategyFor, hasStrategy, selectableFields } from './strategy.js';

describe('strategyFor', () => {
  it('has a dedicated strategy for every built-in resource in gvr.ts', () => {
    for (const r of Object.values(GVR)) {
      assert.ok(hasStrategy(r.group, r.resource), `${r.resource}.${r.group}`);
      const s = strategyFor(r.group, r.resource);
      assert.equal(s.resource, r.resource);
      assert.equal(s.group, r.group);
      assert.ok(s.kind.length > 0);
      assert.equal(s.hasStatus, s.prepareForStatusUpdate !== undefined);
    }
  });

  it('gives unknown resources a custom-resource strategy', () => {
    const s = strategyFor('example.com', 'widgets', { kind: 'Widget', namespaced: true, hasStatus: true });
    const obj = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 }, status: { ready: true } };
    s.prepareForCreate(obj);
    assert.deepEqual(obj.status, {});
    assert.equal((obj.metadata as Record<string, unknown>).generation, 1);
    const next = structuredClone(obj);
    next.spec.size = 2;
    s.prepareForUpdate(next, obj);
    assert.equal((next.metadata as Record<string, unknown>).generation, 2);
    const st = structuredClone(obj) as typeof obj & { status: Record<string, unknown> };
    st.spec.size = 9;
    st.status = { ready: true };
    (st.metadata as Record<string, unknown>).labels = { a: 'b' };
    s.prepareForStatusUpdate!(st, obj);
    assert.equal(st.spec.size, 1);
    assert.deepEqual(st.status, { ready: true });
    assert.equal((st.metadata as Record<string, unknown>).labels, undefined);
  });

  it('validates object metadata for every kind', () => {
    const s = strategyFor('', 'configmaps');
    const msgs = s.validate({ metadata: { namespace: 'default', labels: { 'bad key': 'v' } } }).map((e) => e.message);
    assert.ok(msgs.includes('metadata.name: Required value: name or generateName is required'), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.startsWith('metadata.labels: Invalid value: "bad key": name part must consist of')), msgs.join('\n'));
    const cluster = strategyFor('', 'nodes').validate({ metadata: { name: 'n', namespace: 'x' } }).map((e) => e.message);
    assert.ok(cluster.includes('metadata.namespace: Forbidden: not allowed on this type'), cluster.join('\n'));
  });

  it('rejects changes to the name on update', () => {
    const s = strategyFor('', 'configmaps');
    const errs = s.validateUpdate({ metadata: { name: 'b', namespace: 'default' } }, { metadata: { name: 'a', namespace: 'default' } });
    assert.ok(errs.some((e) => e.message === 'metadata.name: Invalid value: "b": field is immutable'));
  });

  it('lists the supported field selectors per resource', () => {
    assert.deepEqual(selectableFields('', 'secrets').sort(), ['metadata.name', 'metadata.namespace', 'type']);
    assert.deepEqual(selectableFields('', 'nodes').sort(), ['metadata.name', 'spec.unschedulable']);
    assert.deepEqual(selectableFields('apps', 'deployments').sort(), ['metadata.name', 'metadata.namespace']);
    assert.ok(selectableFields('', 'pods').includes('spec.nodeName'));
    assert.ok(selectableFields('certificates.k8s.io', 'certificatesigningrequests').includes('spec.signerName'));
  });

  it('uses Background propagation unless upstream orphans', () => {
    assert.equal(strategyFor('apps', 'replicasets').defaultDeletePropagation, 'Background');
    assert.equal(strategyFor('', 'replicationcontrollers').defaultDeletePropagation, 'Orphan');
    assert.equal(strategyFor('batch', 'jobs').defaultDeletePropagation, 'Orphan');
  });

  it('defaults the smaller groups', () => {
    const hpa = { metadata: { name: 'h', namespace: 'd' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 5, behavior: {} } };
    const s = strategyFor('autoscaling', 'horizontalpodautoscalers');
    s.defaults(hpa);
    const hs = hpa.spec as Record<string, any>;
    assert.equal(hs.minReplicas, 1);
    assert.deepEqual(hs.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    // Scale-down keeps no window: the controller's --horizontal-pod-autoscaler-downscale-stabilization applies.
    assert.equal(hs.behavior.scaleDown.stabilizationWindowSeconds, undefined);
    assert.equal(hs.behavior.scaleUp.policies.length, 2);
    assert.deepEqual(s.validate(hpa), []);

    const sc: Record<string, unknown> = { metadata: { name: 'standard' }, provisioner: 'x' };
    strategyFor('storage.k8s.io', 'storageclasses').defaults(sc);
    assert.equal(sc.reclaimPolicy, 'Delete');
    assert.equal(sc.volumeBindingMode, 'Immediate');

    const rb = { metadata: { name: 'rb', namespace: 'd' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'default' }, { kind: 'User', name: 'alice' }] };
    strategyFor('rbac.authorization.k8s.io', 'rolebindings').defaults(rb);
    assert.deepEqual(rb.subjects.map((x: Record<string, unknown>) => x.apiGroup), ['', 'rbac.authorization.k8s.io']);

    const pdb = { metadata: { name: 'p', namespace: 'd' }, spec: { minAvailable: 1, maxUnavailable: 1 } };
    assert.ok(strategyFor('policy', 'poddisruptionbudgets').validate(pdb).some((e) => e.message.endsWith('minAvailable and maxUnavailable cannot be both set')));
  });
});
