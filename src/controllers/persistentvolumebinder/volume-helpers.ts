/**
 * The matching rules between PersistentVolumes and PersistentVolumeClaims
 * live in api/volume.ts, shared with the scheduler's volume plugins (as
 * component-helpers/storage/volume is upstream); re-exported here for the
 * binder and its tests.
 */
export * from '../../api/volume.js';
