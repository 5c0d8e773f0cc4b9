import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newSchedulerCache } from './scheduler-cache.js';
import { makeNode, makePod } from './testing.js';
import { selectorFromSet } from '../api/labels.js';
import { countMatchingPods } from './plugins/pod-topology-spread.js';

describe('scheduler cache', () => {
  it('keeps its snapshot across pod changes, with the lists of nodes holding affinity pods made again when those change', () => {
    const c = newSchedulerCache();
    c.addNode(makeNode('b'));
    c.addNode(makeNode('a'));
    const s1 = c.snapshot();
    assert.deepEqual(s1.nodes.map((n) => n.node?.metadata?.name), ['a', 'b']);
    const plain = makePod('p', { nodeName: 'a', requests: { cpu: '1' } });
    c.addPod(plain);
    const s2 = c.snapshot();
    assert.equal(s2, s1, 'a pod without affinity leaves the node list as it was');
    assert.equal(s2.get('a')!.requested.milliCPU, 1000, 'and shows in its node at once');
    const anti = makePod('q', {
      nodeName: 'b',
      spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { x: 'y' } } }] } } },
    });
    c.addPod(anti);
    const s3 = c.snapshot();
    assert.deepEqual(s3.havePodsWithRequiredAntiAffinity.map((n) => n.node?.metadata?.name), ['b']);
    c.removePod(anti);
    assert.deepEqual(c.snapshot().havePodsWithRequiredAntiAffinity, []);
    c.addNode(makeNode('c'));
    assert.deepEqual(c.snapshot().nodes.map((n) => n.node?.metadata?.name), ['a', 'b', 'c']);
  });

  it("keeps a node's matching-pod counts through a status update, not through a change of labels", () => {
    const c = newSchedulerCache();
    c.addNode(makeNode('n'));
    const p = makePod('p', { nodeName: 'n', labels: { app: 'x' } });
    c.addPod(p);
    const info = c.snapshot().get('n')!;
    const x = selectorFromSet({ app: 'x' });
    assert.equal(countMatchingPods(info, x, 'default'), 1);
    const counts = info.matchCounts;
    c.updatePod(p, { ...p, status: { phase: 'Running' } });
    assert.equal(info.matchCounts, counts, 'the memo survives a status update');
    assert.equal(info.pods.size, 1);
    c.updatePod(p, { ...p, metadata: { ...p.metadata, labels: { app: 'z' } } });
    assert.equal(countMatchingPods(info, x, 'default'), 0);
  });

  it('counts an assumed pod at once and forgets it when binding fails', () => {
    const c = newSchedulerCache();
    c.addNode(makeNode('n', { cpu: '2' }));
    const p = makePod('p', { nodeName: 'n', requests: { cpu: '1' } });
    c.assumePod(p);
    assert.ok(c.isAssumed(p));
    assert.equal(c.snapshot().get('n')!.requested.milliCPU, 1000);
    c.forgetPod(p);
    assert.equal(c.snapshot().get('n')!.requested.milliCPU, 0);
    assert.equal(c.snapshot().get('n')!.pods.size, 0);
  });

  it('confirms an assumed pod when the informer reports it, without counting it twice', () => {
    const c = newSchedulerCache();
    c.addNode(makeNode('n'));
    const p = makePod('p', { nodeName: 'n', requests: { cpu: '1' } });
    c.assumePod(p);
    c.finishBinding(p);
    c.addPod(p);
    assert.ok(!c.isAssumed(p));
    assert.equal(c.snapshot().get('n')!.requested.milliCPU, 1000);
    c.forgetPod(p);
    assert.equal(c.snapshot().get('n')!.requested.milliCPU, 1000, 'a confirmed pod is not forgotten');
    c.removePod(p);
    assert.equal(c.snapshot().get('n')!.requested.milliCPU, 0);
  });

  it('keeps pods of a removed node out of the snapshot until they go', () => {
    const c = newSchedulerCache();
    const n = makeNode('n');
    c.addNode(n);
    const p = makePod('p', { nodeName: 'n' });
    c.addPod(p);
    c.removeNode(n);
    assert.equal(c.snapshot().nodes.length, 0);
    assert.equal(c.nodeCount(), 0);
    c.addNode(n);
    assert.equal(c.snapshot().get('n')!.pods.size, 1, 'the pod is still counted when the node returns');
  });
});
