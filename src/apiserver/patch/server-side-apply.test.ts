import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serverSideApply, recordUpdate, defaultFieldManager } from './server-side-apply.js';
import { componentUserAgent } from '../../client/rest-config.js';
import type { KubeObject } from '../../api/types.js';
import { StatusError } from '../../client/errors.js';

const gvk = { group: 'apps', version: 'v1', kind: 'Deployment' };
const T = '2024-01-01T00:00:00Z';
const apply = (live: KubeObject | undefined, cfg: KubeObject, manager = 'alice', force = false) => serverSideApply(live, cfg, { fieldManager: manager, force, gvk, now: T });

function cfg(replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
    spec: { replicas, template: { spec: { containers: [{ name: 'app', image: 'app:1' }] } }, ...extra },
  };
}

describe('server-side apply', () => {
  it('creates the object and records an Apply entry in FieldsV1 format', () => {
    const out = apply(undefined, cfg(1));
    assert.equal((out.spec as any).replicas, 1);
    const mf = out.metadata!.managedFields!;
    assert.equal(mf.length, 1);
    assert.equal(mf[0]!.manager, 'alice');
    assert.equal(mf[0]!.operation, 'Apply');
    assert.equal(mf[0]!.apiVersion, 'apps/v1');
    assert.equal(mf[0]!.time, T);
    assert.deepEqual(mf[0]!.fieldsV1, {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': { '.': {}, 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } },
    });
  });

  it('merges containers by name and keeps fields of other managers', () => {
    let obj = apply(undefined, cfg(1));
    const bob: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template: { spec: { containers: [{ name: 'side', image: 's:1' }] } } } };
    obj = apply(obj, bob, 'bob');
    assert.deepEqual((obj.spec as any).template.spec.containers.map((c: any) => c.name), ['app', 'side']);
    assert.equal(obj.metadata!.managedFields!.length, 2);
  });

  it('removes fields the manager stopped applying when no one else owns them', () => {
    let obj = apply(undefined, cfg(1, { minReadySeconds: 5 }));
    obj = apply(obj, cfg(1));
    assert.equal((obj.spec as any).minReadySeconds, undefined);
    obj = apply(obj, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 1, template: { spec: { containers: [] } } } });
    assert.deepEqual((obj.spec as any).template.spec.containers, []);
  });

  it('answers 409 naming the manager and field when another manager owns a changed value', () => {
    let obj = apply(undefined, cfg(1));
    recordUpdate(structuredClone(obj), (obj = { ...structuredClone(obj), spec: { ...(obj.spec as any), replicas: 3 } }), 'kubectl-client-side-apply', T);
    assert.throws(() => apply(obj, cfg(1, {}), 'alice'), (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.equal(e.code, 409);
      assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
      assert.deepEqual(e.status.details!.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using apps/v1', field: '.spec.replicas' }]);
      return true;
    });
  });

  it('takes ownership with force', () => {
    let obj = apply(undefined, cfg(1));
    const upd = { ...structuredClone(obj), spec: { ...(obj.spec as any), replicas: 3 } };
    recordUpdate(obj, upd, 'hpa', T);
    obj = apply(upd, cfg(2), 'alice', true);
    assert.equal((obj.spec as any).replicas, 2);
    const hpa = obj.metadata!.managedFields!.find((m) => m.manager === 'hpa');
    assert.equal(hpa, undefined, 'hpa owned only replicas and lost it');
  });

  it('keeps the status owners when the main resource is updated', () => {
    let obj = apply(undefined, cfg(1));
    const withStatus = { ...structuredClone(obj), status: { replicas: 1 } };
    recordUpdate(obj, withStatus, 'kube-controller-manager', T, { gvk, subresource: 'status' });
    obj = withStatus;
    const spec = { ...structuredClone(obj), spec: { ...(obj.spec as any), minReadySeconds: 3 } };
    recordUpdate(obj, spec, 'kubectl-edit', T, { gvk });
    const status = spec.metadata!.managedFields!.find((m) => m.manager === 'kube-controller-manager');
    assert.ok(status, 'the status manager keeps its entry');
    assert.equal(status.subresource, 'status');
    assert.deepEqual(status.fieldsV1, { 'f:status': { 'f:replicas': {} } });
  });

  it('does not conflict when the applied value equals the live one', () => {
    const obj = apply(undefined, cfg(1), 'alice');
    const out = apply(obj, cfg(1), 'bob');
    assert.equal(out.metadata!.managedFields!.length, 2);
  });
});

describe('server-side apply after client-side apply', () => {
  // What `kubectl apply` (client-side) leaves: the annotation and a kubectl-client-side-apply Update entry.
  function clientSideApplied(image: string): KubeObject {
    const manifest: KubeObject = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 80 }] }] } } },
    };
    const live: KubeObject = structuredClone(manifest);
    live.metadata!.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(manifest) };
    (live.spec as any).template.spec.containers[0].ports[0].protocol = 'TCP';
    recordUpdate(undefined, live, 'kubectl-client-side-apply', T);
    return live;
  }
  const manifest = (image: string, replicas = 1): KubeObject => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { replicas, template: { spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 80 }] }] } } },
  });

  it('treats an applied port without protocol as the stored TCP port, so re-applying it is no conflict', () => {
    const live = clientSideApplied('app:1');
    const out = apply(live, manifest('app:1'), 'other');
    assert.deepEqual((out.spec as any).template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
  });

  it('lets kubectl take over fields its last-applied annotation still matches, without --force-conflicts', () => {
    const live = clientSideApplied('app:1');
    const out = apply(live, manifest('app:2', 3), 'kubectl');
    assert.equal((out.spec as any).template.spec.containers[0].image, 'app:2');
    assert.equal((out.spec as any).replicas, 3);
    const csa = out.metadata!.managedFields!.find((m) => m.manager === 'kubectl-client-side-apply');
    assert.equal((csa?.fieldsV1 as any)?.['f:spec']?.['f:replicas'], undefined);
  });

  it('still reports conflicts on fields someone changed since the last client-side apply', () => {
    const live = clientSideApplied('app:1');
    const edited = structuredClone(live);
    (edited.spec as any).replicas = 5;
    recordUpdate(live, edited, 'kubectl-scale', T);
    assert.throws(() => apply(edited, manifest('app:2', 3), 'kubectl'), (e: unknown) => e instanceof StatusError && /conflict with "kubectl-scale".*\.spec\.replicas/.test(e.message) && !/image/.test(e.message));
  });

  it('keeps conflicts for managers other than kubectl', () => {
    const live = clientSideApplied('app:1');
    assert.throws(() => apply(live, manifest('app:2'), 'helm'), (e: unknown) => e instanceof StatusError && e.status.code === 409);
  });
});

describe('recordUpdate', () => {
  it('gives the updater the fields it changed and takes them from others', () => {
    const old = apply(undefined, cfg(1));
    const upd: KubeObject = structuredClone(old);
    (upd.spec as any).replicas = 4;
    upd.metadata!.labels!.team = 'x';
    recordUpdate(old, upd, 'kubectl-edit', T);
    const mf = upd.metadata!.managedFields!;
    const edit = mf.find((m) => m.manager === 'kubectl-edit')!;
    assert.equal(edit.operation, 'Update');
    assert.deepEqual(edit.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:team': {} } }, 'f:spec': { 'f:replicas': {} } });
    const alice = mf.find((m) => m.manager === 'alice')!;
    assert.equal((alice.fieldsV1 as any)['f:spec']['f:replicas'], undefined);
  });

  it('records a create as owning every field set', () => {
    const obj = cfg(1);
    recordUpdate(undefined, obj, 'kubectl-create', T);
    assert.equal(obj.metadata!.managedFields![0]!.manager, 'kubectl-create');
    assert.ok((obj.metadata!.managedFields![0]!.fieldsV1 as any)['f:spec']['f:replicas']);
  });

  it('picks the manager from the user agent when none is given', () => {
    assert.equal(defaultFieldManager('', 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl');
    assert.equal(defaultFieldManager('mine', 'kubectl/v1.32.0'), 'mine');
    // kcm's components write as the ones they stand in for: a pod's managers are kube-controller-manager, kube-scheduler and kubelet.
    for (const c of ['kube-controller-manager', 'kube-scheduler', 'kubelet'] as const) assert.equal(defaultFieldManager('', componentUserAgent(c)), c);
    assert.equal(defaultFieldManager('', `${componentUserAgent('kube-controller-manager')}/replicaset-controller`), 'kube-controller-manager');
  });
});
