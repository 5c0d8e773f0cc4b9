import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { StatusError } from '../status.js';
import type { AdmissionAttributes, ObjectReader } from './admission.js';
import { newPersistentVolumeClaimResize } from './persistent-volume-claim-resize.js';

const classes: Record<string, KubeObject> = {
  grow: { metadata: { name: 'grow' }, allowVolumeExpansion: true } as KubeObject,
  fixed: { metadata: { name: 'fixed' }, allowVolumeExpansion: false } as KubeObject,
  unset: { metadata: { name: 'unset' } },
};
const reader: ObjectReader = { get: async (_g, resource, _ns, name) => (resource === 'storageclasses' ? classes[name] : undefined) };

const claim = (size: string, cls: string, phase = 'Bound'): KubeObject =>
  ({ metadata: { name: 'c', namespace: 'default' }, spec: { storageClassName: cls, resources: { requests: { storage: size } } }, status: { phase } }) as KubeObject;

function update(object: KubeObject, oldObject: KubeObject, subresource = ''): AdmissionAttributes {
  return {
    operation: 'UPDATE',
    resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' } as unknown as AdmissionAttributes['resource'],
    subresource,
    namespace: 'default',
    name: 'c',
    object,
    oldObject,
    user: {} as AdmissionAttributes['user'],
    dryRun: false,
  };
}

async function refusal(p: Promise<void> | void): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    assert.ok(err instanceof StatusError);
    assert.equal(err.status.code, 403);
    return err.message;
  }
}

describe('PersistentVolumeClaimResize admission', () => {
  const plugin = newPersistentVolumeClaimResize(reader);

  it('lets a bound claim grow when its class allows expansion', async () => {
    assert.equal(await refusal(plugin.validate!(update(claim('2Gi', 'grow'), claim('1Gi', 'grow')))), undefined);
  });

  it('refuses growth when the class does not allow expansion, or names none', async () => {
    for (const cls of ['fixed', 'unset', 'missing', '']) {
      const msg = await refusal(plugin.validate!(update(claim('2Gi', cls), claim('1Gi', cls))));
      assert.equal(msg, 'persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize', cls);
    }
  });

  it('refuses growth of a claim that is not bound', async () => {
    const msg = await refusal(plugin.validate!(update(claim('2Gi', 'grow', 'Pending'), claim('1Gi', 'grow', 'Pending'))));
    assert.match(msg ?? '', /Only bound persistent volume claims can be expanded/);
  });

  it('ignores updates that do not grow the request, and the status subresource', async () => {
    assert.equal(await refusal(plugin.validate!(update(claim('1Gi', 'fixed'), claim('1Gi', 'fixed')))), undefined);
    assert.equal(await refusal(plugin.validate!(update(claim('1Gi', 'fixed'), claim('2Gi', 'fixed')))), undefined);
    assert.equal(await refusal(plugin.validate!(update(claim('2Gi', 'fixed'), claim('1Gi', 'fixed'), 'status'))), undefined);
  });
});
