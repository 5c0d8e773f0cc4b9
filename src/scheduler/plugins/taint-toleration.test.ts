import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeScore } from '../framework.js';
import { toleratesTaint } from '../../api/taints.js';
import { cycle, makeNode, makePod, nodeInfos } from '../testing.js';
import { taintTolerationFilter, taintTolerationScore } from './taint-toleration.js';
import { nodeUnschedulable } from './node-unschedulable.js';

describe('toleration matching', () => {
  it('follows Equal, Exists, empty key and empty effect rules', () => {
    const taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
    assert.ok(toleratesTaint({ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, taint));
    assert.ok(toleratesTaint({ key: 'dedicated', value: 'gpu' }, taint), 'no operator means Equal, no effect matches all');
    assert.ok(!toleratesTaint({ key: 'dedicated', value: 'cpu' }, taint));
    assert.ok(toleratesTaint({ key: 'dedicated', operator: 'Exists' }, taint));
    assert.ok(toleratesTaint({ operator: 'Exists' }, taint), 'empty key with Exists tolerates everything');
    assert.ok(!toleratesTaint({ operator: 'Exists', effect: 'NoExecute' }, taint));
  });
});

describe('TaintToleration filter', () => {
  it('rejects an untolerated NoSchedule or NoExecute taint with its key and value', () => {
    const infos = nodeInfos([
      makeNode('a', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }),
      makeNode('b', { taints: [{ key: 'team', value: 'x', effect: 'NoSchedule' }] }),
      makeNode('c', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }),
    ]);
    const ctx = cycle(makePod('p'), infos);
    const a = taintTolerationFilter.filter(ctx, infos[0]!);
    assert.equal(a?.code, 'UnschedulableAndUnresolvable');
    assert.deepEqual(a?.reasons, ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']);
    assert.deepEqual(taintTolerationFilter.filter(ctx, infos[1]!)?.reasons, ['node(s) had untolerated taint {team: x}']);
    assert.equal(taintTolerationFilter.filter(ctx, infos[2]!), undefined, 'PreferNoSchedule never filters');
  });

  it('passes a node whose taints are tolerated', () => {
    const infos = nodeInfos([makeNode('a', { taints: [{ key: 'team', value: 'x', effect: 'NoSchedule' }] })]);
    const pod = makePod('p', { spec: { tolerations: [{ key: 'team', operator: 'Equal', value: 'x', effect: 'NoSchedule' }] } });
    assert.equal(taintTolerationFilter.filter(cycle(pod, infos), infos[0]!), undefined);
  });
});

describe('TaintToleration score', () => {
  it('ranks nodes by fewer untolerated PreferNoSchedule taints, reversed to 0-100', () => {
    const infos = nodeInfos([
      makeNode('clean'),
      makeNode('one', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }] }),
      makeNode('two', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }, { key: 'b', effect: 'PreferNoSchedule' }] }),
    ]);
    const ctx = cycle(makePod('p', { spec: { tolerations: [{ key: 'b', operator: 'Exists', effect: 'PreferNoSchedule' }] } }), infos);
    taintTolerationScore.preScore!(ctx, infos);
    const scores: NodeScore[] = infos.map((i) => ({ name: i.node!.metadata!.name!, score: taintTolerationScore.score(ctx, i) }));
    assert.deepEqual(scores.map((s) => s.score), [0, 1, 1]);
    taintTolerationScore.normalize!(ctx, scores);
    assert.deepEqual(scores.map((s) => s.score), [100, 0, 0]);
  });
});

describe('NodeUnschedulable filter', () => {
  it('rejects cordoned nodes unless the pod tolerates node.kubernetes.io/unschedulable', () => {
    const infos = nodeInfos([makeNode('cordoned', { unschedulable: true })]);
    assert.deepEqual(nodeUnschedulable.filter(cycle(makePod('p'), infos), infos[0]!)?.reasons, ['node(s) were unschedulable']);
    const tolerant = makePod('d', { spec: { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] } });
    assert.equal(nodeUnschedulable.filter(cycle(tolerant, infos), infos[0]!), undefined);
  });
});
