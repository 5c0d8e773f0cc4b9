/**
 * What a simulated container sees, built as kubelet (v1.20) builds it:
 *
 * - `containerEnv(pod, container, src, node)`: makeEnvironmentVariables
 *   (service links, envFrom, env with `$(VAR)` expansion and valueFrom), with
 *   kubelet's CreateContainerConfigError messages and
 *   InvalidEnvironmentVariableNames warnings; `runtimeEnv` adds PATH,
 *   HOSTNAME and HOME as the container runtime does.
 * - `volumeFiles(pod, volume, src, node)`: the files of a configMap, secret,
 *   downwardAPI or projected volume (AtomicWriter payload with modes), or the
 *   plugin's SetUp error.
 * - `PodVolumes`: the pod's volumes as shared directory objects, refreshed
 *   like kubelet's periodic sync, and each container's FileSystem with its
 *   volumeMounts (readOnly, subPath, subPathExpr) and the managed /etc/hosts.
 *
 * ```ts
 * const vols = new PodVolumes(pod, src, node, now);
 * if (vols.errors().length) ...;                 // FailedMount events, pod stays ContainerCreating
 * const { env, error, warnings } = containerEnv(pod, c, src, node);
 * if (error) ...;                                // CreateContainerConfigError
 * const r = vols.containerFs(c, env, { now, seed: (fs) => image.populate(fs) });
 * startProcess({ argv, fs: r.fs!, env: runtimeEnv(env, { hostname }) ... });
 * vols.refresh(src, later, pod);                  // configMap/secret/downwardAPI/projected updates
 * ```
 */
export type { ObjectSource, NodeFacts } from './types.js';
export { containerEnv, runtimeEnv, serviceEnvVars, fromServices, expand, mappingFuncFor, isEnvVarName, DEFAULT_PATH } from './env.js';
export type { ContainerEnvResult } from './env.js';
export { volumeFiles, failedMountMessage, configMapPayload, secretPayload, downwardAPIPayload, DEFAULT_MODE, DEFAULT_TOKEN_EXPIRATION_SECONDS } from './volumes.js';
export type { VolumeFilesResult } from './volumes.js';
export { PodVolumes, podHostname, podHostnames, managedHostsFile, podResolvConf, DEFAULT_CLUSTER_DOMAIN } from './fs.js';
export type { PodHostnames, ContainerFsOptions, ContainerFsResult } from './fs.js';
export { formatMap, goQuote, extractFieldPathAsString, podFieldSelectorRuntimeValue, extractContainerResourceValue, resourceFieldValue } from './downward.js';
