/**
 * Kinds of the built-in resources, so the fake client can fill `kind` on
 * objects created without one (as the real server does).
 */
const KINDS: Record<string, string> = {
  pods: 'Pod',
  nodes: 'Node',
  namespaces: 'Namespace',
  services: 'Service',
  endpoints: 'Endpoints',
  configmaps: 'ConfigMap',
  secrets: 'Secret',
  serviceaccounts: 'ServiceAccount',
  events: 'Event',
  replicationcontrollers: 'ReplicationController',
  resourcequotas: 'ResourceQuota',
  limitranges: 'LimitRange',
  persistentvolumes: 'PersistentVolume',
  persistentvolumeclaims: 'PersistentVolumeClaim',
  podtemplates: 'PodTemplate',
  deployments: 'Deployment',
  replicasets: 'ReplicaSet',
  statefulsets: 'StatefulSet',
  daemonsets: 'DaemonSet',
  controllerrevisions: 'ControllerRevision',
  jobs: 'Job',
  cronjobs: 'CronJob',
  horizontalpodautoscalers: 'HorizontalPodAutoscaler',
  poddisruptionbudgets: 'PodDisruptionBudget',
  leases: 'Lease',
  endpointslices: 'EndpointSlice',
  roles: 'Role',
  clusterroles: 'ClusterRole',
  rolebindings: 'RoleBinding',
  clusterrolebindings: 'ClusterRoleBinding',
  storageclasses: 'StorageClass',
  volumeattachments: 'VolumeAttachment',
  csidrivers: 'CSIDriver',
  csinodes: 'CSINode',
  ingresses: 'Ingress',
  ingressclasses: 'IngressClass',
  networkpolicies: 'NetworkPolicy',
  priorityclasses: 'PriorityClass',
  certificatesigningrequests: 'CertificateSigningRequest',
  runtimeclasses: 'RuntimeClass',
  customresourcedefinitions: 'CustomResourceDefinition',
};

/** The kind of a built-in plural resource name, or undefined. */
export function kindForResource(resource: string): string | undefined {
  return KINDS[resource];
}
