import { describe, it, before, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newControllerTestContext, type ControllerTestContext } from '../testing/test-context.js';
import { descriptor, newExpandController, type ExpandController } from './persistentvolumeexpander-controller.js';

type Pvc = Kube<PersistentVolumeClaim>;

const claim = (name: string, request: string, capacity: string, phase = 'Bound'): Pvc => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { storageClassName: 'standard', volumeName: `pv-${name}`, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: request } } },
  status: { phase, capacity: { storage: capacity } },
});

const volume = (claimName: string, source: Partial<NonNullable<PersistentVolume['spec']>>, uid = `uid-${claimName}`): Kube<PersistentVolume> => ({
  metadata: { name: `pv-${claimName}` },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], claimRef: { namespace: 'default', name: claimName, uid }, ...source },
});

describe('persistentvolume-expander controller', () => {
  let t: ControllerTestContext;
  let c: ExpandController;
  const events = () => t.recorders.get('volume_expand')?.events ?? [];

  before(() => setLogOutput(() => {}));
  afterEach(async () => t?.stop());

  async function start(seed: (t: ControllerTestContext) => void): Promise<void> {
    t = newControllerTestContext({ start: '2024-01-01T00:00:00Z', informers: ['persistentVolumeClaims'] });
    seed(t);
    c = newExpandController(t.ctx);
    await t.start();
  }

  it('leaves a grown claim on a CSI or hostPath volume to the external resizer', async () => {
    await start((t) => {
      t.fake.seed(GVR.persistentVolumeClaims, claim('csi', '2Gi', '1Gi'), claim('local', '2Gi', '1Gi'));
      t.fake.seed(GVR.persistentVolumes, volume('csi', { csi: { driver: 'local-path.kcm.io', volumeHandle: 'h' } }), volume('local', { hostPath: { path: '/x' } }));
    });
    await c.sync('default/csi');
    await c.sync('default/local');
    assert.deepEqual(events(), ['Normal ExternalExpanding waiting for an external controller to expand this PVC', 'Normal ExternalExpanding waiting for an external controller to expand this PVC']);
    assert.equal(t.fake.stored<Pvc>(GVR.persistentVolumeClaims, 'default', 'csi')?.metadata?.annotations, undefined, 'no resizer annotation for non-migrated volumes');
  });

  it('names the CSI driver of a migrated in-tree volume as its resizer', async () => {
    await start((t) => {
      t.fake.seed(GVR.persistentVolumeClaims, claim('ebs', '20Gi', '10Gi'));
      t.fake.seed(GVR.persistentVolumes, volume('ebs', { awsElasticBlockStore: { volumeID: 'vol-1' } }));
    });
    await c.sync('default/ebs');
    assert.deepEqual(events(), ['Normal ExternalExpanding CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc']);
    assert.equal(t.fake.stored<Pvc>(GVR.persistentVolumeClaims, 'default', 'ebs')?.metadata?.annotations?.['volume.kubernetes.io/storage-resizer'], 'ebs.csi.aws.com');
  });

  it('does nothing for a claim that did not grow', async () => {
    await start((t) => {
      t.fake.seed(GVR.persistentVolumeClaims, claim('same', '1Gi', '1Gi'));
      t.fake.seed(GVR.persistentVolumes, volume('same', { hostPath: { path: '/x' } }));
    });
    await c.sync('default/same');
    assert.deepEqual(events(), []);
  });

  it('fails (and retries) when the volume is bound to another claim', async () => {
    await start((t) => {
      t.fake.seed(GVR.persistentVolumeClaims, claim('c', '2Gi', '1Gi'));
      t.fake.seed(GVR.persistentVolumes, volume('c', { hostPath: { path: '/x' } }, 'someone-else'));
    });
    await assert.rejects(c.sync('default/c'), /persistent Volume is not bound to PVC being updated : default\/c/);
    assert.deepEqual(events(), []);
  });

  it('is registered under its upstream name, with upstream worker count', () => {
    assert.equal(descriptor.name, 'persistentvolume-expander-controller');
    assert.deepEqual(descriptor.aliases, ['persistentvolume-expander']);
    assert.equal(descriptor.defaultWorkers, 10);
  });
});
