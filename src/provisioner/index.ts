export { LOCAL_PATH_PROVISIONER, PROVISIONER_FINALIZER } from './constants.js';
export { newLocalPathProvisioner, eventSourceComponent, volumeNameForClaim, type LocalPathProvisioner, type LocalPathProvisionerOptions } from './local-path-provisioner.js';
export { newVolumeDirs, type VolumeDirs } from './volume-dirs.js';
export { runProvisionerComponent, volumesDirOf, PROVISIONER_USER_AGENT, type ProvisionerComponentOptions } from './component.js';
export { defaultStorageClass, DEFAULT_STORAGE_CLASS_NAME } from './default-class.js';
