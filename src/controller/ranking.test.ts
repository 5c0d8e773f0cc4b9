import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import {
  activePodsWithRanksLess,
  podDeletionCost,
  rankPodsByRelatedPodsOnSameNode,
  sortActivePods,
  sortActivePodsWithRanks,
  sortByLogging,
  type RankedPod,
} from './ranking.js';

const NOW = Date.parse('2024-01-01T12:00:00Z');
const iso = (msAgo: number) => new Date(NOW - msAgo).toISOString();

interface PodOpts {
  node?: string;
  phase?: string;
  readyMsAgo?: number;
  cost?: string;
  restarts?: number;
  createdMsAgo?: number;
  uid?: string;
}

function pod(name: string, o: PodOpts = {}): Pod {
  const conditions = o.readyMsAgo !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: iso(o.readyMsAgo) }] : [];
  return {
    metadata: {
      name,
      uid: o.uid ?? name,
      creationTimestamp: iso(o.createdMsAgo ?? 3_600_000),
      ...(o.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': o.cost } } : {}),
    },
    spec: { containers: [], ...(o.node !== undefined ? { nodeName: o.node } : {}) },
    status: { phase: o.phase ?? 'Running', conditions, containerStatuses: [{ name: 'c', restartCount: o.restarts ?? 0 } as never] },
  };
}

const r = (p: Pod, rank = 0): RankedPod => ({ pod: p, rank });
const less = (a: RankedPod, b: RankedPod) => activePodsWithRanksLess(a, b, NOW);

describe('pod ranking for deletion', () => {
  it('deletes unassigned pods before assigned ones', () => {
    assert.equal(less(r(pod('a')), r(pod('b', { node: 'n1' }))), true);
    assert.equal(less(r(pod('b', { node: 'n1' })), r(pod('a'))), false);
  });

  it('deletes Pending before Unknown before Running', () => {
    const pending = r(pod('p', { node: 'n', phase: 'Pending' }));
    const unknown = r(pod('u', { node: 'n', phase: 'Unknown' }));
    const running = r(pod('r', { node: 'n', phase: 'Running' }));
    assert.equal(less(pending, unknown), true);
    assert.equal(less(unknown, running), true);
    assert.equal(less(running, pending), false);
  });

  it('deletes not-ready pods before ready ones', () => {
    assert.equal(less(r(pod('nr', { node: 'n' })), r(pod('rd', { node: 'n', readyMsAgo: 1000 }))), true);
  });

  it('deletes lower pod-deletion-cost first, before looking at rank', () => {
    const cheap = r(pod('a', { node: 'n', readyMsAgo: 1000, cost: '-5' }), 0);
    const dear = r(pod('b', { node: 'n', readyMsAgo: 1000, cost: '10' }), 5);
    assert.equal(less(cheap, dear), true);
    assert.equal(podDeletionCost(pod('x', { cost: '+10' })), 0);
    assert.equal(podDeletionCost(pod('x', { cost: '007' })), 0);
    assert.equal(podDeletionCost(pod('x', { cost: '99999999999' })), 0);
    assert.equal(podDeletionCost(pod('x', { cost: '-42' })), -42);
  });

  it('deletes pods doubled up on a node first', () => {
    assert.equal(less(r(pod('a', { node: 'n', readyMsAgo: 1000 }), 3), r(pod('b', { node: 'n', readyMsAgo: 1000 }), 1)), true);
    const ranked = rankPodsByRelatedPodsOnSameNode(
      [pod('a', { node: 'n1' }), pod('b', { node: 'n2' })],
      [pod('x', { node: 'n1' }), pod('y', { node: 'n1' }), pod('z', { node: 'n2' }), pod('dead', { node: 'n2', phase: 'Failed' })],
    );
    assert.deepEqual(ranked.map((x) => x.rank), [2, 1]);
  });

  it('deletes the pod ready for less time first, in power-of-two buckets', () => {
    const recent = r(pod('recent', { node: 'n', readyMsAgo: 10_000 }));
    const old = r(pod('old', { node: 'n', readyMsAgo: 100_000 }));
    assert.equal(less(recent, old), true);
    assert.equal(less(old, recent), false);
    // 70 s and 80 s ago fall into one log2 bucket: ties break by UID.
    const a = r(pod('a', { node: 'n', readyMsAgo: 70_000, uid: 'uid-b' }));
    const b = r(pod('b', { node: 'n', readyMsAgo: 80_000, uid: 'uid-a' }));
    assert.equal(less(b, a), true);
    assert.equal(activePodsWithRanksLess(a, b, NOW, { logarithmicScaleDown: false }), true, 'without buckets the more recent goes first');
  });

  it('deletes pods with more restarts first', () => {
    const flappy = r(pod('f', { node: 'n', restarts: 5 }));
    const stable = r(pod('s', { node: 'n', restarts: 0 }));
    assert.equal(less(flappy, stable), true);
  });

  it('deletes newer pods before older ones', () => {
    const young = r(pod('y', { node: 'n', createdMsAgo: 1_000 }));
    const old = r(pod('o', { node: 'n', createdMsAgo: 1_000_000 }));
    assert.equal(less(young, old), true);
    assert.equal(less(old, young), false);
  });

  it('sorts a mixed set into deletion order', () => {
    const pods = [
      r(pod('ready-old', { node: 'n', readyMsAgo: 1_000_000 })),
      r(pod('pending', { node: 'n', phase: 'Pending' })),
      r(pod('unassigned', { phase: 'Pending' })),
      r(pod('not-ready', { node: 'n' })),
      r(pod('ready-new', { node: 'n', readyMsAgo: 1_000 })),
    ];
    assert.deepEqual(
      sortActivePodsWithRanks(pods, NOW).map((x) => x.pod.metadata?.name),
      ['unassigned', 'pending', 'not-ready', 'ready-new', 'ready-old'],
    );
    assert.deepEqual(
      sortActivePods(pods.map((x) => x.pod)).map((p) => p.metadata?.name),
      ['unassigned', 'pending', 'not-ready', 'ready-new', 'ready-old'],
    );
    assert.deepEqual(
      sortByLogging(pods.map((x) => x.pod)).map((p) => p.metadata?.name),
      ['ready-old', 'ready-new', 'not-ready', 'pending', 'unassigned'],
    );
  });
});
