/**
 * Core object shapes shared by every layer. Objects are plain parsed JSON,
 * typed with kubernetes-types; timestamps stay RFC 3339 strings.
 */
import type { ObjectMeta, ListMeta, Status, OwnerReference } from 'kubernetes-types/meta/v1.js';

export type { ObjectMeta, ListMeta, Status, OwnerReference };

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** A list as the API returns it (`PodList`, `List`, ...). */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** Object with metadata only, as served for `application/json;as=PartialObjectMetadata`. */
export interface PartialObjectMetadata extends KubeObject {
  metadata: ObjectMeta;
}

export interface GroupVersionResource {
  group: string; // '' for core
  version: string;
  resource: string; // plural, lower case: 'pods', 'deployments'
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** One event of a watch stream. */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: { apiVersion?: string; kind?: string; metadata: { resourceVersion: string; annotations?: Record<string, string> } } }
  | { type: 'ERROR'; object: Status };

export type WatchEventType = WatchEvent['type'];

/** `apps/v1` from group 'apps' and version 'v1'; `v1` for core. */
export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** Splits `apps/v1` into group and version; `v1` is the core group. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** `namespace/name`, or `name` for cluster-scoped objects: client-go's MetaNamespaceKeyFunc. */
export function namespacedKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/** Inverse of namespacedKey. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
