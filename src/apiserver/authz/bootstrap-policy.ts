/**
 * The part of kube-apiserver's bootstrap RBAC policy kcm creates at start
 * under --authorization-mode=RBAC (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
 * cluster-admin (bound to system:masters), system:discovery,
 * system:basic-user and system:public-info-viewer; admin, edit and view
 * with their aggregation rules and the system:aggregate-to-* roles they
 * select (admin/edit/view also carry the aggregated rules themselves, so
 * they work before the clusterrole-aggregation controller runs);
 * system:kube-controller-manager, system:kube-scheduler, system:node,
 * system:node-proxier, system:monitoring, system:auth-delegator; the
 * `system:controller:<name>` role of each controller, bound to the
 * service account kube-system/<name>; and, in kube-system, the Role
 * extension-apiserver-authentication-reader bound to the controller manager
 * and the scheduler (namespace_policy.go), which lets them read the client
 * CA for their own ports' delegated authentication. Rules follow upstream's
 * for the resources kcm serves; they are not a byte-for-byte copy.
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import { publicInfoPaths } from './always-allow.js';

const labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const annotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

function role(name: string, rules: PolicyRule[], extra: { labels?: Record<string, string>; aggregateFrom?: string } = {}): ClusterRole {
  const r: ClusterRole = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels: { ...labels, ...extra.labels }, annotations }, rules };
  if (extra.aggregateFrom) r.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/${extra.aggregateFrom}`]: 'true' } }] };
  return r;
}

type SubjectSpec = { kind: 'Group' | 'User'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

function bindingTo(name: string, roleName: string, subjects: SubjectSpec[]): ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels, annotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: subjects.map((x) => (x.kind === 'ServiceAccount' ? { kind: x.kind, name: x.name, namespace: x.namespace } : { apiGroup: 'rbac.authorization.k8s.io', kind: x.kind, name: x.name })),
  };
}

function binding(name: string, roleName: string, groups: string[]): ClusterRoleBinding {
  return bindingTo(name, roleName, groups.map((g) => ({ kind: 'Group' as const, name: g })));
}

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({ apiGroups, resources, verbs, ...(resourceNames ? { resourceNames } : {}) });
const eventsRule = [rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events'])];
const rw = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const lw = ['list', 'watch'];
const glw = ['get', 'list', 'watch'];

/** Per-controller roles (controller_policy.go): name = the controller's service account in kube-system. */
const controllerRules: Record<string, PolicyRule[]> = {
  'attachdetach-controller': [rule(lw, [''], ['persistentvolumes', 'persistentvolumeclaims']), rule(glw, [''], ['nodes']), rule(['patch', 'update'], [''], ['nodes/status']), rule(lw, [''], ['pods']), rule(rw, ['storage.k8s.io'], ['volumeattachments']), rule(glw, ['storage.k8s.io'], ['csidrivers', 'csinodes'])],
  'certificate-controller': [rule(['get', 'list', 'watch', 'delete'], ['certificates.k8s.io'], ['certificatesigningrequests']), rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']), rule(['approve'], ['certificates.k8s.io'], ['signers']), rule(['sign'], ['certificates.k8s.io'], ['signers']), rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])],
  'clusterrole-aggregation-controller': [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], ['rbac.authorization.k8s.io'], ['clusterroles'])],
  'cronjob-controller': [rule(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']), rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], ['batch'], ['jobs']), rule(['update'], ['batch'], ['cronjobs/status']), rule(['update'], ['batch'], ['cronjobs/finalizers']), rule(['list', 'delete'], [''], ['pods'])],
  'daemon-set-controller': [rule(lw, ['apps'], ['daemonsets']), rule(['update'], ['apps'], ['daemonsets/status', 'daemonsets/finalizers']), rule(lw, [''], ['nodes']), rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']), rule(['create'], [''], ['pods/binding']), rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], ['apps'], ['controllerrevisions'])],
  'deployment-controller': [rule(['get', 'list', 'watch', 'update'], ['apps'], ['deployments']), rule(['update'], ['apps'], ['deployments/status', 'deployments/finalizers']), rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps'], ['replicasets']), rule(['get', 'list', 'watch', 'update'], [''], ['pods'])],
  'disruption-controller': [rule(glw, ['apps'], ['deployments', 'replicasets', 'statefulsets']), rule(glw, [''], ['replicationcontrollers']), rule(glw, ['policy'], ['poddisruptionbudgets']), rule(['update'], ['policy'], ['poddisruptionbudgets/status']), rule(['get'], ['*'], ['*/scale']), rule(['patch', 'update'], [''], ['pods/status'])],
  'endpoint-controller': [rule(lw, [''], ['services', 'pods']), rule(['get', 'list', 'create', 'update', 'delete'], [''], ['endpoints']), rule(['create'], [''], ['endpoints/restricted'])],
  'endpointslice-controller': [rule(lw, [''], ['services', 'pods', 'nodes']), rule(['get', 'list', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']), rule(['update'], [''], ['services/finalizers'])],
  'endpointslicemirroring-controller': [rule(lw, [''], ['services', 'endpoints']), rule(['get', 'list', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']), rule(['update'], [''], ['endpoints/finalizers', 'services/finalizers'])],
  'ephemeral-volume-controller': [rule(['get', 'list', 'watch'], [''], ['pods']), rule(['update'], [''], ['pods/finalizers']), rule(['get', 'list', 'watch', 'create'], [''], ['persistentvolumeclaims'])],
  'expand-controller': [rule(['get', 'list', 'watch', 'update', 'patch'], [''], ['persistentvolumes']), rule(['update', 'patch'], [''], ['persistentvolumeclaims/status']), rule(glw, [''], ['persistentvolumeclaims']), rule(glw, ['storage.k8s.io'], ['storageclasses']), rule(['get'], [''], ['endpoints', 'services']), rule(['get'], [''], ['secrets'])],
  'generic-garbage-collector': [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*'])],
  'horizontal-pod-autoscaler': [rule(['get', 'list', 'watch'], ['autoscaling'], ['horizontalpodautoscalers']), rule(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']), rule(['get', 'update'], ['*'], ['*/scale']), rule(['list'], [''], ['pods']), rule(['list'], ['metrics.k8s.io'], ['pods']), rule(['get', 'list'], ['custom.metrics.k8s.io', 'external.metrics.k8s.io'], ['*'])],
  'job-controller': [rule(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']), rule(['update', 'patch'], ['batch'], ['jobs/status', 'jobs/finalizers']), rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods'])],
  'namespace-controller': [rule(['get', 'list', 'watch', 'delete'], [''], ['namespaces']), rule(['update'], [''], ['namespaces/finalize', 'namespaces/status']), rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*'])],
  'node-controller': [rule(['get', 'list', 'update', 'delete', 'patch'], [''], ['nodes']), rule(['patch', 'update'], [''], ['nodes/status']), rule(['patch', 'update'], [''], ['pods/status']), rule(['list', 'delete'], [''], ['pods'])],
  'persistent-volume-binder': [rule(['get', 'list', 'watch', 'update', 'create', 'delete'], [''], ['persistentvolumes']), rule(['update'], [''], ['persistentvolumes/status']), rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']), rule(['update'], [''], ['persistentvolumeclaims/status']), rule(['list', 'watch', 'get', 'create', 'delete'], [''], ['pods']), rule(glw, ['storage.k8s.io'], ['storageclasses']), rule(glw, [''], ['nodes'])],
  'pod-garbage-collector': [rule(['list', 'watch', 'delete'], [''], ['pods']), rule(['get', 'list'], [''], ['nodes']), rule(['patch'], [''], ['pods/status'])],
  'replicaset-controller': [rule(['get', 'list', 'watch', 'update'], ['apps'], ['replicasets']), rule(['update'], ['apps'], ['replicasets/status', 'replicasets/finalizers']), rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods'])],
  'replication-controller': [rule(['get', 'list', 'watch', 'update'], [''], ['replicationcontrollers']), rule(['update'], [''], ['replicationcontrollers/status', 'replicationcontrollers/finalizers']), rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods'])],
  'resourcequota-controller': [rule(lw, ['*'], ['*']), rule(['update'], [''], ['resourcequotas/status'])],
  'root-ca-cert-publisher': [rule(['create', 'update'], [''], ['configmaps'])],
  'route-controller': [rule(lw, [''], ['nodes']), rule(['patch'], [''], ['nodes/status'])],
  'service-account-controller': [rule(['create'], [''], ['serviceaccounts'])],
  'service-controller': [rule(glw, [''], ['services']), rule(['patch', 'update'], [''], ['services/status']), rule(lw, [''], ['nodes'])],
  'statefulset-controller': [rule(lw, [''], ['pods']), rule(lw, ['apps'], ['statefulsets']), rule(['update'], ['apps'], ['statefulsets/status', 'statefulsets/finalizers']), rule(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']), rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], ['apps'], ['controllerrevisions']), rule(['get', 'create'], [''], ['persistentvolumeclaims']), rule(['update', 'delete'], [''], ['persistentvolumeclaims'])],
  'ttl-controller': [rule(['update', 'patch', 'list', 'watch'], [''], ['nodes'])],
  'ttl-after-finished-controller': [rule(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs'])],
  'pvc-protection-controller': [rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']), rule(lw, [''], ['pods'])],
  'pv-protection-controller': [rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumes'])],
  'legacy-service-account-token-cleaner': [rule(['delete', 'patch'], [''], ['secrets']), rule(['get'], [''], ['configmaps'], ['kube-apiserver-legacy-service-account-token-tracking']), rule(['list', 'watch'], [''], ['pods', 'secrets'])],
};

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

/** metrics-server's system:aggregated-metrics-reader rule. */
const metricsReader: PolicyRule[] = [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }];

const adminOnly: PolicyRule[] = [
  { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: [...read, ...write] },
  { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
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
  role('system:public-info-viewer', [{ nonResourceURLs: [...publicInfoPaths], verbs: ['get'] }]),
  // view ⊂ edit ⊂ admin by label, as upstream: the aggregation controller recomputes each from its selector.
  role('view', [...workloads, ...metricsReader], { aggregateFrom: 'aggregate-to-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }),
  role('edit', [...workloads, ...editable, ...metricsReader], { aggregateFrom: 'aggregate-to-edit', labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }),
  role('admin', [...workloads, ...editable, ...adminOnly, ...metricsReader], { aggregateFrom: 'aggregate-to-admin' }),
  role('system:aggregate-to-view', workloads, { labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }),
  role('system:aggregate-to-edit', editable, { labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }),
  role('system:aggregate-to-admin', adminOnly, { labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }),
  // What metrics-server's manifest installs (components.yaml): kcm up serves metrics.k8s.io itself.
  role('system:aggregated-metrics-reader', metricsReader, {
    labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true', 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
  }),
  role('system:auth-delegator', [rule(['create'], ['authentication.k8s.io'], ['tokenreviews']), rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])]),
  role('system:monitoring', [{ nonResourceURLs: ['/healthz', '/healthz/*', '/livez', '/livez/*', '/readyz', '/readyz/*', '/metrics', '/metrics/slis'], verbs: ['get'] }]),
  role('system:kube-controller-manager', [
    ...eventsRule,
    rule(['create'], ['coordination.k8s.io'], ['leases']),
    rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-controller-manager']),
    rule(['create'], [''], ['secrets', 'serviceaccounts']),
    rule(['delete'], [''], ['secrets']),
    rule(['get'], [''], ['configmaps', 'namespaces', 'secrets', 'serviceaccounts']),
    rule(['update'], [''], ['secrets', 'serviceaccounts']),
    // Delegated authentication and authorization of its own port.
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    rule(lw, ['*'], ['*']),
    rule(['create'], [''], ['serviceaccounts/token']),
  ]),
  role('system:kube-scheduler', [
    ...eventsRule,
    rule(['create'], ['coordination.k8s.io'], ['leases']),
    rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
    rule(glw, [''], ['nodes']),
    rule(['delete', 'get', 'list', 'watch'], [''], ['pods']),
    rule(['create'], [''], ['bindings', 'pods/binding']),
    rule(['patch', 'update'], [''], ['pods/status']),
    rule(lw, [''], ['replicationcontrollers', 'services', 'namespaces', 'persistentvolumeclaims', 'persistentvolumes']),
    rule(lw, ['apps'], ['replicasets', 'statefulsets']),
    rule(lw, ['policy'], ['poddisruptionbudgets']),
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    rule(lw, ['storage.k8s.io'], ['csinodes', 'csidrivers', 'csistoragecapacities', 'storageclasses']),
  ]),
  // The scheduler's VolumeBinding plugin binds volumes and marks claims for provisioning.
  role('system:volume-scheduler', [
    rule(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumes']),
    rule(['get', 'list', 'watch'], ['storage.k8s.io'], ['storageclasses']),
    rule(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumeclaims']),
  ]),
  role('system:node', [
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(['get', 'list', 'watch'], [''], ['services']),
    rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
    rule(['patch', 'update'], [''], ['nodes/status']),
    rule(['patch', 'update'], [''], ['nodes']),
    ...eventsRule,
    rule(glw, [''], ['pods']),
    rule(['create', 'delete'], [''], ['pods']),
    rule(['update', 'patch'], [''], ['pods/status']),
    rule(['create'], [''], ['pods/eviction']),
    rule(['get'], [''], ['configmaps', 'secrets', 'persistentvolumeclaims', 'persistentvolumes']),
    rule(['get'], [''], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
    rule(['get'], ['storage.k8s.io'], ['volumeattachments', 'csidrivers']),
    rule(['create'], [''], ['serviceaccounts/token']),
    rule(['update', 'patch'], [''], ['persistentvolumeclaims/status']),
    rule(['get', 'create', 'update', 'patch', 'delete'], ['storage.k8s.io'], ['csinodes']),
    rule(glw, ['node.k8s.io'], ['runtimeclasses']),
  ]),
  role('system:node-proxier', [rule(lw, [''], ['services', 'endpoints']), rule(glw, [''], ['nodes']), ...eventsRule, rule(lw, ['discovery.k8s.io'], ['endpointslices'])]),
  ...Object.entries(controllerRules).map(([name, rules]) => role(`system:controller:${name}`, [...rules, ...eventsRule])),
];

export const bootstrapClusterRoleBindings: readonly ClusterRoleBinding[] = [
  binding('cluster-admin', 'cluster-admin', ['system:masters']),
  binding('system:discovery', 'system:discovery', ['system:authenticated']),
  binding('system:basic-user', 'system:basic-user', ['system:authenticated']),
  binding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  binding('system:monitoring', 'system:monitoring', ['system:monitoring']),
  bindingTo('system:kube-controller-manager', 'system:kube-controller-manager', [{ kind: 'User', name: 'system:kube-controller-manager' }]),
  bindingTo('system:kube-scheduler', 'system:kube-scheduler', [{ kind: 'User', name: 'system:kube-scheduler' }]),
  bindingTo('system:volume-scheduler', 'system:volume-scheduler', [{ kind: 'User', name: 'system:kube-scheduler' }]),
  // Upstream binds system:node to nobody (the Node authorizer covers kubelets).
  bindingTo('system:node', 'system:node', []),
  bindingTo('system:node-proxier', 'system:node-proxier', [{ kind: 'User', name: 'system:kube-proxy' }]),
  ...Object.keys(controllerRules).map((name) => bindingTo(`system:controller:${name}`, `system:controller:${name}`, [{ kind: 'ServiceAccount', name, namespace: 'kube-system' }])),
];

/** Roles upstream creates in one namespace (namespace_policy.go); kcm creates the ones its components need. */
export const bootstrapNamespaceRoles: readonly Role[] = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'extension-apiserver-authentication-reader', namespace: 'kube-system', labels, annotations },
    rules: [rule(['get', 'list', 'watch'], [''], ['configmaps'], ['extension-apiserver-authentication'])],
  },
];

export const bootstrapNamespaceRoleBindings: readonly RoleBinding[] = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'system::extension-apiserver-authentication-reader', namespace: 'kube-system', labels, annotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-scheduler' },
    ],
  },
];
