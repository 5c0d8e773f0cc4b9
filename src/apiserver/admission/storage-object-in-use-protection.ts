/**
 * StorageObjectInUseProtection (plugin/pkg/admission/storage/
 * storageobjectinuseprotection): every PersistentVolume and
 * PersistentVolumeClaim is created with its protection finalizer
 * (`kubernetes.io/pv-protection`, `kubernetes.io/pvc-protection`), so it
 * cannot disappear between creation and the protection controllers' first
 * sync. The controllers remove the finalizers once the object is unused.
 */
import type { KubeObject } from '../../api/types.js';
import type { AdmissionPlugin } from './admission.js';

export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

export function newStorageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: 'StorageObjectInUseProtection',
    admit(a) {
      if (a.operation !== 'CREATE' || a.subresource !== '' || a.resource.group !== '') return;
      const finalizer = a.resource.resource === 'persistentvolumes' ? PV_PROTECTION_FINALIZER : a.resource.resource === 'persistentvolumeclaims' ? PVC_PROTECTION_FINALIZER : undefined;
      if (!finalizer || !a.object) return;
      const meta = ((a.object as KubeObject & { metadata: Record<string, unknown> }).metadata ??= {} as never) as { finalizers?: string[] };
      if ((meta.finalizers ?? []).includes(finalizer)) return;
      meta.finalizers = [...(meta.finalizers ?? []), finalizer];
    },
  };
}
