import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { strategyFor } from './strategy.js';
import { prepareForNamespaceFinalize } from './core.js';

function create(resource: string, obj: KubeObject, group = ''): KubeObject {
  const s = strategyFor(group, resource);
  s.defaults(obj);
  s.prepareForCreate(obj);
  return obj;
}

const msgs = (resource: string, obj: KubeObject) => strategyFor('', resource).validate(obj).map((e) => e.message);

describe('core strategies', () => {
  it('defaults a ClusterIP service', () => {
    const svc = create('services', { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    const s = svc.spec as any;
    assert.equal(s.type, 'ClusterIP');
    assert.equal(s.sessionAffinity, 'None');
    assert.deepEqual(s.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
    assert.equal(s.internalTrafficPolicy, 'Cluster');
    assert.equal(s.ipFamilyPolicy, 'SingleStack');
    assert.deepEqual(s.ipFamilies, ['IPv4']);
    assert.equal(s.externalTrafficPolicy, undefined);
    assert.deepEqual(svc.status, {});
    assert.deepEqual(strategyFor('', 'services').validate(svc), []);
  });

  it('defaults externalTrafficPolicy for NodePort and LoadBalancer services', () => {
    const svc = create('services', { metadata: { name: 'web', namespace: 'default' }, spec: { type: 'LoadBalancer', ports: [{ port: 80, targetPort: 'http' }] } });
    const s = svc.spec as any;
    assert.equal(s.externalTrafficPolicy, 'Cluster');
    assert.equal(s.allocateLoadBalancerNodePorts, true);
    assert.equal(s.ports[0].targetPort, 'http');
  });

  it('validates service names as DNS-1035 labels', () => {
    const svc = create('services', { metadata: { name: '1web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    assert.ok(msgs('services', svc).some((m) => m.startsWith('metadata.name: Invalid value: "1web": a DNS-1035 label')));
  });

  it('requires names on multiple service ports', () => {
    const svc = create('services', { metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }, { port: 443 }] } });
    assert.ok(msgs('services', svc).includes('spec.ports[0].name: Required value'));
  });

  it('keeps the allocated clusterIP when an update leaves it empty and rejects changing it', () => {
    const s = strategyFor('', 'services');
    const old = create('services', { metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    (old.spec as any).clusterIP = '10.96.0.10';
    (old.spec as any).clusterIPs = ['10.96.0.10'];
    const next = structuredClone(old);
    delete (next.spec as any).clusterIP;
    delete (next.spec as any).clusterIPs;
    s.prepareForUpdate(next, old);
    assert.equal((next.spec as any).clusterIP, '10.96.0.10');
    const changed = structuredClone(old);
    (changed.spec as any).clusterIP = '10.96.0.11';
    (changed.spec as any).clusterIPs = ['10.96.0.11'];
    assert.ok(s.validateUpdate(changed, old).some((e) => e.message === 'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set'));
  });

  it('creates namespaces Active with the kubernetes finalizer and name label', () => {
    const ns = create('namespaces', { metadata: { name: 'team-a' } });
    assert.deepEqual(ns.status, { phase: 'Active' });
    assert.deepEqual((ns.spec as any).finalizers, ['kubernetes']);
    assert.equal(ns.metadata?.labels?.['kubernetes.io/metadata.name'], 'team-a');
    assert.deepEqual(strategyFor('', 'namespaces').validate(ns), []);
    assert.equal(strategyFor('', 'namespaces').fields(ns)['status.phase'], 'Active');
    assert.equal(strategyFor('', 'namespaces').fields(ns)['metadata.namespace'], undefined);
  });

  it('validates namespace names as DNS-1123 labels', () => {
    const ns = create('namespaces', { metadata: { name: 'a.b' } });
    assert.ok(msgs('namespaces', ns).includes('metadata.name: Invalid value: "a.b": must not contain dots'));
  });

  it('changes namespace finalizers only through finalize', () => {
    const s = strategyFor('', 'namespaces');
    const old = create('namespaces', { metadata: { name: 'a' } });
    const upd = structuredClone(old);
    (upd.spec as any).finalizers = [];
    s.prepareForUpdate(upd, old);
    assert.deepEqual((upd.spec as any).finalizers, ['kubernetes']);
    const fin = structuredClone(old);
    (fin.spec as any).finalizers = [];
    fin.metadata!.labels = { x: 'y' };
    prepareForNamespaceFinalize(fin, old);
    assert.deepEqual((fin.spec as any).finalizers, []);
    assert.equal(fin.metadata?.labels?.x, undefined);
  });

  it('defaults secret type and protects immutable data', () => {
    const s = strategyFor('', 'secrets');
    const sec = create('secrets', { metadata: { name: 's', namespace: 'default' }, data: { a: 'YQ==' }, immutable: true });
    assert.equal(sec.type, 'Opaque');
    assert.equal(s.fields(sec).type, 'Opaque');
    const next = structuredClone(sec);
    (next as any).data = { a: 'Yg==' };
    assert.ok(s.validateUpdate(next, sec).some((e) => e.message === 'data: Forbidden: field is immutable when `immutable` is set'));
    const retyped = structuredClone(sec);
    retyped.type = 'kubernetes.io/tls';
    retyped.immutable = false;
    assert.ok(s.validateUpdate(retyped, sec).some((e) => e.message.startsWith('type: Invalid value: "kubernetes.io/tls": field is immutable')));
  });

  it('defaults replication controller selector, labels and replicas from the template', () => {
    const rc = create('replicationcontrollers', {
      metadata: { name: 'rc', namespace: 'default' },
      spec: { template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    });
    assert.deepEqual((rc.spec as any).selector, { app: 'x' });
    assert.deepEqual(rc.metadata?.labels, { app: 'x' });
    assert.equal((rc.spec as any).replicas, 1);
    const s = strategyFor('', 'replicationcontrollers');
    assert.deepEqual(s.validate(rc), []);
    assert.equal(s.defaultDeletePropagation, 'Orphan');
    assert.equal(s.scale!.get(rc).status?.selector, 'app=x');
  });

  it('defaults PVCs and forbids spec changes other than requests', () => {
    const s = strategyFor('', 'persistentvolumeclaims');
    const pvc = create('persistentvolumeclaims', {
      metadata: { name: 'c', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    assert.equal((pvc.spec as any).volumeMode, 'Filesystem');
    assert.deepEqual(pvc.status, { phase: 'Pending' });
    assert.deepEqual(s.validate(pvc), []);
    const grow = structuredClone(pvc);
    (grow.spec as any).resources.requests.storage = '2Gi';
    (grow.spec as any).volumeName = 'pv-1';
    // Only a bound claim's request may change (ValidatePersistentVolumeClaimUpdate).
    assert.ok(s.validateUpdate(grow, pvc).some((e) => e.message.startsWith('spec: Forbidden: spec is immutable after creation')));
    const bound = { ...structuredClone(pvc), spec: { ...(pvc.spec as any), volumeName: 'pv-1' }, status: { phase: 'Bound', capacity: { storage: '1Gi' } } };
    const grown = { ...structuredClone(bound), spec: { ...structuredClone(bound.spec), resources: { requests: { storage: '2Gi' } } } };
    assert.deepEqual(s.validateUpdate(grown as any, bound as any), []);
    // Shrinking back is allowed down to, not to, status.capacity (RecoverVolumeExpansionFailure).
    const recovering = { ...structuredClone(grown), status: { phase: 'Bound', capacity: { storage: '1Gi' } } };
    const back = { ...structuredClone(recovering), spec: { ...structuredClone(recovering.spec), resources: { requests: { storage: '1536Mi' } } } };
    assert.deepEqual(s.validateUpdate(back as any, recovering as any), []);
    const tooSmall = { ...structuredClone(recovering), spec: { ...structuredClone(recovering.spec), resources: { requests: { storage: '1Gi' } } } };
    assert.ok(s.validateUpdate(tooSmall as any, recovering as any).some((e) => e.message === 'spec.resources.requests.storage: Forbidden: field can not be less than status.capacity'));
    const bad = structuredClone(pvc);
    (bad.spec as any).accessModes = ['ReadWriteMany'];
    assert.ok(s.validateUpdate(bad, pvc).some((e) => e.message.startsWith('spec: Forbidden: spec is immutable after creation')));
  });

  it('defaults PVs to Retain and Filesystem', () => {
    const pv = create('persistentvolumes', { metadata: { name: 'pv' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' } } });
    assert.equal((pv.spec as any).persistentVolumeReclaimPolicy, 'Retain');
    assert.equal((pv.spec as any).volumeMode, 'Filesystem');
    assert.deepEqual(pv.status, { phase: 'Pending' });
    assert.deepEqual(strategyFor('', 'persistentvolumes').validate(pv), []);
  });

  it('keeps node status on create and exposes spec.unschedulable', () => {
    const s = strategyFor('', 'nodes');
    const node = create('nodes', { metadata: { name: 'n1' }, spec: { unschedulable: true }, status: { capacity: { cpu: '4' } } });
    assert.deepEqual((node.status as any).allocatable, { cpu: '4' });
    assert.equal(s.fields(node)['spec.unschedulable'], 'true');
    const upd = structuredClone(node);
    (upd.status as any).capacity = { cpu: '8' };
    s.prepareForUpdate(upd, node);
    assert.equal((upd.status as any).capacity.cpu, '4');
  });

  it('exposes event fields for field selectors', () => {
    const s = strategyFor('', 'events');
    const ev = create('events', {
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
      reason: 'Scheduled', type: 'Normal', source: { component: 'default-scheduler' },
    });
    const f = s.fields(ev);
    assert.equal(f['involvedObject.kind'], 'Pod');
    assert.equal(f['involvedObject.name'], 'web');
    assert.equal(f.reason, 'Scheduled');
    assert.equal(f.source, 'default-scheduler');
    assert.equal(f.type, 'Normal');
    assert.equal(s.allowCreateOnUpdate, true);
  });
});
