import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import {
  effectiveUsageAnnotation,
  formatCpu,
  formatMemory,
  nodeUsage,
  noise,
  parseUsageAnnotation,
  podTotalUsage,
  podUsage,
  UsageAnnotationError,
  USAGE_ANNOTATION,
  NODE_SYSTEM_CPU_NANOCORES,
  type OwnerLike,
} from './usage.js';

function pod(containers: { name: string; cpu?: string; memory?: string; running?: boolean }[], annotations?: Record<string, string>): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u1', ...(annotations ? { annotations } : {}), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs', controller: true }] },
    spec: {
      containers: containers.map((c) => ({
        name: c.name,
        image: 'nginx',
        resources: { requests: { ...(c.cpu ? { cpu: c.cpu } : {}), ...(c.memory ? { memory: c.memory } : {}) } },
      })),
    },
    status: {
      phase: 'Running',
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: 'nginx',
        imageID: '',
        ready: true,
        restartCount: 0,
        state: c.running === false ? { waiting: { reason: 'CrashLoopBackOff' } } : { running: { startedAt: '2024-01-01T00:00:00Z' } },
      })),
    },
  };
}

describe('simulated usage', () => {
  it('parses the annotation: quantities, percentages, either resource, and refuses nonsense', () => {
    assert.deepEqual(parseUsageAnnotation('cpu=500m,memory=200Mi'), { cpu: { kind: 'absolute', value: 500_000_000 }, memory: { kind: 'absolute', value: 200 * 1024 * 1024 } });
    assert.deepEqual(parseUsageAnnotation(' cpu=90% '), { cpu: { kind: 'percent', percent: 90 } });
    assert.deepEqual(parseUsageAnnotation('memory=1Gi'), { memory: { kind: 'absolute', value: 1024 ** 3 } });
    assert.throws(() => parseUsageAnnotation('gpu=1'), UsageAnnotationError);
    assert.throws(() => parseUsageAnnotation('cpu'), UsageAnnotationError);
    assert.throws(() => parseUsageAnnotation('cpu=lots'), UsageAnnotationError);
    assert.throws(() => parseUsageAnnotation('cpu=%'), UsageAnnotationError);
  });

  it('uses a steady fraction of the requests with at most 5 % deterministic noise', () => {
    const p = pod([{ name: 'a', cpu: '1', memory: '1Gi' }]);
    const u = podUsage(p, { sample: 7 });
    assert.equal(u.length, 1);
    assert.ok(Math.abs(u[0]!.cpuNanocores - 100_000_000) <= 5_000_000, String(u[0]!.cpuNanocores));
    assert.ok(Math.abs(u[0]!.memoryBytes - 512 * 1024 * 1024) <= 0.05 * 512 * 1024 * 1024 + 4096);
    assert.equal(u[0]!.memoryBytes % 4096, 0, 'working sets are whole pages');
    assert.deepEqual(podUsage(p, { sample: 7 }), u, 'same sample, same usage');
    assert.notDeepEqual(podUsage(p, { sample: 8 }), u, 'the next scrape moves a little');
  });

  it('draws noise in [-1, 1], the same for the same seed and sample, spread evenly over samples and seeds', () => {
    assert.equal(noise('pod/a/cpu', 3), noise('pod/a/cpu', 3));
    const values = [...Array.from({ length: 2000 }, (_, i) => noise('pod/a/cpu', i)), ...Array.from({ length: 2000 }, (_, i) => noise(`pod/p${i}/memory`, 0))];
    assert.ok(values.every((v) => v >= -1 && v <= 1));
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    assert.ok(Math.abs(mean) < 0.05, `mean ${mean}`);
    // Each tenth of the range gets its share (400 of 4,000) within a quarter.
    const bins = new Array<number>(10).fill(0);
    for (const v of values) bins[Math.min(9, Math.floor((v + 1) * 5))]!++;
    assert.ok(bins.every((n) => n > 300 && n < 500), bins.join(' '));
    assert.equal(new Set(values).size, values.length, 'no two samples alike');
  });

  it('gives containers without requests a small default and reports only running containers', () => {
    const u = podUsage(pod([{ name: 'a' }, { name: 'b', running: false }]));
    assert.deepEqual(u.map((c) => c.name), ['a']);
    assert.ok(u[0]!.cpuNanocores >= 950_000 && u[0]!.cpuNanocores <= 1_050_000);
    assert.ok(u[0]!.memoryBytes >= 7.5 * 1024 * 1024 && u[0]!.memoryBytes <= 8.5 * 1024 * 1024);
  });

  it('splits an absolute override in proportion to the requests and applies a percentage per container, without noise', () => {
    const p = pod([{ name: 'a', cpu: '300m', memory: '100Mi' }, { name: 'b', cpu: '100m' }], { [USAGE_ANNOTATION]: 'cpu=800m' });
    const u = podUsage(p);
    assert.deepEqual(u.map((c) => c.cpuNanocores), [600_000_000, 200_000_000]);
    const q = podUsage(pod([{ name: 'a', cpu: '300m' }, { name: 'b', cpu: '100m' }], { [USAGE_ANNOTATION]: 'cpu=90%,memory=64Mi' }));
    assert.deepEqual(q.map((c) => c.cpuNanocores), [270_000_000, 90_000_000]);
    assert.deepEqual(q.map((c) => c.memoryBytes), [32 * 1024 * 1024, 32 * 1024 * 1024], 'no memory requests: shared evenly');
    assert.deepEqual(podTotalUsage(p), { cpuNanocores: 800_000_000, memoryBytes: u[0]!.memoryBytes + u[1]!.memoryBytes });
  });

  it('ignores an invalid annotation', () => {
    const p = pod([{ name: 'a', cpu: '1' }], { [USAGE_ANNOTATION]: 'cpu=a lot' });
    assert.ok(Math.abs(podUsage(p)[0]!.cpuNanocores - 100_000_000) <= 5_000_000);
  });

  it("takes the annotation from the pod, else from its controlling owners (ReplicaSet, then Deployment)", () => {
    const owners: Record<string, OwnerLike> = {
      'ReplicaSet/web-abc': { metadata: { ownerReferences: [{ kind: 'Deployment', name: 'web', controller: true }] } },
      'Deployment/web': { metadata: { annotations: { [USAGE_ANNOTATION]: 'cpu=2' } } },
    };
    const lookup = (_ns: string, kind: string, name: string) => owners[`${kind}/${name}`];
    assert.equal(effectiveUsageAnnotation(pod([{ name: 'a' }]), lookup), 'cpu=2');
    assert.equal(effectiveUsageAnnotation(pod([{ name: 'a' }], { [USAGE_ANNOTATION]: 'cpu=1' }), lookup), 'cpu=1');
    // The ReplicaSet's copy of the Deployment's annotations is not read (it outlives a removal on the Deployment).
    owners['ReplicaSet/web-abc']!.metadata!.annotations = { [USAGE_ANNOTATION]: 'cpu=3' };
    assert.equal(effectiveUsageAnnotation(pod([{ name: 'a' }]), lookup), 'cpu=2');
    delete owners['Deployment/web']!.metadata!.annotations;
    assert.equal(effectiveUsageAnnotation(pod([{ name: 'a' }]), lookup), undefined);
    // A bare ReplicaSet's annotation is.
    owners['ReplicaSet/web-abc']!.metadata!.ownerReferences = [];
    assert.equal(effectiveUsageAnnotation(pod([{ name: 'a' }]), lookup), 'cpu=3');
    assert.equal(effectiveUsageAnnotation(pod([{ name: 'a' }]), () => undefined), undefined);
  });

  it('adds a system base to the pods for a node', () => {
    const n = nodeUsage('kcm-node-0', [{ cpuNanocores: 100, memoryBytes: 4096 }], 3);
    assert.ok(Math.abs(n.cpuNanocores - 100 - NODE_SYSTEM_CPU_NANOCORES) <= NODE_SYSTEM_CPU_NANOCORES * 0.05 + 1);
    assert.deepEqual(nodeUsage('kcm-node-0', [{ cpuNanocores: 100, memoryBytes: 4096 }], 3), n);
  });

  it('formats cpu in nanocores and memory in binary units as metrics-server does', () => {
    assert.equal(formatCpu(1053784), '1053784n');
    assert.equal(formatCpu(250_000_000), '250m');
    assert.equal(formatCpu(0), '0');
    assert.equal(formatMemory(3508 * 1024), '3508Ki');
    assert.equal(formatMemory(200 * 1024 * 1024), '200Mi');
  });
});
