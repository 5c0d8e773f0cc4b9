/** Names the local-path provisioner shares with the API, the binder, the nodes and the other storage sidecars. */
export {
  ANN_BETA_STORAGE_CLASS,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
} from '../api/volume.js';

/** kcm's provisioner name (the StorageClass `provisioner`; the CSI driver the simulated nodes register). */
export const LOCAL_PATH_PROVISIONER = 'local-path.kcm.io';
/** Set by the expand controller on claims of CSI-migrated volumes: the resizer that should act. */
export const ANN_STORAGE_RESIZER = 'volume.kubernetes.io/storage-resizer';
/** sig-storage-lib-external-provisioner's finalizer on the volumes it made (HonorPVReclaimPolicy). */
export const PROVISIONER_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';
/** The node label the volume's node affinity uses. */
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
