import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import { eventually } from '../../testing/eventually.js';
import { startTestEnv, type TestEnv } from '../../testing/test-env.js';
import { setLogOutput } from '../../util/log/logger.js';
import { attachmentName, uniqueVolumeName } from './volumes.js';

type K<T> = T & KubeObject;
const DRIVER = 'local-path.kcm.io';

describe('attach-detach with the embedded API server and a simulated node', () => {
  let env: TestEnv;
  before(async () => {
    setLogOutput(() => {});
    env = await startTestEnv({ controllers: ['attachdetach', 'persistentvolume-binder', 'serviceaccount'], nodes: 1 });
  });
  after(async () => {
    await env?.stop();
  });

  it('attaches a CSI volume before the pod starts and detaches it after the pod is gone', async () => {
    const nodeName = (await env.client.resource<K<Node>>(GVR.nodes).list()).items[0]?.metadata?.name ?? 'kcm-node-0';
    await env.client.resource<K<PersistentVolume>>(GVR.persistentVolumes).create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-csi' },
      spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, csi: { driver: DRIVER, volumeHandle: 'vol-1' }, storageClassName: '' },
    });
    await env.client.resource<K<PersistentVolumeClaim>>(GVR.persistentVolumeClaims).namespace('default').create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: 'pv-csi', storageClassName: '' },
    });
    const pods = env.client.resource<K<Pod>>(GVR.pods).namespace('default');
    // The serviceaccount controller makes default/default shortly after start; admission needs it.
    await eventually(() => pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
    }), { what: 'pod created' });
    const vaName = attachmentName('vol-1', DRIVER, nodeName);
    const unique = uniqueVolumeName(DRIVER, 'vol-1');
    await eventually(async () => assert.equal((await pods.get('web')).status?.phase, 'Running'), { timeoutMs: 20_000, what: 'pod running' });
    const va = await env.client.resource<K<VolumeAttachment>>(GVR.volumeAttachments).get(vaName);
    assert.equal(va.status?.attached, true);
    assert.deepEqual(va.metadata?.finalizers, ['external-attacher/local-path-kcm-io']);
    const node = await env.client.resource<K<Node>>(GVR.nodes).get(nodeName);
    assert.deepEqual(node.status?.volumesAttached, [{ name: unique, devicePath: '' }]);
    assert.deepEqual(node.status?.volumesInUse, [unique]);

    await pods.delete('web');
    await eventually(
      async () => {
        await assert.rejects(env.client.resource(GVR.volumeAttachments).get(vaName), (err: unknown) => isNotFound(err));
      },
      { timeoutMs: 20_000, what: 'volume detached' },
    );
    const after = await env.client.resource<K<Node>>(GVR.nodes).get(nodeName);
    assert.equal(after.status?.volumesAttached, undefined);
    assert.equal(after.status?.volumesInUse, undefined);
  });
});
