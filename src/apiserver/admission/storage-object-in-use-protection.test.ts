import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import type { AdmissionAttributes } from './admission.js';
import { newStorageObjectInUseProtection } from './storage-object-in-use-protection.js';

function attrs(resource: string, object: KubeObject, operation: AdmissionAttributes['operation'] = 'CREATE', subresource = ''): AdmissionAttributes {
  return {
    operation,
    resource: { group: '', version: 'v1', resource } as unknown as AdmissionAttributes['resource'],
    subresource,
    namespace: 'default',
    name: object.metadata?.name ?? '',
    object,
    oldObject: undefined,
    user: {} as AdmissionAttributes['user'],
    dryRun: false,
  };
}

describe('StorageObjectInUseProtection admission', () => {
  const plugin = newStorageObjectInUseProtection();

  it('adds the protection finalizer to new claims and volumes, once', async () => {
    const claim: KubeObject = { metadata: { name: 'c', finalizers: ['x/y'] } };
    await plugin.admit!(attrs('persistentvolumeclaims', claim));
    assert.deepEqual(claim.metadata?.finalizers, ['x/y', 'kubernetes.io/pvc-protection']);
    await plugin.admit!(attrs('persistentvolumeclaims', claim));
    assert.deepEqual(claim.metadata?.finalizers, ['x/y', 'kubernetes.io/pvc-protection']);
    const vol: KubeObject = { metadata: { name: 'v' } };
    await plugin.admit!(attrs('persistentvolumes', vol));
    assert.deepEqual(vol.metadata?.finalizers, ['kubernetes.io/pv-protection']);
  });

  it('leaves updates, subresources and other resources alone', async () => {
    const claim: KubeObject = { metadata: { name: 'c' } };
    await plugin.admit!(attrs('persistentvolumeclaims', claim, 'UPDATE'));
    await plugin.admit!(attrs('persistentvolumeclaims', claim, 'CREATE', 'status'));
    const pod: KubeObject = { metadata: { name: 'p' } };
    await plugin.admit!(attrs('pods', pod));
    assert.equal(claim.metadata?.finalizers, undefined);
    assert.equal(pod.metadata?.finalizers, undefined);
  });
});
