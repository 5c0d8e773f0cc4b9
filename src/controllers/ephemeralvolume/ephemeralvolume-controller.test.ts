import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { pod, setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newEphemeralVolumeController } from './ephemeralvolume-controller.js';

type PvcObj = Kube<PersistentVolumeClaim>;
const withEphemeral = (name: string, deleting = false): Kube<Pod> => {
  const p = pod(name, { deleting });
  p.spec!.volumes = [
    { name: 'scratch', ephemeral: { volumeClaimTemplate: { metadata: { labels: { type: 'scratch' }, annotations: { a: 'b' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
    { name: 'cfg', configMap: { name: 'cfg' } },
  ];
  return p;
};

describe('ephemeral volume controller', () => {
  before(() => setLogOutput(() => {}));

  it('creates <pod>-<volume> from the template, owned by the pod', async () => {
    const env = await setupController((f) => f.seed(GVR.pods, withEphemeral('web')), newEphemeralVolumeController);
    await env.c.syncPod('default/web');
    const pvcs = env.fake.storedList<PvcObj>(GVR.persistentVolumeClaims, 'default');
    assert.equal(pvcs.length, 1);
    const pvc = pvcs[0]!;
    assert.equal(pvc.metadata?.name, 'web-scratch');
    assert.deepEqual(pvc.metadata?.labels, { type: 'scratch' });
    assert.deepEqual(pvc.metadata?.annotations, { a: 'b' });
    assert.deepEqual(pvc.spec?.accessModes, ['ReadWriteOnce']);
    assert.deepEqual(pvc.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }]);
    await env.stop();
  });

  it('reports a same-named claim the pod does not own as FailedBinding', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.pods, withEphemeral('web'));
      f.seed(GVR.persistentVolumeClaims, { metadata: { name: 'web-scratch', namespace: 'default' }, spec: {} } as PvcObj);
    }, newEphemeralVolumeController);
    await assert.rejects(env.c.syncPod('default/web'), /PVC default\/web-scratch was not created for pod default\/web \(pod is not owner\)/);
    assert.deepEqual(env.recorder.events, ['Warning FailedBinding ephemeral volume scratch: PVC default/web-scratch was not created for pod default/web (pod is not owner)']);
    await env.stop();
  });

  it('skips pods being deleted and recreates a deleted claim while the pod lives', async () => {
    const env = await setupController((f) => f.seed(GVR.pods, withEphemeral('gone', true), withEphemeral('web')), newEphemeralVolumeController);
    await env.c.syncPod('default/gone');
    assert.equal(env.fake.storedList(GVR.persistentVolumeClaims).length, 0);
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await until(() => !!env.fake.stored(GVR.persistentVolumeClaims, 'default', 'web-scratch'), 'claim created');
    await env.fake.resource(GVR.persistentVolumeClaims).namespace('default').delete('web-scratch');
    await until(() => env.fake.actions().filter((a) => a.verb === 'create' && a.resource === 'persistentvolumeclaims').length === 2, 'claim recreated');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'ephemeral-volume-controller');
    assert.deepEqual(descriptor.aliases, ['ephemeral-volume']);
  });
});
