import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { ATTACH_TIMEOUT_MS, MAX_WAIT_FOR_UNMOUNT_MS, descriptor, mayNeedAttachment, newAttachDetachController } from './attachdetach-controller.js';
import { attachmentName, uniqueVolumeName } from './volumes.js';

const DRIVER = 'local-path.kcm.io';
const NODE = 'kcm-node-0';
const VA_NAME = attachmentName('h1', DRIVER, NODE);
const UNIQUE = uniqueVolumeName(DRIVER, 'h1');

const node = (name: string, managed = true): Kube<Node> => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, ...(managed ? { annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } } : {}) },
});
const pv = (name: string, handle: string, accessModes = ['ReadWriteOnce']): Kube<PersistentVolume> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { accessModes, capacity: { storage: '1Gi' }, csi: { driver: DRIVER, volumeHandle: handle } },
  status: { phase: 'Bound' },
});
const pvc = (name: string, volumeName?: string): Kube<PersistentVolumeClaim> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(volumeName ? { volumeName } : {}) },
  status: { phase: volumeName ? 'Bound' : 'Pending' },
});
const pod = (name: string, claim: string, nodeName = NODE): Kube<Pod> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] },
  status: { phase: 'Pending' },
});

function seedBound(f: FakeClient, nodes: Kube<Node>[] = [node(NODE)]): void {
  f.seed(GVR.nodes, ...nodes);
  f.seed(GVR.persistentVolumes, pv('pvc-1', 'h1'));
  f.seed(GVR.persistentVolumeClaims, pvc('data', 'pvc-1'));
  f.seed(GVR.pods, pod('web-0', 'data'));
}

async function markAttached(fake: FakeClient, name = VA_NAME): Promise<void> {
  await fake.resource(GVR.volumeAttachments).patch(name, 'merge', { status: { attached: true } }, { subresource: 'status' });
}

describe('attach-detach controller', () => {
  before(() => setLogOutput(() => {}));

  it('names attachments as the CSI attacher does', () => {
    assert.equal(VA_NAME, 'csi-142461d3a2351817610fa910708109fe46149aea0dcaac0ab0b23765b0502b15');
    assert.equal(UNIQUE, 'kubernetes.io/csi/local-path.kcm.io^h1');
  });

  it('creates a VolumeAttachment, then reports the volume attached on the node and the pod', async () => {
    const env = await setupController((f) => seedBound(f), (ctx) => newAttachDetachController(ctx));
    await env.c.syncNode(NODE);
    const va = env.fake.stored<Kube<VolumeAttachment>>(GVR.volumeAttachments, '', VA_NAME);
    assert.ok(va, 'VolumeAttachment created');
    assert.deepEqual(va.spec, { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: 'pvc-1' } });
    assert.equal(env.fake.stored<Kube<Node>>(GVR.nodes, '', NODE)!.status?.volumesAttached, undefined, 'not attached yet');

    await markAttached(env.fake);
    await until(() => env.informers.volumeAttachments().getIndexer().list().some((v) => (v as VolumeAttachment).status?.attached), 'attach seen');
    await env.c.syncNode(NODE);
    assert.deepEqual(env.fake.stored<Kube<Node>>(GVR.nodes, '', NODE)!.status?.volumesAttached, [{ name: UNIQUE, devicePath: '' }]);
    assert.deepEqual(env.recorder.events, ['Normal SuccessfulAttachVolume AttachVolume.Attach succeeded for volume "pvc-1" ']);
    await env.stop();
  });

  it('leaves unmanaged nodes, unbound claims and drivers without attach alone', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.nodes, node(NODE), node('unmanaged', false));
      f.seed(GVR.persistentVolumes, pv('pvc-1', 'h1'), { ...pv('pvc-2', 'h2'), spec: { ...pv('pvc-2', 'h2').spec, csi: { driver: 'noattach.example.com', volumeHandle: 'h2' } } });
      f.seed(GVR.persistentVolumeClaims, pvc('data', 'pvc-1'), pvc('unbound'), pvc('other', 'pvc-2'));
      f.seed(GVR.csiDrivers, { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'noattach.example.com' }, spec: { attachRequired: false } } as Kube<CSIDriver>);
      f.seed(GVR.pods, pod('a', 'data', 'unmanaged'), pod('b', 'unbound'), pod('c', 'other'));
    }, (ctx) => newAttachDetachController(ctx));
    await env.c.syncNode(NODE);
    await env.c.syncNode('unmanaged');
    assert.equal(env.fake.actions().filter((a) => a.verb === 'create').length, 0);
    await env.stop();
  });

  it('detaches once the node no longer reports the volume in use', async () => {
    const env = await setupController((f) => seedBound(f), (ctx) => newAttachDetachController(ctx));
    await env.c.syncNode(NODE);
    await markAttached(env.fake);
    await env.fake.resource(GVR.nodes).patch(NODE, 'merge', { status: { volumesInUse: [UNIQUE] } }, { subresource: 'status' });
    await until(() => env.informers.volumeAttachments().getIndexer().list().some((v) => (v as VolumeAttachment).status?.attached), 'attach seen');
    await env.c.syncNode(NODE);
    await env.fake.resource(GVR.pods).namespace('default').delete('web-0');
    await until(() => env.informers.pods().getIndexer().list().length === 0, 'pod deletion seen');
    await until(() => ((env.informers.nodes().getIndexer().getByKey(NODE) as Node).status?.volumesAttached ?? []).length === 1, 'node status seen');

    await env.c.syncNode(NODE);
    assert.ok(env.fake.stored(GVR.volumeAttachments, '', VA_NAME), 'still mounted: no detach');

    await env.fake.resource(GVR.nodes).patch(NODE, 'merge', { status: { volumesInUse: null } }, { subresource: 'status' });
    await until(() => (env.informers.nodes().getIndexer().getByKey(NODE) as Node).status?.volumesInUse === undefined, 'unmount seen');
    await env.c.syncNode(NODE);
    assert.equal(env.fake.stored(GVR.volumeAttachments, '', VA_NAME), undefined, 'detached');
    assert.equal(env.fake.stored<Kube<Node>>(GVR.nodes, '', NODE)!.status?.volumesAttached, undefined, 'removed from volumesAttached');
    const verbs = env.fake.actions().filter((a) => a.verb === 'patch' || a.verb === 'delete').map((a) => `${a.verb} ${a.resource}`);
    assert.deepEqual(verbs.slice(-2), ['patch nodes', 'delete volumeattachments'], 'reported detached before deleting');
    await env.stop();
  });

  it('force-detaches a volume still in use after maxWaitForUnmountDuration', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.nodes, { ...node(NODE), status: { volumesInUse: [UNIQUE], volumesAttached: [{ name: UNIQUE, devicePath: '' }] } });
      f.seed(GVR.persistentVolumes, pv('pvc-1', 'h1'));
      f.seed(GVR.volumeAttachments, { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: VA_NAME }, spec: { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: 'pvc-1' } }, status: { attached: true } } as Kube<VolumeAttachment>);
    }, (ctx) => newAttachDetachController(ctx));
    await env.c.syncNode(NODE);
    assert.ok(env.fake.stored(GVR.volumeAttachments, '', VA_NAME));
    await env.clock.advance(MAX_WAIT_FOR_UNMOUNT_MS - 1);
    await env.c.syncNode(NODE);
    assert.ok(env.fake.stored(GVR.volumeAttachments, '', VA_NAME), 'not before 6 minutes');
    await env.clock.advance(1);
    await env.c.syncNode(NODE);
    assert.equal(env.fake.stored(GVR.volumeAttachments, '', VA_NAME), undefined);
    await env.stop();
  });

  it('reports an attach error and a timeout as FailedAttachVolume', async () => {
    const env = await setupController((f) => seedBound(f), (ctx) => newAttachDetachController(ctx));
    await env.c.syncNode(NODE);
    await env.fake.resource(GVR.volumeAttachments).patch(VA_NAME, 'merge', { status: { attached: false, attachError: { message: 'rpc error: code = Internal desc = boom' } } }, { subresource: 'status' });
    await until(() => !!(env.informers.volumeAttachments().getIndexer().list()[0] as VolumeAttachment | undefined)?.status?.attachError, 'error seen');
    await env.c.syncNode(NODE);
    await env.c.syncNode(NODE);
    assert.deepEqual(env.recorder.events, ['Warning FailedAttachVolume AttachVolume.Attach failed for volume "pvc-1" : rpc error: code = Internal desc = boom']);

    env.recorder.clear();
    await env.fake.resource(GVR.volumeAttachments).patch(VA_NAME, 'merge', { status: { attachError: null } }, { subresource: 'status' });
    await until(() => !(env.informers.volumeAttachments().getIndexer().list()[0] as VolumeAttachment).status?.attachError, 'error cleared');
    await env.clock.advance(ATTACH_TIMEOUT_MS);
    await env.c.syncNode(NODE);
    assert.deepEqual(env.recorder.events, [`Warning FailedAttachVolume AttachVolume.Attach failed for volume "pvc-1" : timed out waiting for external-attacher of ${DRIVER} CSI driver to attach volume h1`]);
    await env.stop();
  });

  it('refuses to attach a ReadWriteOnce volume attached to another node (Multi-Attach error)', async () => {
    const env = await setupController((f) => {
      seedBound(f, [node(NODE), node('kcm-node-1')]);
      f.seed(GVR.pods, pod('web-1', 'data', 'kcm-node-1'));
    }, (ctx) => newAttachDetachController(ctx));
    await env.c.syncNode(NODE);
    await until(() => env.informers.volumeAttachments().getIndexer().list().length === 1, 'first attachment seen');
    await env.c.syncNode('kcm-node-1');
    assert.equal(env.fake.stored(GVR.volumeAttachments, '', attachmentName('h1', DRIVER, 'kcm-node-1')), undefined);
    assert.deepEqual(env.recorder.events, ['Warning FailedAttachVolume Multi-Attach error for volume "pvc-1" Volume is already used by pod(s) web-0']);
    await env.stop();
  });

  it('attaches through informer events while running', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.nodes, node(NODE));
      f.seed(GVR.persistentVolumes, pv('pvc-1', 'h1'));
      f.seed(GVR.persistentVolumeClaims, pvc('data', 'pvc-1'));
    }, (ctx) => newAttachDetachController(ctx));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await env.fake.resource(GVR.pods).namespace('default').create(pod('web-0', 'data'));
    await until(() => !!env.fake.stored(GVR.volumeAttachments, '', VA_NAME), 'attachment created');
    await markAttached(env.fake);
    await until(() => (env.fake.stored<Kube<Node>>(GVR.nodes, '', NODE)!.status?.volumesAttached ?? []).length === 1, 'volumesAttached written');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'persistentvolume-attach-detach-controller');
    assert.deepEqual(descriptor.aliases, ['attachdetach']);
  });
});

describe('mayNeedAttachment', () => {
  it('ignores pods whose volumes are never attached, and not the others', () => {
    const pod = (volumes: NonNullable<Pod['spec']>['volumes']): Pod => ({ spec: { containers: [], volumes } });
    assert.equal(mayNeedAttachment(pod([{ name: 'token', projected: { sources: [] } }, { name: 'cfg', configMap: { name: 'c' } }, { name: 'tmp', emptyDir: {} }])), false);
    assert.equal(mayNeedAttachment(pod(undefined)), false);
    assert.equal(mayNeedAttachment(pod([{ name: 'data', persistentVolumeClaim: { claimName: 'd' } }])), true);
    assert.equal(mayNeedAttachment(pod([{ name: 'disk', csi: { driver: 'x' } }])), true);
    assert.equal(mayNeedAttachment(pod([{ name: 'ebs', awsElasticBlockStore: { volumeID: 'v' } }])), true);
  });
});
