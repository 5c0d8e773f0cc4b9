/**
 * Storage out of the box with kubectl against `kcm up`: the default
 * StorageClass `standard`, the local-path provisioner (volumes under
 * <data-dir>/volumes), reclaim policy Delete, expansion, and a StatefulSet
 * whose claims bind, survive a scale-down and are reused on scale-up.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor, type KcmProcess } from './harness.js';
import { onRealCluster, startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  if (!onRealCluster) kcm = await startCluster();
});
after(async () => {
  await kcm?.stop();
});

interface Claim {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  spec: { storageClassName?: string; volumeName?: string; resources: { requests: { storage: string } } };
  status?: { phase?: string; capacity?: { storage?: string }; conditions?: Array<{ type: string }> };
}
interface Volume {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    capacity: { storage: string };
    hostPath?: { path: string };
    persistentVolumeReclaimPolicy?: string;
    nodeAffinity?: { required?: { nodeSelectorTerms?: Array<{ matchExpressions?: Array<{ key: string; values?: string[] }> }> } };
    claimRef?: { name?: string; uid?: string };
  };
  status?: { phase?: string };
}

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '-n', 'default', '-f', '-'], { input: JSON.stringify(obj) });
async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kcm.kubectlOk(['get', '-n', 'default', '-o', 'json', ...args])) as T;
}
async function exists(args: string[]): Promise<boolean> {
  const r = await kcm.kubectl(['get', '-n', 'default', ...args]);
  return r.code === 0;
}
async function eventReasons(claim: string): Promise<string[]> {
  // Not filtered by kind: events about objects a controller first saw in a list carry none (tools/record's getReference has no scheme).
  const list = await getJson<{ items: Array<{ reason: string }> }>(['events', '--field-selector', `involvedObject.name=${claim}`]);
  return list.items.map((e) => e.reason);
}
const claimOf = (name: string, size = '1Gi', extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...extra },
});

describe('storage with kubectl', { skip: onRealCluster ? 'kcm up only' : undefined, timeout: 240_000 }, () => {
  it('creates the default StorageClass standard', async () => {
    const sc = await waitFor(
      async () => ((await exists(['storageclass', 'standard'])) ? getJson<Record<string, unknown> & { metadata: { annotations?: Record<string, string> } }>(['storageclass', 'standard']) : undefined),
      30_000,
      'storageclass standard',
    );
    assert.equal(sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
    assert.equal(sc.provisioner, 'local-path.kcm.io');
    assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer');
    assert.equal(sc.reclaimPolicy, 'Delete');
    assert.equal(sc.allowVolumeExpansion, true);
    const table = await kcm.kubectlOk(['get', 'storageclass']);
    assert.match(table, /standard \(default\)\s+local-path\.kcm\.io\s+Delete\s+WaitForFirstConsumer\s+true/);
  });

  it('provisions a claim on the selected node, expands it, and deletes the volume with the claim', async () => {
    await apply(claimOf('manual'));
    const pending = await getJson<Claim>(['pvc', 'manual']);
    assert.equal(pending.spec.storageClassName, 'standard', 'DefaultStorageClass admission filled the class');
    // WaitForFirstConsumer: nothing until a node is selected (here by hand, as the scheduler would).
    await waitFor(async () => (await eventReasons('manual')).includes('WaitForFirstConsumer') || undefined, 30_000, 'WaitForFirstConsumer event');
    assert.equal((await getJson<Claim>(['pvc', 'manual'])).spec.volumeName ?? '', '');
    await kcm.kubectlOk(['annotate', '-n', 'default', 'pvc', 'manual', 'volume.kubernetes.io/selected-node=kcm-node-1']);
    const bound = await waitFor(async () => {
      const c = await getJson<Claim>(['pvc', 'manual']);
      return c.status?.phase === 'Bound' ? c : undefined;
    }, 30_000, 'claim Bound');
    const pvName = `pvc-${bound.metadata.uid}`;
    assert.equal(bound.spec.volumeName, pvName);
    assert.equal(bound.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], 'local-path.kcm.io');
    const pv = await getJson<Volume>(['pv', pvName]);
    assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'local-path.kcm.io');
    assert.equal(pv.spec.capacity.storage, '1Gi');
    assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
    assert.deepEqual(pv.spec.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0], { key: 'kubernetes.io/hostname', operator: 'In', values: ['kcm-node-1'] });
    const dir = join(kcm.dataDir, 'volumes', pvName);
    assert.equal(pv.spec.hostPath?.path, dir);
    assert.ok(existsSync(dir), 'volume directory exists');
    const reasons = await eventReasons('manual');
    for (const r of ['ExternalProvisioning', 'Provisioning', 'ProvisioningSucceeded']) assert.ok(reasons.includes(r), `${r} in ${reasons.join(',')}`);

    // Expansion: the expand controller hands it to the external resizer (the provisioner), which grows the volume and the claim.
    await kcm.kubectlOk(['patch', '-n', 'default', 'pvc', 'manual', '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage: '3Gi' } } } })]);
    await waitFor(async () => {
      const c = await getJson<Claim>(['pvc', 'manual']);
      return c.status?.capacity?.storage === '3Gi' && !(c.status.conditions ?? []).length ? true : undefined;
    }, 30_000, 'claim expanded');
    assert.equal((await getJson<Volume>(['pv', pvName])).spec.capacity.storage, '3Gi');
    // Events are recorded asynchronously by each component: poll. The expand controller's ExternalExpanding is not
    // among them: it records it only when it sees the claim still to be expanded, and kcm's resizer (like an external
    // resizer for a CSI volume, which does not wait for that controller) can finish first under load; the controller's
    // unit tests cover the event.
    const expansion = ['Resizing', 'FileSystemResizeRequired', 'FileSystemResizeSuccessful'];
    let after: string[] = [];
    await waitFor(async () => {
      after = await eventReasons('manual');
      return expansion.every((r) => after.includes(r)) || undefined;
    }, 10_000, 'expansion events').catch(() => undefined);
    for (const r of expansion) assert.ok(after.includes(r), `${r} in ${after.join(',')}`);

    // Reclaim policy Delete: the claim goes, so do the volume and its data.
    await kcm.kubectlOk(['delete', '-n', 'default', 'pvc', 'manual', '--wait=true', '--timeout=30s'], { timeoutMs: 40_000 });
    await waitFor(async () => !(await exists(['pv', pvName])) || undefined, 30_000, 'volume deleted');
    assert.ok(!existsSync(dir), 'volume directory removed');
  });

  it('refuses to grow a claim whose class does not allow expansion', async () => {
    await apply({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fixed' }, provisioner: 'local-path.kcm.io', volumeBindingMode: 'Immediate', allowVolumeExpansion: false });
    await apply(claimOf('fixed', '1Gi', { storageClassName: 'fixed' }));
    await waitFor(async () => (await getJson<Claim>(['pvc', 'fixed'])).status?.phase === 'Bound' || undefined, 30_000, 'Immediate claim Bound');
    const r = await kcm.kubectl(['patch', '-n', 'default', 'pvc', 'fixed', '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage: '2Gi' } } } })]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/);
  });

  // Needs the scheduler's WaitForFirstConsumer support (VolumeBinding sets volume.kubernetes.io/selected-node).
  it('runs a StatefulSet with volumeClaimTemplates whose claims survive a scale-down and are reused on scale-up', async () => {
    const set = (replicas: number) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        replicas,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'busybox', command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    await apply(set(3));
    const readyPods = async (n: number) => {
      const s = await getJson<{ status?: { readyReplicas?: number } }>(['statefulset', 'db']);
      return (s.status?.readyReplicas ?? 0) === n || undefined;
    };
    await waitFor(() => readyPods(3), 120_000, 'three ready pods');
    const volumes = new Map<string, string>();
    for (const i of [0, 1, 2]) {
      const c = await getJson<Claim>(['pvc', `data-db-${i}`]);
      assert.equal(c.status?.phase, 'Bound', `data-db-${i} Bound`);
      volumes.set(c.metadata.name, c.spec.volumeName ?? '');
      const pod = await getJson<{ spec: { nodeName?: string } }>(['pod', `db-${i}`]);
      const pv = await getJson<Volume>(['pv', c.spec.volumeName ?? '']);
      assert.deepEqual(pv.spec.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values, [pod.spec.nodeName], 'volume on the pod node');
    }

    await kcm.kubectlOk(['scale', '-n', 'default', 'statefulset', 'db', '--replicas=1']);
    await waitFor(async () => !(await exists(['pod', 'db-2'])) && !(await exists(['pod', 'db-1'])) || undefined, 60_000, 'scaled down');
    for (const i of [1, 2]) assert.equal((await getJson<Claim>(['pvc', `data-db-${i}`])).status?.phase, 'Bound', 'claims kept after scale-down');

    await kcm.kubectlOk(['scale', '-n', 'default', 'statefulset', 'db', '--replicas=3']);
    await waitFor(() => readyPods(3), 120_000, 'three ready pods again');
    for (const i of [0, 1, 2]) {
      const c = await getJson<Claim>(['pvc', `data-db-${i}`]);
      assert.equal(c.spec.volumeName, volumes.get(c.metadata.name), `data-db-${i} reused its volume`);
      const pod = await getJson<{ spec: { nodeName?: string } }>(['pod', `db-${i}`]);
      const pv = await getJson<Volume>(['pv', c.spec.volumeName ?? '']);
      assert.deepEqual(pv.spec.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values, [pod.spec.nodeName], 'pod back on its volume node');
    }
  });
});
