/**
 * The StorageClass `kcm up` creates once, as kind creates `standard` (and k3s
 * `local-path`): the default class, served by the local-path provisioner,
 * WaitForFirstConsumer so the volume is made on the node its first pod runs on.
 */
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { LOCAL_PATH_PROVISIONER } from './constants.js';

export const DEFAULT_STORAGE_CLASS_NAME = 'standard';

export function defaultStorageClass(): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: DEFAULT_STORAGE_CLASS_NAME,
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      labels: { 'app.kubernetes.io/managed-by': 'kcm' },
    },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowVolumeExpansion: true,
  };
}
