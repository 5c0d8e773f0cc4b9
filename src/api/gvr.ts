/**
 * GroupVersionResource constants for the built-in kinds kcm uses. The full
 * registry (kinds, short names, scope, verbs) is in registry.ts.
 */
import type { GroupVersionResource } from './types.js';

function gvr(group: string, version: string, resource: string): GroupVersionResource {
  return Object.freeze({ group, version, resource });
}

export const GVR = Object.freeze({
  pods: gvr('', 'v1', 'pods'),
  nodes: gvr('', 'v1', 'nodes'),
  namespaces: gvr('', 'v1', 'namespaces'),
  services: gvr('', 'v1', 'services'),
  endpoints: gvr('', 'v1', 'endpoints'),
  configMaps: gvr('', 'v1', 'configmaps'),
  secrets: gvr('', 'v1', 'secrets'),
  serviceAccounts: gvr('', 'v1', 'serviceaccounts'),
  events: gvr('', 'v1', 'events'),
  replicationControllers: gvr('', 'v1', 'replicationcontrollers'),
  resourceQuotas: gvr('', 'v1', 'resourcequotas'),
  limitRanges: gvr('', 'v1', 'limitranges'),
  persistentVolumes: gvr('', 'v1', 'persistentvolumes'),
  persistentVolumeClaims: gvr('', 'v1', 'persistentvolumeclaims'),
  podTemplates: gvr('', 'v1', 'podtemplates'),
  deployments: gvr('apps', 'v1', 'deployments'),
  replicaSets: gvr('apps', 'v1', 'replicasets'),
  statefulSets: gvr('apps', 'v1', 'statefulsets'),
  daemonSets: gvr('apps', 'v1', 'daemonsets'),
  controllerRevisions: gvr('apps', 'v1', 'controllerrevisions'),
  jobs: gvr('batch', 'v1', 'jobs'),
  cronJobs: gvr('batch', 'v1', 'cronjobs'),
  horizontalPodAutoscalers: gvr('autoscaling', 'v2', 'horizontalpodautoscalers'),
  podDisruptionBudgets: gvr('policy', 'v1', 'poddisruptionbudgets'),
  leases: gvr('coordination.k8s.io', 'v1', 'leases'),
  endpointSlices: gvr('discovery.k8s.io', 'v1', 'endpointslices'),
  eventsV1: gvr('events.k8s.io', 'v1', 'events'),
  roles: gvr('rbac.authorization.k8s.io', 'v1', 'roles'),
  clusterRoles: gvr('rbac.authorization.k8s.io', 'v1', 'clusterroles'),
  roleBindings: gvr('rbac.authorization.k8s.io', 'v1', 'rolebindings'),
  clusterRoleBindings: gvr('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings'),
  storageClasses: gvr('storage.k8s.io', 'v1', 'storageclasses'),
  volumeAttachments: gvr('storage.k8s.io', 'v1', 'volumeattachments'),
  csiDrivers: gvr('storage.k8s.io', 'v1', 'csidrivers'),
  csiNodes: gvr('storage.k8s.io', 'v1', 'csinodes'),
  ingresses: gvr('networking.k8s.io', 'v1', 'ingresses'),
  ingressClasses: gvr('networking.k8s.io', 'v1', 'ingressclasses'),
  networkPolicies: gvr('networking.k8s.io', 'v1', 'networkpolicies'),
  priorityClasses: gvr('scheduling.k8s.io', 'v1', 'priorityclasses'),
  certificateSigningRequests: gvr('certificates.k8s.io', 'v1', 'certificatesigningrequests'),
  runtimeClasses: gvr('node.k8s.io', 'v1', 'runtimeclasses'),
  customResourceDefinitions: gvr('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'),
});

export type BuiltinResourceName = keyof typeof GVR;

/** `deployments.apps/v1`, `pods/v1`: a readable, unique string for a GVR (map keys, logs). */
export function gvrString(r: GroupVersionResource): string {
  return r.group ? `${r.resource}.${r.group}/${r.version}` : `${r.resource}/${r.version}`;
}
