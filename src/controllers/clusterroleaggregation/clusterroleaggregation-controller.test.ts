import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterRole, PolicyRule } from 'kubernetes-types/rbac/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { aggregateRules, descriptor, newClusterRoleAggregationController } from './clusterroleaggregation-controller.js';

type Role = Kube<ClusterRole>;
const rule = (verb: string, resource: string): PolicyRule => ({ verbs: [verb], apiGroups: [''], resources: [resource] });
const role = (name: string, labels: Record<string, string>, rules: PolicyRule[]): Role => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules });
const aggregator = (name: string, ...selectors: Array<Record<string, string>>): Role => ({
  ...role(name, {}, []),
  aggregationRule: { clusterRoleSelectors: selectors.map((matchLabels) => ({ matchLabels })) },
});

describe('clusterrole aggregation controller', () => {
  before(() => setLogOutput(() => {}));

  it('unions rules of the selected roles by selector, then name, without duplicates or itself', () => {
    const all = [
      role('b', { view: 'true' }, [rule('get', 'pods'), rule('list', 'pods')]),
      role('a', { view: 'true', edit: 'true' }, [rule('get', 'pods'), rule('watch', 'pods')]),
      role('c', { edit: 'true' }, [rule('create', 'pods'), { ...rule('list', 'pods'), resourceNames: [] }]),
      { ...aggregator('agg', { view: 'true' }, { edit: 'true' }), metadata: { name: 'agg', labels: { view: 'true' } }, rules: [rule('delete', 'x')] },
    ];
    const got = aggregateRules(all[3]!, all);
    assert.deepEqual(got.map((r) => `${r.verbs![0]} ${r.resources![0]}`), ['get pods', 'watch pods', 'list pods', 'create pods']);
  });

  it('writes the union into the aggregated role and follows changes of the selected roles', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.clusterRoles, aggregator('view', { 'rbac.example/aggregate-to-view': 'true' }), role('pods-view', { 'rbac.example/aggregate-to-view': 'true' }, [rule('get', 'pods')]));
    }, newClusterRoleAggregationController);
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    const rulesOf = () => env.fake.stored<Role>(GVR.clusterRoles, '', 'view')?.rules ?? [];
    await until(() => rulesOf().length === 1, 'first aggregation');
    await env.fake.resource<Role>(GVR.clusterRoles).create(role('svc-view', { 'rbac.example/aggregate-to-view': 'true' }, [rule('get', 'services')]));
    await until(() => rulesOf().length === 2, 'new role aggregated');
    assert.deepEqual(rulesOf().map((r) => r.resources![0]), ['pods', 'services']);
    await env.fake.resource(GVR.clusterRoles).delete('pods-view');
    await until(() => rulesOf().length === 1, 'deleted role removed');
    abort.abort();
    await run;
    await env.stop();
  });

  it('does not write when the rules already match', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.clusterRoles, { ...aggregator('view', { x: 'y' }), rules: [rule('get', 'pods')] }, role('p', { x: 'y' }, [rule('get', 'pods')]), role('plain', {}, []));
    }, newClusterRoleAggregationController);
    await env.c.syncClusterRole('view');
    await env.c.syncClusterRole('plain');
    await env.c.syncClusterRole('missing');
    assert.equal(env.fake.actions().filter((a) => a.verb === 'update').length, 0);
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'clusterrole-aggregation-controller');
    assert.deepEqual(descriptor.aliases, ['clusterrole-aggregation']);
  });
});
