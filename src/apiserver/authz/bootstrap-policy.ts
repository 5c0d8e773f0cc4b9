/**
 * The part of kube-apiserver's bootstrap RBAC policy kcm creates at start
 * under --authorization-mode=RBAC: cluster-admin (bound to system:masters),
 * system:discovery, system:basic-user and system:public-info-viewer (bound
 * to authenticated, and for public info also unauthenticated, users), and
 * the aggregate-free admin, edit and view roles.
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule } from 'kubernetes-types/rbac/v1.js';

const labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const annotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

function role(name: string, rules: PolicyRule[]): ClusterRole {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels, annotations }, rules };
}

function binding(name: string, roleName: string, groups: string[]): ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels, annotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

const read = ['get', 'list', 'watch'];
const write = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const workloads: PolicyRule[] = [
  { apiGroups: [''], resources: ['pods', 'pods/log', 'pods/status', 'services', 'endpoints', 'configmaps', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'events', 'limitranges', 'resourcequotas', 'resourcequotas/status', 'namespaces', 'namespaces/status', 'bindings'], verbs: read },
  { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status', 'daemonsets', 'daemonsets/status', 'controllerrevisions'], verbs: read },
  { apiGroups: ['batch'], resources: ['jobs', 'jobs/status', 'cronjobs', 'cronjobs/status'], verbs: read },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], verbs: read },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'], verbs: read },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingresses/status', 'networkpolicies'], verbs: read },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: read },
];
const editable: PolicyRule[] = [
  { apiGroups: [''], resources: ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'pods/eviction', 'services', 'services/proxy', 'endpoints', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'serviceaccounts/token'], verbs: write },
  { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale', 'daemonsets'], verbs: write },
  { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: write },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: write },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: write },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: write },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: write },
  { apiGroups: [''], resources: ['secrets'], verbs: read },
];

export const bootstrapClusterRoles: readonly ClusterRole[] = [
  role('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]),
  role('system:discovery', [{ nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
  role('system:basic-user', [
    { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]),
  role('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
  role('view', workloads),
  role('edit', [...workloads, ...editable]),
  role('admin', [
    ...workloads,
    ...editable,
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: [...read, ...write] },
    { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
  ]),
];

export const bootstrapClusterRoleBindings: readonly ClusterRoleBinding[] = [
  binding('cluster-admin', 'cluster-admin', ['system:masters']),
  binding('system:discovery', 'system:discovery', ['system:authenticated']),
  binding('system:basic-user', 'system:basic-user', ['system:authenticated']),
  binding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
];
