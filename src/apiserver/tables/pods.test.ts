import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podSummary, podColumns } from './pods.js';

const now = Date.parse('2025-01-01T12:00:00Z');
const pod = (status: object, spec: object = { containers: [{ name: 'c' }] }, metadata: object = {}) => ({ metadata: { name: 'p', creationTimestamp: '2025-01-01T11:00:00Z', ...metadata }, spec, status });

describe('pod STATUS, READY and RESTARTS as kubectl prints them', () => {
  it('shows Running and 1/1 for a ready running container', () => {
    const s = podSummary(pod({ phase: 'Running', containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: {} } }] }), now);
    assert.deepEqual(s, { ready: '1/1', status: 'Running', restarts: '0' });
  });

  it('shows the waiting reason (ContainerCreating, ImagePullBackOff, CrashLoopBackOff)', () => {
    for (const reason of ['ContainerCreating', 'ImagePullBackOff', 'ErrImagePull', 'CrashLoopBackOff']) {
      const s = podSummary(pod({ phase: 'Pending', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason } } }] }), now);
      assert.equal(s.status, reason);
      assert.equal(s.ready, '0/1');
    }
  });

  it('shows Completed and Error from terminated containers, and ExitCode:n without a reason', () => {
    assert.equal(podSummary(pod({ phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }), now).status, 'Completed');
    assert.equal(podSummary(pod({ phase: 'Failed', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 1, reason: 'Error' } } }] }), now).status, 'Error');
    assert.equal(podSummary(pod({ phase: 'Failed', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 2 } } }] }), now).status, 'ExitCode:2');
  });

  it('shows Init:i/n while init containers run and Init:<reason> when one fails', () => {
    const spec = { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'c' }] };
    const first = podSummary(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 0 } } }, { name: 'i2', state: { running: {} } }] }, spec), now);
    assert.equal(first.status, 'Init:1/2');
    const failed = podSummary(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 1, reason: 'Error' } } }] }, spec), now);
    assert.equal(failed.status, 'Init:Error');
    const crash = podSummary(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { waiting: { reason: 'CrashLoopBackOff' } } }] }, spec), now);
    assert.equal(crash.status, 'Init:CrashLoopBackOff');
  });

  it('counts running sidecars (restartable init containers) as containers', () => {
    const spec = { initContainers: [{ name: 'side', restartPolicy: 'Always' }], containers: [{ name: 'c' }] };
    const s = podSummary(pod({ phase: 'Running', conditions: [{ type: 'Initialized', status: 'True' }], initContainerStatuses: [{ name: 'side', started: true, ready: true, state: { running: {} } }], containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] }, spec), now);
    assert.deepEqual([s.ready, s.status], ['2/2', 'Running']);
  });

  it('shows Terminating for a deleting pod that is not finished, and Unknown for a lost node', () => {
    const running = { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] };
    assert.equal(podSummary(pod(running, undefined, { deletionTimestamp: '2025-01-01T11:59:00Z' }), now).status, 'Terminating');
    assert.equal(podSummary(pod({ ...running, reason: 'NodeLost' }, undefined, { deletionTimestamp: '2025-01-01T11:59:00Z' }), now).status, 'Unknown');
    assert.equal(podSummary(pod({ phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, undefined, { deletionTimestamp: '2025-01-01T11:59:00Z' }), now).status, 'Completed');
  });

  it('prints restarts with the age of the last restart', () => {
    const s = podSummary(pod({ phase: 'Running', containerStatuses: [{ name: 'c', ready: true, restartCount: 3, state: { running: {} }, lastState: { terminated: { exitCode: 1, finishedAt: '2025-01-01T11:55:00Z' } } }] }), now);
    assert.equal(s.restarts, '3 (5m ago)');
  });

  it('shows SchedulingGated for a gated pod', () => {
    assert.equal(podSummary(pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }), now).status, 'SchedulingGated');
  });

  it('has upstream column names and wide columns', () => {
    assert.deepEqual(podColumns.map((c) => c.name), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    assert.deepEqual(podColumns.map((c) => c.priority), [0, 0, 0, 0, 0, 1, 1, 1, 1]);
    const p = pod({ phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }], conditions: [{ type: 'gate', status: 'True' }] }, { containers: [{ name: 'c' }], nodeName: 'n1', readinessGates: [{ conditionType: 'gate' }, { conditionType: 'other' }] });
    assert.deepEqual(podColumns.map((c) => c.cell(p as never, now)).slice(4), ['60m', '10.1.0.5', 'n1', '<none>', '1/2']);
  });
});
