import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { Node } from 'kubernetes-types/core/v1.js';
import { FakeClock } from '../../util/clock/clock.js';
import { createPodTemplate, isPodUpdated, nodeShouldRunDaemonPod, replaceNodeNameAffinity } from './eligibility.js';
import { newKeyedBackoff } from './failed-pod-backoff.js';

const ds = (spec: Record<string, unknown> = {}): DaemonSet => ({
  metadata: { name: 'd' },
  spec: { selector: {}, template: { spec: { containers: [], ...spec } } },
});
const node = (name: string, labels: Record<string, string> = {}, taints: NonNullable<NonNullable<Node['spec']>['taints']> = []): Node => ({
  metadata: { name, labels },
  spec: { taints },
});

describe('daemon pod eligibility', () => {
  it('runs on a plain node and on one tainted only with default-tolerated taints', () => {
    assert.deepEqual(nodeShouldRunDaemonPod(node('a'), ds()), { shouldRun: true, shouldContinueRunning: true });
    const tainted = node('b', {}, [
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
    ]);
    assert.equal(nodeShouldRunDaemonPod(tainted, ds()).shouldRun, true);
  });

  it('tolerates network-unavailable only for host-network pods', () => {
    const n = node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]);
    assert.equal(nodeShouldRunDaemonPod(n, ds()).shouldRun, false);
    assert.equal(nodeShouldRunDaemonPod(n, ds({ hostNetwork: true })).shouldRun, true);
  });

  it('keeps a pod running under an untolerated NoSchedule taint but not under NoExecute', () => {
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'x', effect: 'NoSchedule' }]), ds()), { shouldRun: false, shouldContinueRunning: true });
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'x', effect: 'NoExecute' }]), ds()), { shouldRun: false, shouldContinueRunning: false });
    const tolerating = ds({ tolerations: [{ key: 'x', operator: 'Exists' }] });
    assert.equal(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'x', effect: 'NoExecute' }]), tolerating).shouldRun, true);
    assert.equal(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'x', value: 'v', effect: 'NoSchedule' }]), ds({ tolerations: [{ key: 'x', value: 'w' }] })).shouldRun, false);
  });

  it('matches nodeSelector and required node affinity expressions', () => {
    const sel = ds({ nodeSelector: { disk: 'ssd' } });
    assert.equal(nodeShouldRunDaemonPod(node('a', { disk: 'ssd' }), sel).shouldRun, true);
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', { disk: 'hdd' }), sel), { shouldRun: false, shouldContinueRunning: false });
    const aff = ds({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }, { key: 'gpu', operator: 'DoesNotExist' }] }],
          },
        },
      },
    });
    assert.equal(nodeShouldRunDaemonPod(node('n', { zone: 'a' }), aff).shouldRun, true);
    assert.equal(nodeShouldRunDaemonPod(node('n', { zone: 'c' }), aff).shouldRun, false);
    assert.equal(nodeShouldRunDaemonPod(node('n', { zone: 'a', gpu: '1' }), aff).shouldRun, false);
    assert.equal(nodeShouldRunDaemonPod(node('n', { zone: 'a' }), ds({ nodeName: 'other' })).shouldRun, false);
  });

  it('replaces required node terms with a single metadata.name term, keeping other affinity', () => {
    const a = replaceNodeNameAffinity(
      { podAffinity: {}, nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Exists' }] }] } } },
      'n1',
    );
    assert.ok(a.podAffinity);
    assert.deepEqual(a.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms, [
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
    ]);
  });

  it('labels templates with generation and hash, and treats either as up to date', () => {
    const t = createPodTemplate({ metadata: { labels: { app: 'x' } }, spec: { containers: [] } }, 4, 'abc');
    assert.deepEqual(t.metadata?.labels, { app: 'x', 'pod-template-generation': '4', 'controller-revision-hash': 'abc' });
    assert.ok(isPodUpdated({ metadata: { labels: { 'controller-revision-hash': 'abc' } } }, 'abc', 9));
    assert.ok(isPodUpdated({ metadata: { labels: { 'pod-template-generation': '9' } } }, 'zzz', 9));
    assert.ok(!isPodUpdated({ metadata: { labels: { 'pod-template-generation': '8', 'controller-revision-hash': 'old' } } }, 'abc', 9));
  });
});

describe('failed pod backoff', () => {
  it('starts at 1 s, doubles to at most 15 min, and resets after a long quiet period', async () => {
    const clock = new FakeClock();
    const b = newKeyedBackoff(clock);
    assert.equal(b.isInBackOffSinceUpdate('k'), false);
    b.next('k');
    assert.equal(b.get('k'), 1000);
    assert.equal(b.isInBackOffSinceUpdate('k'), true);
    await clock.advance(1000);
    assert.equal(b.isInBackOffSinceUpdate('k'), false);
    b.next('k');
    assert.equal(b.get('k'), 2000);
    for (let i = 0; i < 20; i++) b.next('k');
    assert.equal(b.get('k'), 15 * 60_000);
    await clock.advance(31 * 60_000);
    b.next('k');
    assert.equal(b.get('k'), 1000);
  });
});
