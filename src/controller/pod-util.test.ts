import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { DeletedFinalStateUnknown } from '../tools/cache/interfaces.js';
import { keyFunc, objectFromDeleted } from './keys.js';
import { filterActivePods, isPodActive, isPodAvailable, isPodReady, podReadyTime, updatePodCondition } from './pod-util.js';

function readyPod(since: string): Pod {
  return { metadata: { name: 'p' }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: since }] } };
}

describe('pod helpers', () => {
  it('treats terminal and deleting pods as inactive', () => {
    const pods: Pod[] = [
      { metadata: { name: 'a' }, status: { phase: 'Running' } },
      { metadata: { name: 'b' }, status: { phase: 'Succeeded' } },
      { metadata: { name: 'c' }, status: { phase: 'Failed' } },
      { metadata: { name: 'd', deletionTimestamp: '2024-01-01T00:00:00Z' }, status: { phase: 'Running' } },
      { metadata: { name: 'e' } },
    ];
    assert.deepEqual(filterActivePods(pods).map((p) => p.metadata?.name), ['a', 'e']);
    assert.equal(isPodActive(pods[1]!), false);
  });

  it('is available only after being ready for longer than minReadySeconds', () => {
    const p = readyPod('2024-01-01T00:00:00Z');
    const t0 = Date.parse('2024-01-01T00:00:00Z');
    assert.equal(isPodReady(p), true);
    assert.equal(podReadyTime(p), t0);
    assert.equal(isPodAvailable(p, 0, t0), true);
    assert.equal(isPodAvailable(p, 10, t0 + 10_000), false);
    assert.equal(isPodAvailable(p, 10, t0 + 10_001), true);
    assert.equal(isPodAvailable({ metadata: {}, status: { phase: 'Running' } }, 0, t0), false);
  });

  it('keeps the transition time when a condition keeps its status', () => {
    const status: PodStatus = { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: 'T0' }] };
    assert.equal(updatePodCondition(status, { type: 'Ready', status: 'True' }, 'T1'), false);
    assert.equal(status.conditions![0]!.lastTransitionTime, 'T0');
    assert.equal(updatePodCondition(status, { type: 'Ready', status: 'False', reason: 'X' }, 'T2'), true);
    assert.equal(status.conditions![0]!.lastTransitionTime, 'T2');
    assert.equal(updatePodCondition(status, { type: 'PodScheduled', status: 'True' }, 'T3'), true);
    assert.equal(status.conditions!.length, 2);
  });

  it('keys objects and tombstones alike', () => {
    const obj = { metadata: { name: 'a', namespace: 'ns' } };
    assert.equal(keyFunc(obj), 'ns/a');
    assert.equal(keyFunc({ metadata: { name: 'node1' } }), 'node1');
    const tomb = new DeletedFinalStateUnknown('ns/a', obj);
    assert.equal(keyFunc(tomb), 'ns/a');
    assert.equal(objectFromDeleted(tomb), obj);
  });
});
