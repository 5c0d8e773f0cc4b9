import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newSchedulerCache } from './scheduler-cache.js';
import { makeNode, makePod } from './testing.js';

describe('scheduler cache', () => {
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
