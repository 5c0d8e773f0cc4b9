/**
 * kcm/client: talk to any Kubernetes API server (client-go's rest, dynamic
 * and discovery clients). Connection settings come from a kubeconfig, the
 * in-cluster service account or code; every client shares one transport,
 * QPS limiter and credential cache per RestConfig.
 *
 *   const client = newKubeClient(await loadKubeconfig());
 *   const pods = await typed(client).pods('default').list();
 */
export { newKubeClient, type KubeClient, type KubeClientOptions } from '../client/client.js';
export type {
  Client,
  ResourceInterface,
  Watch,
  ListOptions,
  WatchOptions,
  GetOptions,
  CreateOptions,
  UpdateOptions,
  PatchOptions,
  PatchType,
  DeleteOptions,
  Preconditions,
  FieldValidation,
} from '../client/interfaces.js';
export { newRestConfig, DEFAULT_QPS, DEFAULT_BURST, type RestConfig, type TlsConfig, type AuthConfig, type ExecConfig } from '../client/rest-config.js';
export { loadKubeconfig, loadKubeconfigDetails, type KubeconfigOptions, type KubeconfigResult } from '../client/kubeconfig.js';
export { inClusterConfig, SERVICE_ACCOUNT_DIR, type InClusterOptions } from '../client/in-cluster.js';
export { typed, type TypedClient, type BuiltinTypes, type Typed } from '../client/typed.js';
export type { HttpMethod, RequestOptions, WarningHandler, QueryValue } from '../client/rest-client.js';
export type { DiscoveryClient, GroupsAndResources, PreferredResources, APIGroup, APIGroupList, APIResource, APIResourceList, VersionInfo } from '../client/discovery.js';
export { NoMatchError, isNoMatch, type RestMapper, type RestMapping } from '../client/rest-mapper.js';
export {
  StatusError,
  NetworkError,
  newStatus,
  isStatusError,
  isNetworkError,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isResourceExpired,
  isInvalid,
  isBadRequest,
  isForbidden,
  isUnauthorized,
  isTooManyRequests,
  isServerTimeout,
  isServiceUnavailable,
  isInternalError,
  type StatusReason,
} from '../client/errors.js';
export { GVR, gvrString, type BuiltinResourceName } from '../api/gvr.js';
export {
  apiVersionOf,
  parseApiVersion,
  namespacedKey,
  splitKey,
  type KubeObject,
  type KubeList,
  type PartialObjectMetadata,
  type GroupVersionResource,
  type GroupVersionKind,
  type WatchEvent,
  type WatchEventType,
  type ObjectMeta,
  type ListMeta,
  type Status,
  type OwnerReference,
} from '../api/types.js';
