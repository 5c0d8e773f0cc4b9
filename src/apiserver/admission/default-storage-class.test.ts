import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import type { AdmissionAttributes, ObjectLister } from './admission.js';
import { newDefaultStorageClass, pickDefaultStorageClass } from './default-storage-class.js';

const sc = (name: string, created: string, isDefault: 'ga' | 'beta' | 'no' = 'ga'): KubeObject => ({
  metadata: {
    name,
    creationTimestamp: created,
    annotations:
      isDefault === 'ga' ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : isDefault === 'beta' ? { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } : {},
  },
});

const lister = (classes: KubeObject[]): ObjectLister => ({ list: async (group, resource) => (group === 'storage.k8s.io' && resource === 'storageclasses' ? classes : []) });

function create(object: KubeObject, resource = 'persistentvolumeclaims', operation: AdmissionAttributes['operation'] = 'CREATE'): AdmissionAttributes {
  return {
    operation,
    resource: { group: '', version: 'v1', resource } as unknown as AdmissionAttributes['resource'],
    subresource: '',
    namespace: 'default',
    name: object.metadata?.name ?? '',
    object,
    oldObject: undefined,
    user: {} as AdmissionAttributes['user'],
    dryRun: false,
  };
}

const claim = (spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject & { spec: Record<string, unknown> } => ({
  metadata: { name: 'c', ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], ...spec },
});

describe('DefaultStorageClass admission', () => {
  it('fills the default class into a claim that names none', async () => {
    const plugin = newDefaultStorageClass(lister([sc('slow', '2024-01-01T00:00:00Z', 'no'), sc('standard', '2024-01-01T00:00:00Z')]));
    const c = claim();
    await plugin.admit!(create(c));
    assert.equal(c.spec.storageClassName, 'standard');
  });

  it('keeps an explicit class, an explicit empty class and the beta annotation', async () => {
    const plugin = newDefaultStorageClass(lister([sc('standard', '2024-01-01T00:00:00Z')]));
    const named = claim({ storageClassName: 'fast' });
    const empty = claim({ storageClassName: '' });
    const beta = claim({}, { 'volume.beta.kubernetes.io/storage-class': 'old' });
    for (const c of [named, empty, beta]) await plugin.admit!(create(c));
    assert.equal(named.spec.storageClassName, 'fast');
    assert.equal(empty.spec.storageClassName, '');
    assert.equal(beta.spec.storageClassName, undefined);
  });

  it('leaves claims alone when there is no default class, and ignores updates and other resources', async () => {
    const none = newDefaultStorageClass(lister([sc('slow', '2024-01-01T00:00:00Z', 'no')]));
    const c = claim();
    await none.admit!(create(c));
    assert.equal(c.spec.storageClassName, undefined);
    const plugin = newDefaultStorageClass(lister([sc('standard', '2024-01-01T00:00:00Z')]));
    const updated = claim();
    await plugin.admit!(create(updated, 'persistentvolumeclaims', 'UPDATE'));
    assert.equal(updated.spec.storageClassName, undefined);
    const pod = claim();
    await plugin.admit!(create(pod, 'pods'));
    assert.equal(pod.spec.storageClassName, undefined);
  });

  it('picks the newest default, then the first by name, and honours the beta annotation', () => {
    assert.equal(pickDefaultStorageClass([sc('a', '2024-01-01T00:00:00Z'), sc('b', '2024-02-01T00:00:00Z', 'beta')])?.metadata?.name, 'b');
    assert.equal(pickDefaultStorageClass([sc('z', '2024-01-01T00:00:00Z'), sc('m', '2024-01-01T00:00:00Z')])?.metadata?.name, 'm');
    assert.equal(pickDefaultStorageClass([sc('x', '2024-01-01T00:00:00Z', 'no')]), undefined);
  });
});
