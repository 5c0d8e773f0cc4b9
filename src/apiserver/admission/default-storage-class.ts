/**
 * DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault):
 * a PersistentVolumeClaim created without a class (neither
 * `spec.storageClassName` nor the beta annotation; an explicit "" counts as a
 * class) gets the default StorageClass, the one annotated
 * `storageclass.kubernetes.io/is-default-class: "true"` (or the beta
 * annotation). With several defaults the newest wins, then the first by name
 * (volumeutil.GetDefaultClass). No default: the claim is left alone.
 */
import type { KubeObject } from '../../api/types.js';
import { type AdmissionPlugin, type ObjectLister, onlyWhen, writes } from './admission.js';

export const ANN_IS_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const ANN_BETA_IS_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

/** The default class among `classes` (newest first, then name ascending), or undefined. */
export function pickDefaultStorageClass(classes: readonly KubeObject[]): KubeObject | undefined {
  const defaults = classes.filter((c) => {
    const a = c.metadata?.annotations ?? {};
    return a[ANN_IS_DEFAULT_CLASS] === 'true' || a[ANN_BETA_IS_DEFAULT_CLASS] === 'true';
  });
  defaults.sort((x, y) => {
    const tx = Date.parse(x.metadata?.creationTimestamp ?? '') || 0;
    const ty = Date.parse(y.metadata?.creationTimestamp ?? '') || 0;
    if (tx !== ty) return ty - tx;
    const nx = x.metadata?.name ?? '';
    const ny = y.metadata?.name ?? '';
    return nx < ny ? -1 : nx > ny ? 1 : 0;
  });
  return defaults[0];
}

export function newDefaultStorageClass(lister: ObjectLister): AdmissionPlugin {
  return {
    name: 'DefaultStorageClass',
    admit: onlyWhen(writes('CREATE', '', 'persistentvolumeclaims'), async (a) => {
      const pvc = a.object as (KubeObject & { spec?: { storageClassName?: string | null } }) | undefined;
      if (!pvc) return;
      if (pvc.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] !== undefined) return;
      if (pvc.spec?.storageClassName !== undefined && pvc.spec.storageClassName !== null) return;
      const def = pickDefaultStorageClass((await lister.list('storage.k8s.io', 'storageclasses', '')) ?? []);
      if (!def) return;
      pvc.spec = { ...(pvc.spec ?? {}), storageClassName: def.metadata?.name ?? '' };
    }),
  };
}
