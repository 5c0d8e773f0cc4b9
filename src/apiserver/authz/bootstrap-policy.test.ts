import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles, bootstrapNamespaceRoleBindings, bootstrapNamespaceRoles } from './bootstrap-policy.js';
import { ruleAllows, subjectMatches, type AuthorizationAttributes } from './rbac.js';

/** Whether the static bootstrap policy alone allows the request (cluster-wide bindings only). */
function allowed(a: AuthorizationAttributes): boolean {
  return bootstrapClusterRoleBindings.some(
    (b) => (b.subjects ?? []).some((s) => subjectMatches(s, a.user, '')) && (bootstrapClusterRoles.find((r) => r.metadata?.name === b.roleRef.name)?.rules ?? []).some((r) => ruleAllows(a, r)),
  );
}

const sa = (name: string) => ({ username: `system:serviceaccount:kube-system:${name}`, groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] });
const res = (user: AuthorizationAttributes['user'], verb: string, apiGroup: string, resource: string, subresource = ''): AuthorizationAttributes => ({ user, verb, resourceRequest: true, apiGroup, resource, subresource, namespace: 'default' });

describe('bootstrap RBAC policy', () => {
  it('binds each controller role to its kube-system service account, scoped to its job', () => {
    assert.ok(allowed(res(sa('deployment-controller'), 'update', 'apps', 'deployments', 'status')));
    assert.ok(allowed(res(sa('deployment-controller'), 'create', 'apps', 'replicasets')));
    assert.ok(!allowed(res(sa('deployment-controller'), 'delete', '', 'nodes')));
    assert.ok(allowed(res(sa('replicaset-controller'), 'create', '', 'pods')));
    assert.ok(allowed(res(sa('namespace-controller'), 'deletecollection', 'apps', 'deployments')));
    assert.ok(allowed(res(sa('job-controller'), 'create', '', 'events')));
    assert.ok(!allowed(res(sa('unknown-controller'), 'list', '', 'pods')));
  });

  it('grants the controller manager, scheduler and kube-proxy users what upstream grants', () => {
    const kcm = { username: 'system:kube-controller-manager', groups: ['system:authenticated'] };
    assert.ok(allowed(res(kcm, 'watch', 'apps', 'deployments')));
    assert.ok(allowed(res(kcm, 'create', '', 'serviceaccounts', 'token')));
    const sched = { username: 'system:kube-scheduler', groups: ['system:authenticated'] };
    assert.ok(allowed(res(sched, 'create', '', 'pods', 'binding')));
    assert.ok(!allowed(res(sched, 'create', '', 'pods')));
    // system:volume-scheduler: the VolumeBinding plugin writes claimRefs and selected-node annotations.
    assert.ok(allowed(res(sched, 'update', '', 'persistentvolumes')));
    assert.ok(allowed(res(sched, 'patch', '', 'persistentvolumeclaims')));
    assert.ok(!allowed(res(sched, 'delete', '', 'persistentvolumeclaims')));
    assert.ok(allowed(res({ username: 'system:kube-proxy', groups: [] }, 'list', 'discovery.k8s.io', 'endpointslices')));
    const mon = { username: 'prom', groups: ['system:monitoring'] };
    assert.ok(allowed({ user: mon, verb: 'get', resourceRequest: false, path: '/metrics' }));
  });

  it('aggregates view into edit into admin by label', () => {
    const byName = new Map(bootstrapClusterRoles.map((r) => [r.metadata!.name!, r]));
    assert.equal(byName.get('view')!.metadata!.labels!['rbac.authorization.k8s.io/aggregate-to-edit'], 'true');
    assert.equal(byName.get('edit')!.metadata!.labels!['rbac.authorization.k8s.io/aggregate-to-admin'], 'true');
    assert.deepEqual(byName.get('admin')!.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }] });
    assert.equal(byName.get('system:aggregate-to-view')!.metadata!.labels!['rbac.authorization.k8s.io/aggregate-to-view'], 'true');
    assert.ok(byName.has('system:auth-delegator') && byName.has('system:node') && byName.has('system:node-proxier'));
  });

  it('lets the controller manager and the scheduler run delegated authentication and authorization for their ports', () => {
    for (const username of ['system:kube-controller-manager', 'system:kube-scheduler']) {
      const user = { username, groups: ['system:authenticated'] };
      assert.ok(allowed(res(user, 'create', 'authentication.k8s.io', 'tokenreviews')), username);
      assert.ok(allowed(res(user, 'create', 'authorization.k8s.io', 'subjectaccessreviews')), username);
      // The client CA, through the RoleBinding in kube-system (upstream's namespace policy).
      const inKubeSystem = bootstrapNamespaceRoleBindings.some(
        (b) =>
          b.metadata?.namespace === 'kube-system' &&
          (b.subjects ?? []).some((s) => subjectMatches(s, user, 'kube-system')) &&
          (bootstrapNamespaceRoles.find((r) => r.metadata?.name === b.roleRef.name && r.metadata?.namespace === 'kube-system')?.rules ?? []).some((r) =>
            ruleAllows({ ...res(user, 'get', '', 'configmaps'), namespace: 'kube-system', name: 'extension-apiserver-authentication' }, r),
          ),
      );
      assert.ok(inKubeSystem, username);
    }
    const anonymous = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    assert.ok(allowed({ user: anonymous, verb: 'get', resourceRequest: false, path: '/healthz' }));
    assert.ok(!allowed({ user: anonymous, verb: 'get', resourceRequest: false, path: '/metrics' }));
  });
});
