import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cycle, makeNode, makePod, nodeInfos } from '../testing.js';
import { leastRequestedScore, nodeResourcesFitFilter, nodeResourcesFitScore } from './node-resources-fit.js';
import { balancedAllocation, balancedScore } from './balanced-allocation.js';

describe('NodeResourcesFit filter', () => {
  it('reports each insufficient resource of a node as its own reason', () => {
    const infos = nodeInfos(
      [makeNode('n', { cpu: '2', memory: '1Gi', extra: { 'example.com/gpu': '1' } })],
      [makePod('old', { nodeName: 'n', requests: { cpu: '1500m', memory: '512Mi' } })],
    );
    const pod = makePod('p', { requests: { cpu: '1', memory: '1Gi', 'example.com/gpu': '2' } });
    const s = nodeResourcesFitFilter.filter(cycle(pod, infos), infos[0]!);
    assert.equal(s?.code, 'Unschedulable');
    assert.deepEqual(s?.reasons, ['Insufficient cpu', 'Insufficient memory', 'Insufficient example.com/gpu']);
  });

  it('passes a pod that fits exactly', () => {
    const infos = nodeInfos([makeNode('n', { cpu: '2' })], [makePod('old', { nodeName: 'n', requests: { cpu: '1' } })]);
    assert.equal(nodeResourcesFitFilter.filter(cycle(makePod('p', { requests: { cpu: '1' } }), infos), infos[0]!), undefined);
  });

  it('rejects any pod, even best-effort, on a node at its pod limit', () => {
    const infos = nodeInfos([makeNode('n', { pods: '1' })], [makePod('old', { nodeName: 'n' })]);
    const s = nodeResourcesFitFilter.filter(cycle(makePod('p'), infos), infos[0]!);
    assert.deepEqual(s?.reasons, ['Too many pods']);
  });

  it('rejects a pod asking for an extended resource the node does not have', () => {
    const infos = nodeInfos([makeNode('n')]);
    const s = nodeResourcesFitFilter.filter(cycle(makePod('p', { requests: { 'example.com/fpga': '1' } }), infos), infos[0]!);
    assert.deepEqual(s?.reasons, ['Insufficient example.com/fpga']);
  });
});

describe('NodeResourcesFit LeastAllocated score', () => {
  it('computes (capacity - requested) * 100 / capacity and averages cpu and memory', () => {
    assert.equal(leastRequestedScore(1000, 4000), 75);
    assert.equal(leastRequestedScore(5000, 4000), 0);
    const infos = nodeInfos([makeNode('n', { cpu: '4', memory: '4Gi' })], [makePod('old', { nodeName: 'n', requests: { cpu: '1', memory: '1Gi' } })]);
    const pod = makePod('p', { requests: { cpu: '1', memory: '1Gi' } });
    // cpu: (4000-2000)/4000 = 50; memory: 50 -> 50
    assert.equal(nodeResourcesFitScore.score(cycle(pod, infos), infos[0]!), 50);
  });

  it('scores a best-effort pod as if it asked for 100m cpu and 200Mi memory', () => {
    const infos = nodeInfos([makeNode('n', { cpu: '1', memory: '2000Mi' })]);
    // cpu: 900*100/1000 = 90; memory: 1800*100/2000 = 90
    assert.equal(nodeResourcesFitScore.score(cycle(makePod('p'), infos), infos[0]!), 90);
  });
});

describe('NodeResourcesBalancedAllocation score', () => {
  it('favours equal cpu and memory fractions', () => {
    assert.equal(balancedScore([500, 500], [1000, 1000]), 100);
    assert.equal(balancedScore([1000, 0], [1000, 1000]), 50);
    const infos = nodeInfos([makeNode('n', { cpu: '4', memory: '4Gi' })]);
    const pod = makePod('p', { requests: { cpu: '2', memory: '1Gi' } });
    // fractions 0.5 and 0.25 -> std 0.125 -> 87
    assert.equal(balancedAllocation.score(cycle(pod, infos), infos[0]!), 87);
  });

  it('skips best-effort pods', () => {
    const infos = nodeInfos([makeNode('n')]);
    assert.equal(balancedAllocation.preScore!(cycle(makePod('p'), infos), infos), 'skip');
  });
});
