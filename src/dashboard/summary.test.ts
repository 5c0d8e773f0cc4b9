import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/types.js';
import { summarize } from './summary.js';

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2026-11-27T10:00:00Z', ...extra });

describe('dashboard summaries', () => {
  it('sums up a ready pod, with its owner, node, requests and ready containers', () => {
    const s = summarize({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('web-1', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1', controller: true }] }),
      spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'nginx', resources: { requests: { cpu: '250m', memory: '64Mi' } } }, { name: 'b', image: 'busybox' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'a', ready: true, restartCount: 2, image: 'nginx', imageID: '', state: { running: {} } }, { name: 'b', ready: true, restartCount: 0, image: 'busybox', imageID: '', state: { running: {} } }] },
    } as KubeObject);
    assert.equal(s.health, 'ok');
    assert.equal(s.status, 'Running');
    assert.deepEqual(s.owners, [{ uid: 'rs-1', kind: 'ReplicaSet', name: 'web-abc', controller: true }]);
    assert.deepEqual(s.pod, { phase: 'Running', ready: true, node: 'n1', requests: { cpu: 250, memory: 64 * 1024 * 1024 }, containers: 2, readyContainers: 2, restarts: 2 });
  });

  it('says why a pod is Pending, and shows a crash loop as failed', () => {
    const pending = summarize({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('p'),
      spec: { containers: [{ name: 'a', image: 'nginx' }] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }] },
    } as KubeObject);
    assert.equal(pending.health, 'warning');
    assert.deepEqual(pending.pod?.unschedulable, { reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' });
    const crashing = summarize({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('c'),
      spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'busybox' }] },
      status: { phase: 'Running', containerStatuses: [{ name: 'a', ready: false, restartCount: 5, image: 'busybox', imageID: '', state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
    } as KubeObject);
    assert.equal(crashing.status, 'CrashLoopBackOff');
    assert.equal(crashing.health, 'failed');
  });

  it('marks objects being deleted as terminating, with their finalizers', () => {
    const s = summarize({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta('rs', { deletionTimestamp: '2026-11-27T10:01:00Z', finalizers: ['foregroundDeletion'] }), spec: { replicas: 2 }, status: { replicas: 2, readyReplicas: 2 } } as KubeObject);
    assert.equal(s.health, 'terminating');
    assert.equal(s.deleting, true);
    assert.deepEqual(s.finalizers, ['foregroundDeletion']);
  });

  it('gives a Deployment its replicas, revision and a failed health when its progress deadline passed', () => {
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('web', { annotations: { 'deployment.kubernetes.io/revision': '2' } }), spec: { replicas: 3 } };
    const rolling = summarize({ ...base, status: { replicas: 4, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 1 } } as KubeObject);
    assert.equal(rolling.health, 'progressing');
    assert.equal(rolling.revision, '2');
    assert.deepEqual(rolling.replicas, { desired: 3, ready: 3, available: 3, updated: 1 });
    assert.equal(rolling.status, '3/3 ready, 1 up-to-date');
    const done = summarize({ ...base, status: { replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3 } } as KubeObject);
    assert.equal(done.health, 'ok');
    const stuck = summarize({ ...base, status: { readyReplicas: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] } } as KubeObject);
    assert.equal(stuck.health, 'failed');
  });

  it('reads a node: readiness, taints, allocatable in millicores and bytes, zone', () => {
    const s = summarize({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', uid: 'n1', resourceVersion: '1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } },
      spec: { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] },
      status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, capacity: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] },
    } as KubeObject);
    assert.equal(s.status, 'Ready,SchedulingDisabled');
    assert.equal(s.health, 'warning');
    assert.deepEqual(s.node?.allocatable, { cpu: 4000, memory: 8 * 1024 ** 3, pods: 110 });
    assert.equal(s.node?.zone, 'zone-a');
    assert.deepEqual(s.node?.taints, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]);
  });

  it('reads a Job as complete or failed from its conditions, and a Lease as its holder', () => {
    assert.equal(summarize({ apiVersion: 'batch/v1', kind: 'Job', metadata: meta('j'), spec: { completions: 2 }, status: { succeeded: 2, conditions: [{ type: 'Complete', status: 'True' }] } } as KubeObject).status, 'Complete 2/2');
    assert.equal(summarize({ apiVersion: 'batch/v1', kind: 'Job', metadata: meta('j'), status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] } } as KubeObject).health, 'failed');
    const lease = summarize({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: meta('kube-controller-manager'), spec: { holderIdentity: 'host_1', leaseTransitions: 3, leaseDurationSeconds: 15 } } as KubeObject);
    assert.deepEqual(lease.lease, { holder: 'host_1', transitions: 3, durationSeconds: 15 });
    assert.equal(lease.status, 'held by host_1');
  });
});
