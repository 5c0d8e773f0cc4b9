/**
 * Kinds: the values that stand for an object type in kcm/runtime, as Go
 * types do in controller-runtime. A `ResourceKind<T>` names where objects
 * live (group, version, plural, scope) and carries their TypeScript type `T`,
 * so `controller(mgr).for(kinds.Deployment)` hands the reconciler
 * Deployments and `client.list(kinds.Pod)` resolves to Pods.
 *
 *   const Widget = defineKind<Widget>({ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true });
 */
import type * as appsv1 from 'kubernetes-types/apps/v1.js';
import type * as apiextensionsv1 from 'kubernetes-types/apiextensions/v1.js';
import type * as autoscalingv2 from 'kubernetes-types/autoscaling/v2.js';
import type * as batchv1 from 'kubernetes-types/batch/v1.js';
import type * as certificatesv1 from 'kubernetes-types/certificates/v1.js';
import type * as coordinationv1 from 'kubernetes-types/coordination/v1.js';
import type * as corev1 from 'kubernetes-types/core/v1.js';
import type * as discoveryv1 from 'kubernetes-types/discovery/v1.js';
import type * as networkingv1 from 'kubernetes-types/networking/v1.js';
import type * as nodev1 from 'kubernetes-types/node/v1.js';
import type * as policyv1 from 'kubernetes-types/policy/v1.js';
import type * as rbacv1 from 'kubernetes-types/rbac/v1.js';
import type * as schedulingv1 from 'kubernetes-types/scheduling/v1.js';
import type * as storagev1 from 'kubernetes-types/storage/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { findKind } from '../api/registry.js';
import { apiVersionOf, parseApiVersion, type GroupVersionKind, type GroupVersionResource } from '../api/types.js';

/**
 * Any Kubernetes object: kubernetes-types' interfaces and your own custom
 * resource types satisfy it. Objects from the cache are shared; the runtime
 * client hands out copies.
 */
export interface RuntimeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** An object with metadata only (`PartialObjectMetadata`), as metadata-only informers store. */
export interface PartialObjectMetadata extends RuntimeObject {
  metadata: ObjectMeta;
}

/** An object type, and where the API serves it. */
export interface ResourceKind<T extends RuntimeObject = RuntimeObject> {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The resource name in URLs: lower-case plural (`deployments`). */
  readonly plural: string;
  readonly namespaced: boolean;
  /** `apps/v1`, `v1`. */
  readonly apiVersion: string;
  /** True for the metadata-only view made by `metadataOnly(kind)`. */
  readonly metadataOnly: boolean;
  /** Type carrier for `T`; never set at run time. */
  readonly __object?: T;
}

/** The object type of a kind: `ObjectOf<typeof kinds.Pod>` is a Pod. */
export type ObjectOf<K> = K extends ResourceKind<infer T> ? T : never;

export interface KindSpec {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Declares a kind, usually a custom resource: the plural must be the
 * resource's lower-case URL name, as its CustomResourceDefinition declares.
 */
export function defineKind<T extends RuntimeObject>(spec: KindSpec): ResourceKind<T> {
  if (!spec.kind || !/^[A-Za-z][A-Za-z0-9]*$/.test(spec.kind)) throw new TypeError(`defineKind: kind ${JSON.stringify(spec.kind)} is not a valid kind name`);
  if (!spec.version) throw new TypeError(`defineKind: ${spec.kind} needs a version`);
  if (!NAME_RE.test(spec.plural)) throw new TypeError(`defineKind: plural ${JSON.stringify(spec.plural)} of ${spec.kind} must be a lower-case DNS label`);
  return Object.freeze({
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    plural: spec.plural,
    namespaced: spec.namespaced,
    apiVersion: apiVersionOf(spec.group, spec.version),
    metadataOnly: false,
  });
}

/**
 * The metadata-only view of a kind: its informer lists and watches
 * `PartialObjectMetadata` (labels, annotations, owners, finalizers), which
 * costs a fraction of the memory for kinds with large specs (Secrets, Pods).
 */
export function metadataOnly(kind: ResourceKind): ResourceKind<PartialObjectMetadata> {
  const { group, version, kind: k, plural, namespaced, apiVersion } = kind;
  return Object.freeze({ group, version, kind: k, plural, namespaced, apiVersion, metadataOnly: true });
}

/** Group, version and resource of a kind (for the low-level client). */
export function gvrOf(kind: ResourceKind): GroupVersionResource {
  return { group: kind.group, version: kind.version, resource: kind.plural };
}

export function gvkOf(kind: ResourceKind): GroupVersionKind {
  return { group: kind.group, version: kind.version, kind: kind.kind };
}

/** `Deployment.apps/v1`, `Pod/v1` (`[metadata]` appended for metadata-only views): for logs and map keys. */
export function kindString(kind: ResourceKind): string {
  const base = kind.group ? `${kind.kind}.${kind.group}/${kind.version}` : `${kind.kind}/${kind.version}`;
  return kind.metadataOnly ? `${base}[metadata]` : base;
}

function builtin<T extends RuntimeObject>(apiVersion: string, kind: string): ResourceKind<T> {
  const { group, version } = parseApiVersion(apiVersion);
  const info = findKind(group, version, kind);
  if (!info) throw new Error(`built-in kind ${kind} (${apiVersion}) is not in the resource registry`);
  return defineKind<T>({ group, version, kind, plural: info.resource, namespaced: info.namespaced });
}

/** The built-in kinds, typed with kubernetes-types. */
export const kinds = Object.freeze({
  Pod: builtin<corev1.Pod>('v1', 'Pod'),
  Node: builtin<corev1.Node>('v1', 'Node'),
  Namespace: builtin<corev1.Namespace>('v1', 'Namespace'),
  Service: builtin<corev1.Service>('v1', 'Service'),
  Endpoints: builtin<corev1.Endpoints>('v1', 'Endpoints'),
  ConfigMap: builtin<corev1.ConfigMap>('v1', 'ConfigMap'),
  Secret: builtin<corev1.Secret>('v1', 'Secret'),
  ServiceAccount: builtin<corev1.ServiceAccount>('v1', 'ServiceAccount'),
  Event: builtin<corev1.Event>('v1', 'Event'),
  ReplicationController: builtin<corev1.ReplicationController>('v1', 'ReplicationController'),
  ResourceQuota: builtin<corev1.ResourceQuota>('v1', 'ResourceQuota'),
  LimitRange: builtin<corev1.LimitRange>('v1', 'LimitRange'),
  PersistentVolume: builtin<corev1.PersistentVolume>('v1', 'PersistentVolume'),
  PersistentVolumeClaim: builtin<corev1.PersistentVolumeClaim>('v1', 'PersistentVolumeClaim'),
  PodTemplate: builtin<corev1.PodTemplate>('v1', 'PodTemplate'),
  Deployment: builtin<appsv1.Deployment>('apps/v1', 'Deployment'),
  ReplicaSet: builtin<appsv1.ReplicaSet>('apps/v1', 'ReplicaSet'),
  StatefulSet: builtin<appsv1.StatefulSet>('apps/v1', 'StatefulSet'),
  DaemonSet: builtin<appsv1.DaemonSet>('apps/v1', 'DaemonSet'),
  ControllerRevision: builtin<appsv1.ControllerRevision>('apps/v1', 'ControllerRevision'),
  Job: builtin<batchv1.Job>('batch/v1', 'Job'),
  CronJob: builtin<batchv1.CronJob>('batch/v1', 'CronJob'),
  HorizontalPodAutoscaler: builtin<autoscalingv2.HorizontalPodAutoscaler>('autoscaling/v2', 'HorizontalPodAutoscaler'),
  PodDisruptionBudget: builtin<policyv1.PodDisruptionBudget>('policy/v1', 'PodDisruptionBudget'),
  Lease: builtin<coordinationv1.Lease>('coordination.k8s.io/v1', 'Lease'),
  EndpointSlice: builtin<discoveryv1.EndpointSlice>('discovery.k8s.io/v1', 'EndpointSlice'),
  Role: builtin<rbacv1.Role>('rbac.authorization.k8s.io/v1', 'Role'),
  ClusterRole: builtin<rbacv1.ClusterRole>('rbac.authorization.k8s.io/v1', 'ClusterRole'),
  RoleBinding: builtin<rbacv1.RoleBinding>('rbac.authorization.k8s.io/v1', 'RoleBinding'),
  ClusterRoleBinding: builtin<rbacv1.ClusterRoleBinding>('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'),
  StorageClass: builtin<storagev1.StorageClass>('storage.k8s.io/v1', 'StorageClass'),
  VolumeAttachment: builtin<storagev1.VolumeAttachment>('storage.k8s.io/v1', 'VolumeAttachment'),
  CSIDriver: builtin<storagev1.CSIDriver>('storage.k8s.io/v1', 'CSIDriver'),
  CSINode: builtin<storagev1.CSINode>('storage.k8s.io/v1', 'CSINode'),
  Ingress: builtin<networkingv1.Ingress>('networking.k8s.io/v1', 'Ingress'),
  IngressClass: builtin<networkingv1.IngressClass>('networking.k8s.io/v1', 'IngressClass'),
  NetworkPolicy: builtin<networkingv1.NetworkPolicy>('networking.k8s.io/v1', 'NetworkPolicy'),
  PriorityClass: builtin<schedulingv1.PriorityClass>('scheduling.k8s.io/v1', 'PriorityClass'),
  CertificateSigningRequest: builtin<certificatesv1.CertificateSigningRequest>('certificates.k8s.io/v1', 'CertificateSigningRequest'),
  RuntimeClass: builtin<nodev1.RuntimeClass>('node.k8s.io/v1', 'RuntimeClass'),
  CustomResourceDefinition: builtin<apiextensionsv1.CustomResourceDefinition>('apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
});

/** The built-in kind of an apiVersion and kind, if kcm knows it. */
export function builtinKind(apiVersion: string, kind: string): ResourceKind | undefined {
  const { group, version } = parseApiVersion(apiVersion);
  const info = findKind(group, version, kind);
  if (!info) return undefined;
  return defineKind({ group, version, kind, plural: info.resource, namespaced: info.namespaced });
}
