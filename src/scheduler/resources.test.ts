import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podRequests } from './resources.js';
import { makePod } from './testing.js';

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
