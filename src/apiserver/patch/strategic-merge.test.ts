import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch } from './apply-patch.js';
import type { KubeObject } from '../../api/types.js';
import { StatusError } from '../../client/errors.js';

const deployGvk = { group: 'apps', version: 'v1', kind: 'Deployment' };
const podGvk = { group: '', version: 'v1', kind: 'Pod' };
const smp = (obj: KubeObject, patch: unknown, gvk = deployGvk) => applyPatch(obj, 'strategic', patch, { gvk, isCustomResource: false });

function deployment(): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web', tier: 'fe' }, finalizers: ['a', 'b'] },
    spec: {
      replicas: 1,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        spec: {
          containers: [
            { name: 'app', image: 'app:1', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], volumeMounts: [{ name: 'data', mountPath: '/data' }] },
            { name: 'sidecar', image: 'side:1' },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
          tolerations: [{ key: 'x', operator: 'Exists' }],
        },
      },
    },
  };
}
const podSpec = (o: KubeObject) => (o.spec as any).template.spec;

describe('strategic merge patch', () => {
  it('merges containers by name and keeps the untouched ones', () => {
    const out = smp(deployment(), { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } });
    const cs = podSpec(out).containers;
    assert.equal(cs.length, 2);
    assert.equal(cs[0].image, 'app:2');
    assert.deepEqual(cs[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.equal(cs[1].name, 'sidecar');
  });

  it('appends a container whose name is new', () => {
    const out = smp(deployment(), { spec: { template: { spec: { containers: [{ name: 'new', image: 'n:1' }] } } } });
    assert.deepEqual(podSpec(out).containers.map((c: any) => c.name), ['app', 'sidecar', 'new']);
  });

  it('merges nested lists: env by name, ports by containerPort, volumeMounts by mountPath, volumes by name', () => {
    const out = smp(deployment(), {
      spec: { template: { spec: {
        containers: [{ name: 'app', env: [{ name: 'B', value: 'two' }, { name: 'C', value: '3' }], ports: [{ containerPort: 443 }], volumeMounts: [{ mountPath: '/data', readOnly: true }] }],
        volumes: [{ name: 'cfg', configMap: { name: 'c' } }],
      } } },
    });
    const app = podSpec(out).containers[0];
    assert.deepEqual(app.env, [{ name: 'A', value: '1' }, { name: 'B', value: 'two' }, { name: 'C', value: '3' }]);
    assert.deepEqual(app.ports.map((p: any) => p.containerPort), [80, 443]);
    assert.deepEqual(app.volumeMounts, [{ name: 'data', mountPath: '/data', readOnly: true }]);
    assert.deepEqual(podSpec(out).volumes.map((v: any) => v.name), ['data', 'cfg']);
  });

  it('replaces lists without a merge strategy (tolerations)', () => {
    const out = smp(deployment(), { spec: { template: { spec: { tolerations: [{ key: 'y', operator: 'Exists' }] } } } });
    assert.deepEqual(podSpec(out).tolerations, [{ key: 'y', operator: 'Exists' }]);
  });

  it('deletes a list element with $patch: delete', () => {
    const out = smp(deployment(), { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } });
    assert.deepEqual(podSpec(out).containers.map((c: any) => c.name), ['app']);
  });

  it('replaces a whole list with a $patch: replace element', () => {
    const out = smp(deployment(), { spec: { template: { spec: { containers: [{ name: 'only', image: 'o:1' }, { $patch: 'replace' }] } } } });
    assert.deepEqual(podSpec(out).containers, [{ name: 'only', image: 'o:1' }]);
  });

  it('replaces a map with $patch: replace and empties it with $patch: delete', () => {
    const out = smp(deployment(), { spec: { strategy: { $patch: 'replace', type: 'Recreate' } } });
    assert.deepEqual((out.spec as any).strategy, { type: 'Recreate' });
    const out2 = smp(deployment(), { metadata: { labels: { $patch: 'delete' } } });
    assert.deepEqual(out2.metadata!.labels, {});
  });

  it('rejects an unknown $patch directive in a map with 400', () => {
    assert.throws(() => smp(deployment(), { spec: { strategy: { $patch: 'bogus' } } }), (e: unknown) => e instanceof StatusError && e.code === 400 && /unknown patch type: bogus/.test(e.message));
  });

  it('deletes a map key given null', () => {
    const out = smp(deployment(), { metadata: { labels: { tier: null } }, spec: { strategy: { rollingUpdate: null } } });
    assert.deepEqual(out.metadata!.labels, { app: 'web' });
    assert.deepEqual((out.spec as any).strategy, { type: 'RollingUpdate' });
  });

  it('drops keys not in $retainKeys', () => {
    const out = smp(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    assert.deepEqual((out.spec as any).strategy, { type: 'Recreate' });
  });

  it('answers 422 when the patch sets keys outside $retainKeys', () => {
    assert.throws(() => smp(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: {} } } }), (e: unknown) => e instanceof StatusError && e.code === 422 && (e.status.details?.causes?.[0]?.message ?? '').includes("doesn't match retainKeys"));
  });

  it('merges primitive lists with the merge strategy as sets (finalizers) and deletes with $deleteFromPrimitiveList', () => {
    const out = smp(deployment(), { metadata: { finalizers: ['b', 'c'] } });
    assert.deepEqual(out.metadata!.finalizers, ['a', 'b', 'c']);
    const out2 = smp(deployment(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
    assert.deepEqual(out2.metadata!.finalizers, ['b']);
  });

  it('orders list elements as $setElementOrder says, keeping server-only elements in place', () => {
    const out = smp(deployment(), { spec: { template: { spec: {
      '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }],
      containers: [{ name: 'app', image: 'app:3' }],
    } } } });
    const cs = podSpec(out).containers;
    assert.deepEqual(cs.map((c: any) => c.name), ['sidecar', 'app']);
    assert.equal(cs[1].image, 'app:3');
  });

  it('uses the Pod schema for pods (ephemeral containers merged by name)', () => {
    const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'a' }], ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } };
    const out = applyPatch(pod, 'strategic', { spec: { ephemeralContainers: [{ name: 'dbg2', image: 'busybox' }] } }, { gvk: podGvk, isCustomResource: false });
    assert.deepEqual((out.spec as any).ephemeralContainers.map((c: any) => c.name), ['dbg', 'dbg2']);
  });

  it('rejects an element without its merge key with 400', () => {
    assert.throws(() => smp(deployment(), { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }), (e: unknown) => e instanceof StatusError && e.code === 400 && /does not contain declared merge key: name/.test(e.message));
  });

  it('refuses strategic merge on custom resources with 415', () => {
    assert.throws(
      () => applyPatch({ apiVersion: 'x.io/v1', kind: 'Foo' }, 'strategic', {}, { gvk: { group: 'x.io', version: 'v1', kind: 'Foo' }, isCustomResource: true }),
      (e: unknown) => e instanceof StatusError && e.code === 415 && e.reason === 'UnsupportedMediaType',
    );
  });

  it('does not change the original object', () => {
    const d = deployment();
    const before = structuredClone(d);
    smp(d, { spec: { replicas: 3, template: { spec: { containers: [{ name: 'app', $patch: 'delete' }] } } } });
    assert.deepEqual(d, before);
  });
});
