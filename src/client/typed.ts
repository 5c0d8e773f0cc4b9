/**
 * Typed accessors over any Client for the built-in kinds of api/gvr.ts:
 * `typed(client).pods('default').get('web')` resolves to a Pod.
 */
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { HorizontalPodAutoscaler } from 'kubernetes-types/autoscaling/v2.js';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type {
  ConfigMap,
  Endpoints,
  Event,
  LimitRange,
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  PodTemplate,
  ReplicationController,
  ResourceQuota,
  Secret,
  Service,
  ServiceAccount,
} from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { Event as EventV1 } from 'kubernetes-types/events/v1.js';
import type { Ingress, IngressClass, NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import type { RuntimeClass } from 'kubernetes-types/node/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import type { PriorityClass } from 'kubernetes-types/scheduling/v1.js';
import type { CSIDriver, CSINode, StorageClass, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { GVR, type BuiltinResourceName } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import type { Client, ResourceInterface } from './interfaces.js';

/** A kubernetes-types interface usable as a KubeObject. */
export type Typed<T> = T & KubeObject;

/** The object type served at each built-in resource. */
export interface BuiltinTypes {
  pods: Pod;
  nodes: Node;
  namespaces: Namespace;
  services: Service;
  endpoints: Endpoints;
  configMaps: ConfigMap;
  secrets: Secret;
  serviceAccounts: ServiceAccount;
  events: Event;
  replicationControllers: ReplicationController;
  resourceQuotas: ResourceQuota;
  limitRanges: LimitRange;
  persistentVolumes: PersistentVolume;
  persistentVolumeClaims: PersistentVolumeClaim;
  podTemplates: PodTemplate;
  deployments: Deployment;
  replicaSets: ReplicaSet;
  statefulSets: StatefulSet;
  daemonSets: DaemonSet;
  controllerRevisions: ControllerRevision;
  jobs: Job;
  cronJobs: CronJob;
  horizontalPodAutoscalers: HorizontalPodAutoscaler;
  podDisruptionBudgets: PodDisruptionBudget;
  leases: Lease;
  endpointSlices: EndpointSlice;
  eventsV1: EventV1;
  roles: Role;
  clusterRoles: ClusterRole;
  roleBindings: RoleBinding;
  clusterRoleBindings: ClusterRoleBinding;
  storageClasses: StorageClass;
  volumeAttachments: VolumeAttachment;
  csiDrivers: CSIDriver;
  csiNodes: CSINode;
  ingresses: Ingress;
  ingressClasses: IngressClass;
  networkPolicies: NetworkPolicy;
  priorityClasses: PriorityClass;
  certificateSigningRequests: CertificateSigningRequest;
  runtimeClasses: RuntimeClass;
  customResourceDefinitions: CustomResourceDefinition;
}

/** One accessor per key of GVR; pass a namespace for namespaced resources, or none for all namespaces. */
export type TypedClient = {
  [N in BuiltinResourceName]: (namespace?: string) => ResourceInterface<Typed<BuiltinTypes[N]>>;
};

export function typed(client: Client): TypedClient {
  const out: Record<string, (ns?: string) => ResourceInterface> = {};
  for (const name of Object.keys(GVR) as BuiltinResourceName[]) {
    const gvr = GVR[name];
    out[name] = (ns?: string) => {
      const r = client.resource(gvr);
      return ns ? r.namespace(ns) : r;
    };
  }
  return out as unknown as TypedClient;
}
