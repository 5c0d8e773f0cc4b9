import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podRequests } from './resources.js';
import { addPod, newNodeInfo, newPodInfo } from './node-info.js';
import { makeNode, makePod } from './testing.js';

describe('podRequests', () => {
  it('sums app containers and takes the largest init container as a floor', () => {
    const pod = makePod('p', {
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '100m', memory: '1Gi' } } },
          { name: 'b', resources: { requests: { cpu: '200m' } } },
        ],
        initContainers: [{ name: 'init', resources: { requests: { cpu: '1', memory: '10Mi' } } }],
      },
    });
    const r = podRequests(pod);
    assert.equal(r.milliCPU, 1000);
    assert.equal(r.memory, 1024 ** 3);
  });

  it('adds sidecars to the app containers and to later init steps, then the overhead', () => {
    const pod = makePod('p', {
      spec: {
        containers: [{ name: 'app', resources: { requests: { cpu: '500m' } } }],
        initContainers: [
          { name: 'sidecar', restartPolicy: 'Always', resources: { requests: { cpu: '300m' } } },
          { name: 'setup', resources: { requests: { cpu: '600m' } } },
        ],
        overhead: { cpu: '50m', 'example.com/gpu': '1' },
      },
    });
    const r = podRequests(pod);
    // containers 500 + sidecar 300 = 800; init step 600 + sidecar 300 = 900 wins; + 50 overhead.
    assert.equal(r.milliCPU, 950);
    assert.equal(r.scalar.get('example.com/gpu'), 1);
  });

  it('counts missing cpu and memory requests as 100m and 200Mi only in the non-zero form', () => {
    const pod = makePod('p', { spec: { containers: [{ name: 'a' }, { name: 'b', resources: { requests: { cpu: '0' } } }] } });
    assert.equal(podRequests(pod).milliCPU, 0);
    const nz = podRequests(pod, true);
    assert.equal(nz.milliCPU, 100);
    assert.equal(nz.memory, 2 * 200 * 1024 * 1024);
  });
});

describe('newPodInfo requests', () => {
  it('shares one object among pods with no requests, and among pods with the scoring defaults only, and sums them as before', () => {
    const bare = () => makePod('p', { spec: { containers: [{ name: 'a' }] } });
    const [a, b] = [newPodInfo(bare()), newPodInfo(bare())];
    assert.equal(a.requests, b.requests);
    assert.equal(a.nonZeroRequests, b.nonZeroRequests);
    assert.ok(Object.isFrozen(a.requests) && Object.isFrozen(a.nonZeroRequests));
    const sized = newPodInfo(makePod('q', { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '250m' } } }] } }));
    assert.notEqual(sized.requests, a.requests);
    const info = newNodeInfo(makeNode('n'));
    addPod(info, a);
    addPod(info, newPodInfo(makePod('p2', { spec: { containers: [{ name: 'a' }] } })));
    addPod(info, sized);
    assert.deepEqual([info.requested.milliCPU, info.requested.memory], [250, 0]);
    assert.deepEqual([info.nonZeroRequested.milliCPU, info.nonZeroRequested.memory], [450, 3 * 200 * 1024 * 1024]);
    assert.deepEqual([a.requests.milliCPU, a.nonZeroRequests.milliCPU], [0, 100], 'the shared objects stay as they were');
  });
});
