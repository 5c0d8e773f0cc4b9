import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeSelectorRequirement } from 'kubernetes-types/core/v1.js';
import { cycle, makeNode, makePod, nodeInfos } from '../testing.js';
import { nodeAffinityFilter, nodeAffinityScore } from './node-affinity.js';
import { nodePorts } from './node-ports.js';
import { nodeNamePlugin } from './node-name.js';

function required(...exprs: NodeSelectorRequirement[]) {
  return { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: exprs }] } } } };
}

describe('NodeAffinity filter', () => {
  const infos = nodeInfos([makeNode('n1', { labels: { zone: 'a', gen: '5' } }), makeNode('n2', { labels: { zone: 'b' } })]);
  const fits = (spec: object) => infos.map((i) => nodeAffinityFilter.filter(cycle(makePod('p', { spec }), infos), i) === undefined);

  it('requires every nodeSelector label', () => {
    assert.deepEqual(fits({ nodeSelector: { zone: 'a' } }), [true, false]);
    const s = nodeAffinityFilter.filter(cycle(makePod('p', { spec: { nodeSelector: { zone: 'c' } } }), infos), infos[0]!);
    assert.deepEqual(s?.reasons, ["node(s) didn't match Pod's node affinity/selector"]);
    assert.equal(s?.code, 'UnschedulableAndUnresolvable');
  });

  it('supports In, NotIn, Exists, DoesNotExist, Gt and Lt', () => {
    assert.deepEqual(fits(required({ key: 'zone', operator: 'In', values: ['b', 'c'] })), [false, true]);
    assert.deepEqual(fits(required({ key: 'zone', operator: 'NotIn', values: ['b'] })), [true, false]);
    assert.deepEqual(fits(required({ key: 'gen', operator: 'Exists' })), [true, false]);
    assert.deepEqual(fits(required({ key: 'gen', operator: 'DoesNotExist' })), [false, true]);
    assert.deepEqual(fits(required({ key: 'gen', operator: 'Gt', values: ['4'] })), [true, false]);
    assert.deepEqual(fits(required({ key: 'gen', operator: 'Lt', values: ['5'] })), [false, false]);
  });

  it('ORs terms, ANDs expressions and matches metadata.name through matchFields', () => {
    const spec = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] },
              { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'gen', operator: 'In', values: ['6'] }] },
            ],
          },
        },
      },
    };
    assert.deepEqual(fits(spec), [false, true]);
  });
});

describe('NodeAffinity score', () => {
  it('sums the weights of matching preferred terms and scales the best to 100', () => {
    const infos = nodeInfos([makeNode('n1', { labels: { zone: 'a', ssd: 'true' } }), makeNode('n2', { labels: { zone: 'a' } }), makeNode('n3')]);
    const pod = makePod('p', {
      spec: {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 30, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
              { weight: 10, preference: { matchExpressions: [{ key: 'ssd', operator: 'Exists' }] } },
            ],
          },
        },
      },
    });
    const ctx = cycle(pod, infos);
    const scores = infos.map((i) => ({ name: i.node!.metadata!.name!, score: nodeAffinityScore.score(ctx, i) }));
    assert.deepEqual(scores.map((s) => s.score), [40, 30, 0]);
    nodeAffinityScore.normalize!(ctx, scores);
    assert.deepEqual(scores.map((s) => s.score), [100, 75, 0]);
  });
});

describe('NodePorts filter', () => {
  const hostPod = (name: string, port: number, opts: { ip?: string; protocol?: string; nodeName?: string } = {}) =>
    makePod(name, {
      nodeName: opts.nodeName,
      spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: port, hostIP: opts.ip, protocol: opts.protocol }] }] },
    });

  it('rejects a host port already used with the same protocol, 0.0.0.0 overlapping every IP', () => {
    const infos = nodeInfos([makeNode('n')], [hostPod('old', 8080, { ip: '10.0.0.1', nodeName: 'n' })]);
    const check = (p: ReturnType<typeof hostPod>) => {
      const ctx = cycle(p, infos);
      nodePorts.preFilter!(ctx);
      return nodePorts.filter(ctx, infos[0]!)?.reasons[0];
    };
    assert.equal(check(hostPod('a', 8080)), "node(s) didn't have free ports for the requested pod ports");
    assert.equal(check(hostPod('b', 8080, { ip: '10.0.0.1' })), "node(s) didn't have free ports for the requested pod ports");
    assert.equal(check(hostPod('c', 8080, { ip: '10.0.0.2' })), undefined);
    assert.equal(check(hostPod('d', 8080, { protocol: 'UDP' })), undefined);
    assert.equal(check(hostPod('e', 9090)), undefined);
  });
});

describe('NodeName filter', () => {
  it('accepts only the node named in spec.nodeName', () => {
    const infos = nodeInfos([makeNode('a'), makeNode('b')]);
    const ctx = cycle(makePod('p', { spec: { nodeName: 'b' } }), infos);
    assert.deepEqual(nodeNamePlugin.filter(ctx, infos[0]!)?.reasons, ["node(s) didn't match the requested node name"]);
    assert.equal(nodeNamePlugin.filter(ctx, infos[1]!), undefined);
  });
});
