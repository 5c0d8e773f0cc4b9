import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ResourceQuota } from 'kubernetes-types/core/v1.js';
import { quotaEvaluatorFor, groupResourcesForQuotaNames, isBestEffort, isIgnoredQuotaResource, podResourceTotals } from './evaluators.js';
import { formatResourceList, prettyPrint, parseResourceList, lessThanOrEqual } from './resource-list.js';
import { calculateQuotaUsage } from './usage.js';
import type { KubeObject } from '../types.js';

const podOf = (spec: Partial<Pod['spec']> & object, meta: Record<string, unknown> = {}, status: Record<string, unknown> = {}): Pod => ({ metadata: { name: 'p', ...meta }, spec: { containers: [], ...spec }, status });

describe('quota evaluators', () => {
  it('sums app containers and takes the largest init container for pod requests', () => {
    const pod = podOf({
      containers: [
        { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
        { name: 'b', resources: { requests: { cpu: '200m' } } },
      ],
      initContainers: [{ name: 'i', resources: { requests: { cpu: '1' } } }],
    });
    assert.deepEqual(formatResourceList(podResourceTotals(pod, 'requests')), { cpu: '1', memory: '64Mi' });
  });

  it('charges a running pod for pods, cpu and requests.cpu, and a finished pod only for count/pods', () => {
    const ev = quotaEvaluatorFor('', 'pods');
    const pod = podOf({ containers: [{ name: 'a', resources: { requests: { cpu: '250m' }, limits: { cpu: '500m' } } }] });
    assert.deepEqual(formatResourceList(ev.usage(pod as KubeObject, 0)), { 'count/pods': '1', cpu: '250m', 'limits.cpu': '500m', pods: '1', 'requests.cpu': '250m' });
    const done = { ...pod, status: { phase: 'Succeeded' } };
    assert.deepEqual(formatResourceList(ev.usage(done as KubeObject, 0)), { 'count/pods': '1' });
  });

  it('stops charging a deleting pod once its grace period has passed', () => {
    const ev = quotaEvaluatorFor('', 'pods');
    const pod = podOf({ containers: [{ name: 'a' }] }, { deletionTimestamp: '2024-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 });
    const t0 = Date.parse('2024-01-01T00:00:00Z');
    assert.ok(ev.usage(pod as KubeObject, t0 + 10_000).has('pods'));
    assert.ok(!ev.usage(pod as KubeObject, t0 + 31_000).has('pods'));
  });

  it('tells BestEffort pods from the others and matches PriorityClass selectors', () => {
    const ev = quotaEvaluatorFor('', 'pods');
    const be = podOf({ containers: [{ name: 'a' }], priorityClassName: 'high' });
    const burst = podOf({ containers: [{ name: 'a', resources: { limits: { memory: '1Gi' } } }] });
    assert.ok(isBestEffort(be));
    assert.ok(!isBestEffort(burst));
    assert.ok(ev.matchesScope({ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, be as KubeObject));
    assert.ok(!ev.matchesScope({ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, burst as KubeObject));
    assert.ok(ev.matchesScope({ scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, burst as KubeObject));
    assert.ok(ev.matchesScope({ scopeName: 'Terminating', operator: 'Exists' }, podOf({ containers: [], activeDeadlineSeconds: 5 }) as KubeObject));
  });

  it('names the containers missing a required cpu or memory value', () => {
    const ev = quotaEvaluatorFor('', 'pods');
    const pod = podOf({ containers: [{ name: 'b', resources: { limits: { cpu: '1' } } }, { name: 'a' }] });
    assert.equal(ev.constraints(['limits.cpu', 'requests.memory', 'pods'], pod as KubeObject), 'must specify limits.cpu for: a; requests.memory for: a,b');
    assert.equal(ev.constraints(['pods'], pod as KubeObject), undefined);
  });

  it('counts node ports per port and one load balancer, and PVC storage per class', () => {
    const svc = quotaEvaluatorFor('', 'services');
    const lb = { spec: { type: 'LoadBalancer', ports: [{ port: 80 }, { port: 443 }] } };
    assert.deepEqual(formatResourceList(svc.usage(lb, 0)), { 'count/services': '1', services: '1', 'services.loadbalancers': '1', 'services.nodeports': '2' });
    const pvc = quotaEvaluatorFor('', 'persistentvolumeclaims');
    const claim = { spec: { storageClassName: 'gold', resources: { requests: { storage: '5Gi' } } } };
    assert.deepEqual(formatResourceList(pvc.usage(claim, 0)), {
      'count/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/requests.storage': '5Gi',
      persistentvolumeclaims: '1',
      'requests.storage': '5Gi',
    });
  });

  it('maps quota names to the resources whose objects they count', () => {
    const grs = groupResourcesForQuotaNames(['pods', 'requests.cpu', 'count/deployments.apps', 'secrets', 'requests.storage', 'count/widgets.example.com', 'bogus']);
    assert.deepEqual(
      grs.map((g) => `${g.resource}.${g.group}`).sort(),
      ['deployments.apps', 'persistentvolumeclaims.', 'pods.', 'secrets.', 'widgets.example.com'].sort(),
    );
  });

  it('adds up a namespace for one quota, zero where nothing is used, honouring scopes', async () => {
    const q: ResourceQuota = { metadata: { name: 'q' }, spec: { hard: { pods: '10', 'requests.memory': '1Gi', configmaps: '5' }, scopes: [] } };
    const pods = [
      podOf({ containers: [{ name: 'a', resources: { requests: { memory: '128Mi' } } }] }),
      podOf({ containers: [{ name: 'a', resources: { requests: { memory: '256Mi' } } }] }),
      podOf({ containers: [{ name: 'a' }] }, {}, { phase: 'Failed' }),
    ];
    const used = await calculateQuotaUsage(q, (g, r) => (r === 'pods' ? (pods as KubeObject[]) : []), 0);
    assert.deepEqual(formatResourceList(used), { configmaps: '0', pods: '2', 'requests.memory': '384Mi' });
    const scoped: ResourceQuota = { metadata: { name: 'be' }, spec: { hard: { pods: '10' }, scopes: ['BestEffort'] } };
    assert.deepEqual(formatResourceList(await calculateQuotaUsage(scoped, () => pods as KubeObject[], 0)), { pods: '0' });
  });

  it('leaves out names nothing measures: unknown names and count/ of resources not served', async () => {
    const q: ResourceQuota = { metadata: { name: 'q' }, spec: { hard: { bogus: '1', 'count/gadgets.nowhere.io': '1', 'count/replicasets.apps': '3', 'count/events': '1' } } };
    const used = await calculateQuotaUsage(q, (g, r) => (r === 'replicasets' ? [{ metadata: { name: 'a' } }] : g === 'nowhere.io' ? undefined : []), 0);
    assert.deepEqual(formatResourceList(used), { 'count/replicasets.apps': '1' });
  });

  it('counts any resource on create of the object itself, and ignores events and virtual resources', () => {
    const ev = quotaEvaluatorFor('apps', 'replicasets');
    assert.equal(ev.handles('CREATE', ''), true);
    assert.equal(ev.handles('UPDATE', ''), false);
    assert.equal(quotaEvaluatorFor('', 'serviceaccounts').handles('CREATE', 'token'), false);
    assert.deepEqual(ev.matchingResources(['count/replicasets.apps', 'pods']), ['count/replicasets.apps']);
    assert.equal(isIgnoredQuotaResource('', 'events'), true);
    assert.equal(isIgnoredQuotaResource('events.k8s.io', 'events'), true);
    assert.equal(isIgnoredQuotaResource('authorization.k8s.io', 'selfsubjectaccessreviews'), true);
    assert.equal(isIgnoredQuotaResource('apps', 'replicasets'), false);
  });

  it('prints and compares resource lists as upstream does', () => {
    const a = parseResourceList({ pods: '3', 'requests.cpu': '1500m' });
    const b = parseResourceList({ pods: '2', 'requests.cpu': '2' });
    assert.equal(prettyPrint(a), 'pods=3,requests.cpu=1500m');
    assert.deepEqual(lessThanOrEqual(a, b), { ok: false, exceeded: ['pods'] });
  });
});
