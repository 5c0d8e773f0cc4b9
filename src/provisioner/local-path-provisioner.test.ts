import { describe, it, before, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Node, PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../api/gvr.js';
import { newControllerTestContext, type ControllerTestContext } from '../controllers/testing/test-context.js';
import type { Kube } from '../tools/cache/factory.js';
import { setLogOutput, newLogger } from '../util/log/logger.js';
import { LOCAL_PATH_PROVISIONER, PROVISIONER_FINALIZER } from './constants.js';
import { newLocalPathProvisioner, type LocalPathProvisioner } from './local-path-provisioner.js';
import { newVolumeDirs } from './volume-dirs.js';

type Pvc = Kube<PersistentVolumeClaim>;
type Pv = Kube<PersistentVolume>;

const standard = (o: Partial<StorageClass> = {}): Kube<StorageClass> => ({
  metadata: { name: 'standard' },
  provisioner: LOCAL_PATH_PROVISIONER,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
  allowVolumeExpansion: true,
  ...o,
});

const node = (name: string): Kube<Node> => ({ metadata: { name, labels: { 'kubernetes.io/hostname': name } } });

function claim(name: string, o: { node?: string; provisioner?: string; cls?: string; size?: string; mode?: 'Block' | 'Filesystem'; uid?: string } = {}): Pvc {
  const annotations: Record<string, string> = { 'volume.kubernetes.io/storage-provisioner': o.provisioner ?? LOCAL_PATH_PROVISIONER };
  if (o.node) annotations['volume.kubernetes.io/selected-node'] = o.node;
  return {
    metadata: { name, namespace: 'default', uid: o.uid ?? `uid-${name}`, annotations },
    spec: {
      storageClassName: o.cls ?? 'standard',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: o.size ?? '1Gi' } },
      ...(o.mode ? { volumeMode: o.mode } : {}),
    },
    status: { phase: 'Pending' },
  };
}

describe('local-path provisioner', () => {
  let root: string;
  let t: ControllerTestContext;
  let p: LocalPathProvisioner;
  const events = () => t.recorders.get('provisioner')?.events ?? [];
  const pvc = (name: string) => t.fake.stored<Pvc>(GVR.persistentVolumeClaims, 'default', name);
  const pv = (name: string) => t.fake.stored<Pv>(GVR.persistentVolumes, '', name);

  before(() => setLogOutput(() => {}));
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'kcm-provisioner-'));
  });
  afterEach(async () => {
    await t?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function start(seed: (t: ControllerTestContext) => void, finishNodeExpansion = true): Promise<void> {
    t = newControllerTestContext({ start: '2024-01-01T00:00:00Z', informers: ['persistentVolumeClaims', 'persistentVolumes', 'storageClasses', 'nodes'] });
    seed(t);
    p = newLocalPathProvisioner({
      client: t.ctx.client,
      informers: t.informers,
      recorder: t.ctx.recorder('provisioner'),
      clock: t.clock,
      logger: newLogger('provisioner'),
      dirs: newVolumeDirs(join(root, 'volumes')),
      finishNodeExpansion,
    });
    await t.start();
  }

  it('provisions a WaitForFirstConsumer claim once the scheduler selected a node', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard());
      t.fake.seed(GVR.nodes, node('kcm-node-1'));
      t.fake.seed(GVR.persistentVolumeClaims, claim('waiting'), claim('data', { node: 'kcm-node-1', size: '2Gi' }));
    });
    await p.syncClaim('default/waiting');
    assert.equal(t.fake.storedList(GVR.persistentVolumes).length, 0, 'no volume before the node is selected');

    await p.syncClaim('default/data');
    const vol = pv('pvc-uid-data');
    assert.ok(vol, 'volume pvc-<uid> created');
    const dir = join(root, 'volumes', 'pvc-uid-data');
    assert.ok(existsSync(dir), 'directory created');
    assert.deepEqual(vol.metadata?.annotations, { 'pv.kubernetes.io/provisioned-by': LOCAL_PATH_PROVISIONER });
    assert.deepEqual(vol.metadata?.finalizers, [PROVISIONER_FINALIZER]);
    assert.deepEqual(vol.spec?.capacity, { storage: '2Gi' });
    assert.deepEqual(vol.spec?.accessModes, ['ReadWriteOnce']);
    assert.equal(vol.spec?.volumeMode, 'Filesystem');
    assert.equal(vol.spec?.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(vol.spec?.storageClassName, 'standard');
    assert.deepEqual(vol.spec?.hostPath, { path: dir, type: 'DirectoryOrCreate' });
    assert.equal(vol.spec?.claimRef?.name, 'data');
    assert.equal(vol.spec?.claimRef?.namespace, 'default');
    assert.equal(vol.spec?.claimRef?.uid, 'uid-data');
    assert.deepEqual(vol.spec?.nodeAffinity?.required?.nodeSelectorTerms, [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['kcm-node-1'] }] }]);
    assert.deepEqual(events(), [
      'Normal Provisioning External provisioner is provisioning volume for claim "default/data"',
      'Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-data',
    ]);

    // Again (the volume is in the cache now): nothing more happens.
    await t.settle();
    await p.syncClaim('default/data');
    assert.equal(events().length, 2);
  });

  it('runs: a claim that gets its node is provisioned, and a released volume goes', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard());
      t.fake.seed(GVR.nodes, node('kcm-node-2'));
    });
    const abort = new AbortController();
    const running = p.run(abort.signal);
    const until = async (cond: () => boolean, what: string) => {
      for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setImmediate(r));
      assert.ok(cond(), what);
    };
    await t.fake.resource<Pvc>(GVR.persistentVolumeClaims).namespace('default').create(claim('live', { node: 'kcm-node-2' }));
    const uid = pvc('live')!.metadata!.uid!;
    await until(() => pv(`pvc-${uid}`) !== undefined, 'volume created');
    await t.fake.resource<Pv>(GVR.persistentVolumes).updateStatus({ ...structuredClone(pv(`pvc-${uid}`)!), status: { phase: 'Released' } });
    await until(() => pv(`pvc-${uid}`) === undefined, 'volume deleted');
    assert.ok(!existsSync(join(root, 'volumes', `pvc-${uid}`)));
    abort.abort();
    await running;
  });

  it('provisions an Immediate claim at once, with the class reclaim policy and no node affinity', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard({ volumeBindingMode: 'Immediate', reclaimPolicy: 'Retain', mountOptions: ['noatime'] }));
      t.fake.seed(GVR.persistentVolumeClaims, claim('now', { provisioner: undefined }));
    });
    await p.syncClaim('default/now');
    const vol = pv('pvc-uid-now')!;
    assert.equal(vol.spec?.persistentVolumeReclaimPolicy, 'Retain');
    assert.deepEqual(vol.spec?.mountOptions, ['noatime']);
    assert.equal(vol.spec?.nodeAffinity, undefined);
  });

  it('leaves claims of other provisioners, classes of other provisioners and bound claims alone', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard(), { metadata: { name: 'ebs' }, provisioner: 'ebs.csi.aws.com', volumeBindingMode: 'Immediate' });
      const bound = claim('bound', { node: 'n' });
      t.fake.seed(GVR.persistentVolumeClaims, claim('other', { provisioner: 'ebs.csi.aws.com', cls: 'ebs' }), claim('mismatch', { cls: 'ebs' }), { ...bound, spec: { ...bound.spec, volumeName: 'x' } });
    });
    for (const k of ['other', 'mismatch', 'bound']) await p.syncClaim(`default/${k}`);
    assert.equal(t.fake.storedList(GVR.persistentVolumes).length, 0);
    assert.deepEqual(events(), []);
  });

  it('reports ProvisioningFailed for a missing node and for block volumes', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard());
      t.fake.seed(GVR.nodes, node('kcm-node-0'));
      t.fake.seed(GVR.persistentVolumeClaims, claim('gone', { node: 'kcm-node-9' }), claim('block', { node: 'kcm-node-0', mode: 'Block' }));
    });
    await assert.rejects(p.syncClaim('default/gone'));
    await assert.rejects(p.syncClaim('default/block'));
    assert.deepEqual(events(), [
      'Warning ProvisioningFailed failed to get target node: nodes "kcm-node-9" not found',
      'Normal Provisioning External provisioner is provisioning volume for claim "default/block"',
      `Warning ProvisioningFailed failed to provision volume with StorageClass "standard": volumeMode Block is not supported by ${LOCAL_PATH_PROVISIONER}`,
    ]);
    assert.equal(t.fake.storedList(GVR.persistentVolumes).length, 0);
  });

  it('deletes the data and the volume once it is Released with policy Delete', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard());
      t.fake.seed(GVR.nodes, node('kcm-node-0'));
      t.fake.seed(GVR.persistentVolumeClaims, claim('data', { node: 'kcm-node-0' }));
    });
    await p.syncClaim('default/data');
    const dir = join(root, 'volumes', 'pvc-uid-data');
    writeFileSync(join(dir, 'file'), 'x');
    // Bound: nothing to delete.
    const bound = pv('pvc-uid-data')!;
    await t.fake.resource<Pv>(GVR.persistentVolumes).updateStatus({ ...structuredClone(bound), status: { phase: 'Bound' } });
    await t.settle();
    await p.syncVolume('pvc-uid-data');
    assert.ok(existsSync(dir));
    // Released (the binder saw the claim go).
    await t.fake.resource<Pv>(GVR.persistentVolumes).updateStatus({ ...structuredClone(pv('pvc-uid-data')!), status: { phase: 'Released' } });
    await t.settle();
    await p.syncVolume('pvc-uid-data');
    assert.ok(!existsSync(dir), 'directory removed');
    assert.equal(pv('pvc-uid-data'), undefined, 'volume object gone (finalizer removed)');
  });

  it('keeps Released volumes with policy Retain, and volumes of other provisioners', async () => {
    await start((t) => {
      t.fake.seed(GVR.persistentVolumes, {
        metadata: { name: 'retained', annotations: { 'pv.kubernetes.io/provisioned-by': LOCAL_PATH_PROVISIONER } },
        spec: { persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: '/x' } },
        status: { phase: 'Released' },
      }, {
        metadata: { name: 'foreign', annotations: { 'pv.kubernetes.io/provisioned-by': 'other' } },
        spec: { persistentVolumeReclaimPolicy: 'Delete', hostPath: { path: '/y' } },
        status: { phase: 'Released' },
      });
    });
    await p.syncVolume('retained');
    await p.syncVolume('foreign');
    assert.ok(pv('retained'));
    assert.ok(pv('foreign'));
  });

  it('honours the reclaim policy of a volume deleted directly', async () => {
    await start((t) => {
      t.fake.seed(GVR.storageClasses, standard());
      t.fake.seed(GVR.nodes, node('kcm-node-0'));
      t.fake.seed(GVR.persistentVolumeClaims, claim('data', { node: 'kcm-node-0' }));
    });
    await p.syncClaim('default/data');
    await t.fake.resource(GVR.persistentVolumes).delete('pvc-uid-data');
    await t.settle();
    assert.ok(pv('pvc-uid-data')?.metadata?.deletionTimestamp);
    await p.syncVolume('pvc-uid-data');
    assert.ok(!existsSync(join(root, 'volumes', 'pvc-uid-data')));
    assert.equal(pv('pvc-uid-data'), undefined);
  });

  describe('as the external resizer', () => {
    async function boundClaim(finishNodeExpansion: boolean, mode: 'Block' | 'Filesystem' = 'Filesystem'): Promise<void> {
      await start((t) => {
        t.fake.seed(GVR.storageClasses, standard());
        t.fake.seed(GVR.nodes, node('kcm-node-0'));
        t.fake.seed(GVR.persistentVolumeClaims, claim('data', { node: 'kcm-node-0', mode }));
      }, finishNodeExpansion);
      if (mode === 'Block') {
        // This provisioner refuses block volumes: make one by hand.
        t.fake.seed(GVR.persistentVolumes, {
          metadata: { name: 'pvc-uid-data', annotations: { 'pv.kubernetes.io/provisioned-by': LOCAL_PATH_PROVISIONER } },
          spec: { capacity: { storage: '1Gi' }, volumeMode: 'Block', claimRef: { namespace: 'default', name: 'data', uid: 'uid-data' }, hostPath: { path: '/x' } },
        });
      } else {
        await p.syncClaim('default/data');
      }
      // What the binder does.
      const c = pvc('data')!;
      const bound = await t.fake.resource<Pvc>(GVR.persistentVolumeClaims).namespace('default').update({ ...structuredClone(c), spec: { ...c.spec, volumeName: 'pvc-uid-data' } });
      await t.fake.resource<Pvc>(GVR.persistentVolumeClaims).namespace('default').updateStatus({ ...structuredClone(bound), status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } });
      // The user asks for more.
      const now = pvc('data')!;
      await t.fake.resource<Pvc>(GVR.persistentVolumeClaims).namespace('default').update({ ...structuredClone(now), spec: { ...now.spec, resources: { requests: { storage: '3Gi' } } } });
      await t.settle();
      t.recorders.get('provisioner')?.clear();
    }

    it('grows the volume, then finishes the filesystem resize of the claim', async () => {
      await boundClaim(true);
      await p.syncResize('default/data');
      assert.deepEqual(pv('pvc-uid-data')?.spec?.capacity, { storage: '3Gi' });
      const c = pvc('data')!;
      assert.deepEqual(c.status?.capacity, { storage: '3Gi' });
      assert.equal(c.status?.conditions, undefined, 'resize conditions cleared');
      assert.deepEqual(c.status?.allocatedResources, { storage: '3Gi' });
      assert.equal(c.status?.allocatedResourceStatuses, undefined);
      assert.deepEqual(events(), [
        'Normal Resizing External resizer is resizing volume pvc-uid-data',
        'Normal FileSystemResizeRequired Require file system resize of volume on node',
        'Normal FileSystemResizeSuccessful MountVolume.NodeExpandVolume succeeded for volume "pvc-uid-data" kcm-node-0',
      ]);
      // Nothing left to do.
      await t.settle();
      await p.syncResize('default/data');
      assert.equal(events().length, 3);
    });

    it('leaves FileSystemResizePending for the kubelet when told to', async () => {
      await boundClaim(false);
      await p.syncResize('default/data');
      const c = pvc('data')!;
      assert.deepEqual(c.status?.capacity, { storage: '1Gi' });
      assert.deepEqual(c.status?.conditions?.map((x) => [x.type, x.status, x.message]), [
        ['FileSystemResizePending', 'True', 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.'],
      ]);
      assert.deepEqual(c.status?.allocatedResourceStatuses, { storage: 'NodeResizePending' });
      assert.deepEqual(pv('pvc-uid-data')?.spec?.capacity, { storage: '3Gi' });
    });

    it('finishes a block volume without a node step', async () => {
      await boundClaim(true, 'Block');
      await p.syncResize('default/data');
      assert.deepEqual(pvc('data')?.status?.capacity, { storage: '3Gi' });
      assert.deepEqual(events(), ['Normal Resizing External resizer is resizing volume pvc-uid-data', 'Normal VolumeResizeSuccessful Resize volume succeeded']);
    });
  });
});
