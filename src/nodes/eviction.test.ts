import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Toleration } from 'kubernetes-types/core/v1.js';
import { admitUnderPressure, evictionMessage, isCriticalPod, observeMemory, rankForEviction, thresholdMet, type ContainerUsage } from './eviction.js';

const Mi = 1024 * 1024;

function pod(name: string, opts: { qos?: string; priority?: number; memRequest?: string; tolerations?: Toleration[] } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: name },
    spec: {
      containers: [{ name: 'app', image: 'nginx', ...(opts.memRequest ? { resources: { requests: { memory: opts.memRequest } } } : {}) }],
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
    },
    status: { qosClass: opts.qos ?? 'Burstable' },
  };
}

describe('eviction', () => {
  it('admits under memory pressure all but BestEffort pods, those only with the taint tolerated', () => {
    assert.deepEqual(admitUnderPressure(pod('a'), []), { admit: true });
    assert.equal(admitUnderPressure(pod('a'), ['MemoryPressure']).admit, true);
    const be = admitUnderPressure(pod('b', { qos: 'BestEffort' }), ['MemoryPressure']);
    assert.deepEqual(be, { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    const tolerant = pod('c', { qos: 'BestEffort', tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] });
    assert.equal(admitUnderPressure(tolerant, ['MemoryPressure']).admit, true);
  });

  it('rejects every pod but critical ones under disk pressure', () => {
    assert.deepEqual(admitUnderPressure(pod('a', { qos: 'Guaranteed' }), ['MemoryPressure', 'DiskPressure']).message, 'The node had condition: [MemoryPressure DiskPressure]. ');
    assert.equal(admitUnderPressure(pod('crit', { priority: 2_000_001_000 }), ['DiskPressure']).admit, true);
    assert.equal(isCriticalPod(pod('crit', { priority: 2_000_000_000 })), true);
    assert.equal(isCriticalPod(pod('plain', { priority: 1000 })), false);
  });

  it('ranks pods over their requests first, then by priority, then by consumption above requests', () => {
    const usage: Record<string, ContainerUsage[]> = {
      under: [{ name: 'app', memoryBytes: 50 * Mi }],
      overSmall: [{ name: 'app', memoryBytes: 80 * Mi }],
      overBig: [{ name: 'app', memoryBytes: 400 * Mi }],
      overHighPrio: [{ name: 'app', memoryBytes: 900 * Mi }],
      crit: [{ name: 'app', memoryBytes: 2000 * Mi }],
    };
    const pods = [
      pod('under', { memRequest: '100Mi' }),
      pod('overHighPrio', { memRequest: '64Mi', priority: 1000 }),
      pod('overSmall', { memRequest: '64Mi' }),
      pod('overBig', { memRequest: '64Mi' }),
      pod('crit', { priority: 2_000_000_000 }),
    ];
    const order = rankForEviction(pods, 'memory', (p) => usage[p.metadata!.name!]).map((p) => p.metadata!.name);
    assert.deepEqual(order, ['overBig', 'overSmall', 'overHighPrio', 'under']);
  });

  it('writes kubelet\'s eviction message with the threshold and the offending containers', () => {
    const obs = observeMemory(8192 * Mi, 8142 * Mi);
    assert.equal(thresholdMet(obs), true);
    assert.equal(thresholdMet(observeMemory(8192 * Mi, 1000 * Mi)), false);
    const { message, annotations } = evictionMessage(pod('p', { memRequest: '64Mi' }), obs, [{ name: 'app', memoryBytes: 300 * Mi }]);
    assert.equal(message, 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 300Mi, request is 64Mi, has larger consumption of memory. ');
    assert.deepEqual(annotations, { offending_containers: 'app', offending_containers_usage: '300Mi', starved_resource: 'memory' });
    const noRequest = evictionMessage(pod('q'), obs, [{ name: 'app', memoryBytes: 10 * Mi }]);
    assert.match(noRequest.message, /Container app was using 10Mi, request is 0, has larger consumption of memory\. $/);
  });
});
