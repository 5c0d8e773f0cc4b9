import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fitErrorMessage, NO_NODES_AVAILABLE, schedulePod, selectHost } from './algorithm.js';
import { newSnapshot, noLookups, unresolvable, unschedulable } from './framework.js';
import { defaultProfile } from './profile.js';
import { seededRandom } from './random.js';
import { makeNode, makePod, nodeInfos } from './testing.js';

describe('fitErrorMessage', () => {
  it('counts reasons over nodes and sorts the counted strings', () => {
    const statuses = new Map([
      ['a', unschedulable('Insufficient cpu', 'Insufficient memory')],
      ['b', unschedulable('Insufficient cpu')],
      ['c', unresolvable('node(s) had untolerated taint {x: }')],
    ]);
    assert.equal(
      fitErrorMessage({ numAllNodes: 3, nodeStatuses: statuses, postFilterMessage: 'preemption: x.' }),
      '0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {x: }, 2 Insufficient cpu. preemption: x..',
    );
  });
});

describe('schedulePod', () => {
  const opts = (nodes: ReturnType<typeof nodeInfos>) => ({ profile: defaultProfile(), snapshot: newSnapshot(nodes), lookups: noLookups, random: seededRandom(1) });

  it('says no nodes are available on an empty cluster', () => {
    const r = schedulePod(makePod('p'), opts([]));
    assert.deepEqual(r.kind === 'unschedulable' && r.message, NO_NODES_AVAILABLE);
  });

  it('words the FitError without a PostFilter part (the scheduler adds preemption)', () => {
    const r = schedulePod(makePod('p', { requests: { cpu: '8' } }), opts(nodeInfos([makeNode('n')])));
    assert.equal(r.kind === 'unschedulable' && r.message, '0/1 nodes are available: 1 Insufficient cpu.');
  });

  it('prefers the node with more room, weighing the plugins', () => {
    const infos = nodeInfos([makeNode('small', { cpu: '2' }), makeNode('big', { cpu: '16', memory: '64Gi' })]);
    const r = schedulePod(makePod('p', { requests: { cpu: '1', memory: '1Gi' } }), opts(infos));
    assert.equal(r.kind === 'scheduled' && r.node, 'big');
  });

  it('is steered by a PreferNoSchedule taint over equal resources', () => {
    const infos = nodeInfos([makeNode('tainted', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }), makeNode('clean')]);
    for (let seed = 0; seed < 5; seed++) {
      const r = schedulePod(makePod('p'), { ...opts(infos), random: seededRandom(seed) });
      assert.equal(r.kind === 'scheduled' && r.node, 'clean');
    }
  });
});

describe('selectHost', () => {
  it('picks the top score and spreads ties across equal nodes', () => {
    assert.equal(selectHost([{ name: 'a', score: 1 }, { name: 'b', score: 9 }], seededRandom(3)), 'b');
    const rnd = seededRandom(42);
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) seen.add(selectHost([{ name: 'a', score: 5 }, { name: 'b', score: 5 }, { name: 'c', score: 5 }], rnd));
    assert.deepEqual([...seen].sort(), ['a', 'b', 'c']);
  });
});
