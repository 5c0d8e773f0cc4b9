/**
 * PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize):
 * a claim's storage request may grow only when the claim is Bound and its
 * StorageClass (the same before and after) says `allowVolumeExpansion: true`.
 * Shrinking is the registry's validation, not this plugin's.
 */
import type { KubeObject } from '../../api/types.js';
import { compare } from '../../api/quantity.js';
import { forbidden } from '../status.js';
import { type AdmissionPlugin, type ObjectReader, onlyWhen, writes } from './admission.js';

const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

interface Claim extends KubeObject {
  spec?: { storageClassName?: string | null; resources?: { requests?: Record<string, string> } };
  status?: { phase?: string };
}

function claimClass(c: Claim): string {
  return c.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] ?? c.spec?.storageClassName ?? '';
}

export function newPersistentVolumeClaimResize(reader: ObjectReader): AdmissionPlugin {
  return {
    name: 'PersistentVolumeClaimResize',
    validate: onlyWhen(writes('UPDATE', '', 'persistentvolumeclaims'), async (a) => {
      const pvc = a.object as Claim | undefined;
      const old = a.oldObject as Claim | undefined;
      if (!pvc || !old) return;
      const newSize = pvc.spec?.resources?.requests?.['storage'] ?? '0';
      const oldSize = old.spec?.resources?.requests?.['storage'] ?? '0';
      if (compare(newSize, oldSize) <= 0) return;
      if (old.status?.phase !== 'Bound') throw forbidden(a.resource, a.name, 'Only bound persistent volume claims can be expanded');
      const cls = claimClass(pvc);
      let allowed = false;
      if (cls !== '' && cls === claimClass(old)) {
        const sc = (await reader.get('storage.k8s.io', 'storageclasses', '', cls)) as (KubeObject & { allowVolumeExpansion?: boolean }) | undefined;
        allowed = sc?.allowVolumeExpansion === true;
      }
      if (!allowed) {
        throw forbidden(a.resource, a.name, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
      }
    }),
  };
}
