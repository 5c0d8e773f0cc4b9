import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, CSINode, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newFakeClient, type FakeClient } from '../controller/testing/index.js';
import { newFakeRecorder } from '../tools/record/index.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { newLogger, setLogOutput } from '../util/log/logger.js';
import { attacherFinalizer, sanitizeDriverName, syncVolumeAttachment } from './csi.js';
import { newNodeSimulator, type NodeSimulatorOptions } from './node-simulator.js';
import { POD_ATTACH_AND_MOUNT_TIMEOUT_MS, failedMountMessage, podVolumeState, type VolumeLookup } from './volume-manager.js';

setLogOutput(() => {});

const DRIVER = 'local-path.kcm.io';
const UNIQUE = `kubernetes.io/csi/${DRIVER}^h1`;
type K<T> = T & KubeObject;

const pvc = (name: string, volumeName?: string): K<PersistentVolumeClaim> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default' },
  spec: { ...(volumeName ? { volumeName } : {}) },
  status: { phase: volumeName ? 'Bound' : 'Pending' },
});
const csiPV = (name: string, handle: string): K<PersistentVolume> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, csi: { driver: DRIVER, volumeHandle: handle } },
});
const podSpec = (claim: string): Pod['spec'] => ({
  nodeName: 'kcm-node-0',
  containers: [{ name: 'c', image: 'busybox' }],
  volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }, { name: 'cache', emptyDir: {} }],
});

function lookupOf(objs: { pvcs?: PersistentVolumeClaim[]; pvs?: PersistentVolume[]; drivers?: CSIDriver[] }): VolumeLookup {
  return {
    pvc: (_ns, n) => objs.pvcs?.find((x) => x.metadata?.name === n),
    pv: (n) => objs.pvs?.find((x) => x.metadata?.name === n),
    csiDriver: (n) => objs.drivers?.find((x) => x.metadata?.name === n),
  };
}

describe('kubelet volume manager (simulated)', () => {
  it('waits for an unbound claim with the populator error', () => {
    const pod: Pod = { metadata: { name: 'p', namespace: 'default' }, spec: podSpec('data') };
    const st = podVolumeState(pod, undefined, lookupOf({ pvcs: [pvc('data')] }));
    assert.equal(st.ready, false);
    assert.equal(failedMountMessage(st), 'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/data: PVC is not bound');
    const missing = podVolumeState(pod, undefined, lookupOf({}));
    assert.match(failedMountMessage(missing), /failed to fetch PVC from API server: persistentvolumeclaims "data" not found$/);
  });

  it('needs an attachable volume in volumesInUse and volumesAttached', () => {
    const pod: Pod = { metadata: { name: 'p', namespace: 'default' }, spec: podSpec('data') };
    const lookup = lookupOf({ pvcs: [pvc('data', 'pv1')], pvs: [csiPV('pv1', 'h1')] });
    const st = podVolumeState(pod, { status: {} }, lookup);
    assert.deepEqual(st.attachable, [UNIQUE]);
    assert.equal(failedMountMessage(st), 'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], failed to process volumes=[]: context deadline exceeded');
    assert.equal(podVolumeState(pod, { status: { volumesAttached: [{ name: UNIQUE, devicePath: '' }] } }, lookup).ready, false, 'not reported in use yet');
    assert.equal(podVolumeState(pod, { status: { volumesInUse: [UNIQUE], volumesAttached: [{ name: UNIQUE, devicePath: '' }] } }, lookup).ready, true);
    const noAttach = lookupOf({ pvcs: [pvc('data', 'pv1')], pvs: [csiPV('pv1', 'h1')], drivers: [{ metadata: { name: DRIVER }, spec: { attachRequired: false } }] });
    assert.deepEqual(podVolumeState(pod, { status: {} }, noAttach), { ready: true, attachable: [], unmounted: [], unattached: [], failedToProcess: [], errors: [] });
  });
});

describe('external attacher (simulated)', () => {
  it('sanitizes the driver name into its finalizer', () => {
    assert.equal(attacherFinalizer(DRIVER), 'external-attacher/local-path-kcm-io');
    assert.equal(sanitizeDriverName('a.b/'), 'a-b-X');
  });

  it('attaches with a finalizer and lets a deletion finish', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const va: K<VolumeAttachment> = { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'csi-x' }, spec: { attacher: DRIVER, nodeName: 'n0', source: { persistentVolumeName: 'pv1' } } };
    fake.seed(GVR.volumeAttachments, va, { ...va, metadata: { name: 'other' }, spec: { ...va.spec, attacher: 'other.example.com' } });
    const opts = { client: fake, logger: newLogger('t'), drivers: [DRIVER], isOurNode: (n: string) => n === 'n0' };
    assert.equal(await syncVolumeAttachment(opts, fake.stored<K<VolumeAttachment>>(GVR.volumeAttachments, '', 'csi-x')!), 'attached');
    assert.equal(await syncVolumeAttachment(opts, fake.stored<K<VolumeAttachment>>(GVR.volumeAttachments, '', 'other')!), undefined);
    const got = fake.stored<K<VolumeAttachment>>(GVR.volumeAttachments, '', 'csi-x')!;
    assert.equal(got.status?.attached, true);
    assert.deepEqual(got.metadata?.finalizers, ['external-attacher/local-path-kcm-io']);
    await fake.resource(GVR.volumeAttachments).delete('csi-x');
    assert.equal(await syncVolumeAttachment(opts, fake.stored<K<VolumeAttachment>>(GVR.volumeAttachments, '', 'csi-x')!), 'detached');
    assert.equal(fake.stored(GVR.volumeAttachments, '', 'csi-x'), undefined);
  });
});

async function start(seed: (fake: FakeClient) => void, opts: Partial<NodeSimulatorOptions> = {}) {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  seed(fake);
  const recorder = newFakeRecorder();
  const sim = newNodeSimulator({ client: fake, clock, count: 1, recorderFor: () => recorder, ...opts });
  const ac = new AbortController();
  const done = sim.run(ac.signal);
  const settle = async () => {
    for (let i = 0; i < 20; i++) {
      await clock.advance(0);
      await sim.whenIdle();
      await flushMicrotasks();
    }
  };
  await settle();
  return {
    clock, fake, recorder, settle,
    stop: async () => {
      ac.abort();
      await settle();
      await done;
    },
  };
}

const pod = (fake: FakeClient) => fake.stored<K<Pod>>(GVR.pods, 'default', 'p');
const node0 = (fake: FakeClient) => fake.stored<K<Node>>(GVR.nodes, '', 'kcm-node-0')!;

describe('simulated kubelet volumes', () => {
  it('registers the CSIDriver and a CSINode per node', async () => {
    const h = await start(() => {});
    const drv = h.fake.stored<K<CSIDriver>>(GVR.csiDrivers, '', DRIVER);
    assert.equal(drv?.spec?.attachRequired, true);
    const csiNode = h.fake.stored<K<CSINode>>(GVR.csiNodes, '', 'kcm-node-0')!;
    assert.deepEqual(csiNode.spec?.drivers, [{ name: DRIVER, nodeID: 'kcm-node-0', topologyKeys: ['kubernetes.io/hostname'], allocatable: { count: 64 } }]);
    assert.equal(csiNode.metadata?.ownerReferences?.[0]?.kind, 'Node');
    assert.equal(node0(h.fake).metadata?.annotations?.['volumes.kubernetes.io/controller-managed-attach-detach'], 'true');
    await h.stop();
  });

  it('keeps a pod with an unbound claim ContainerCreating with FailedMount, and starts it once bound', async () => {
    const h = await start((f) => {
      f.seed(GVR.persistentVolumeClaims, pvc('data'));
      f.seed<K<Pod>>(GVR.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: podSpec('data') });
    }, { csiDrivers: [] });
    assert.equal(pod(h.fake)?.status?.phase, 'Pending');
    assert.equal(pod(h.fake)?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
    assert.deepEqual(h.recorder.events.filter((e) => e.includes('FailedMount')), [
      'Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/data: PVC is not bound',
    ]);
    h.fake.seed(GVR.persistentVolumes, { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { hostPath: { path: '/tmp/x' } } } as K<PersistentVolume>);
    await h.fake.resource(GVR.persistentVolumeClaims).namespace('default').patch('data', 'merge', { spec: { volumeName: 'pv1' } });
    await h.fake.resource(GVR.persistentVolumeClaims).namespace('default').patch('data', 'merge', { status: { phase: 'Bound' } }, { subresource: 'status' });
    await h.settle();
    assert.equal(pod(h.fake)?.status?.phase, 'Running');
    await h.stop();
  });

  it('reports volumesInUse, waits for volumesAttached, and times out with FailedMount meanwhile', async () => {
    const h = await start((f) => {
      f.seed(GVR.persistentVolumes, csiPV('pv1', 'h1'));
      f.seed(GVR.persistentVolumeClaims, pvc('data', 'pv1'));
      f.seed<K<Pod>>(GVR.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: podSpec('data') });
    });
    assert.deepEqual(node0(h.fake).status?.volumesInUse, [UNIQUE]);
    assert.equal(pod(h.fake)?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
    await h.clock.advance(POD_ATTACH_AND_MOUNT_TIMEOUT_MS);
    await h.settle();
    assert.ok(h.recorder.events.includes('Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], failed to process volumes=[]: context deadline exceeded'));
    assert.equal(pod(h.fake)?.status?.phase, 'Pending');

    // What the attach-detach controller does once the external attacher answered.
    await h.fake.resource(GVR.nodes).patch('kcm-node-0', 'merge', { status: { volumesAttached: [{ name: UNIQUE, devicePath: '' }] } }, { subresource: 'status' });
    await h.settle();
    assert.equal(pod(h.fake)?.status?.phase, 'Running');

    await h.fake.resource(GVR.pods).namespace('default').delete('p');
    await h.settle();
    assert.equal(node0(h.fake).status?.volumesInUse, undefined, 'no longer in use once the pod is gone');
    await h.stop();
  });
});
