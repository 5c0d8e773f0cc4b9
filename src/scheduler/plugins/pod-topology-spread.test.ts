import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, TopologySpreadConstraint } from 'kubernetes-types/core/v1.js';
import { nothing, selectorFromSet } from '../../api/labels.js';
import { addPod, newPodInfo, removePod } from '../node-info.js';
import { cycle, makeNode, makePod, nodeInfos } from '../testing.js';
import { countMatchingPods, podTopologySpreadFilter, podTopologySpreadScore } from './pod-topology-spread.js';

const zoned = (name: string, zone?: string) => makeNode(name, { labels: zone ? { zone } : {} });
const spread = (c: Partial<TopologySpreadConstraint>): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: 'zone',
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels: { app: 'x' } },
  ...c,
});
const xPod = (name: string, nodeName?: string, c: TopologySpreadConstraint[] = []) =>
  makePod(name, { labels: { app: 'x' }, nodeName, spec: { topologySpreadConstraints: c } });

function filter(pod: Pod, nodes = [zoned('a1', 'a'), zoned('b1', 'b'), zoned('c1')], existing: Pod[] = []) {
  const infos = nodeInfos(nodes, existing);
  const ctx = cycle(pod, infos);
  podTopologySpreadFilter.preFilter!(ctx);
  return infos.map((i) => podTopologySpreadFilter.filter(ctx, i)?.reasons[0] ?? 'ok');
}

describe('PodTopologySpread filter', () => {
  it('rejects the domain that would exceed maxSkew and nodes missing the key', () => {
    const got = filter(xPod('p', undefined, [spread({})]), undefined, [xPod('e1', 'a1')]);
    assert.deepEqual(got, [
      "node(s) didn't match pod topology spread constraints",
      'ok',
      "node(s) didn't match pod topology spread constraints (missing required label)",
    ]);
  });

  it('treats the minimum as 0 while fewer domains than minDomains exist', () => {
    const nodes = [zoned('a1', 'a'), zoned('b1', 'b')];
    const existing = [xPod('e1', 'a1'), xPod('e2', 'b1')];
    assert.deepEqual(filter(xPod('p', undefined, [spread({})]), nodes, existing), ['ok', 'ok']);
    assert.deepEqual(filter(xPod('p', undefined, [spread({ minDomains: 3 })]), nodes, existing), [
      "node(s) didn't match pod topology spread constraints",
      "node(s) didn't match pod topology spread constraints",
    ]);
  });

  it("ignores domains of nodes outside the pod's node affinity (nodeAffinityPolicy Honor)", () => {
    const nodes = [zoned('a1', 'a'), makeNode('b1', { labels: { zone: 'b', pool: 'other' } })];
    const pod = xPod('p', undefined, [spread({})]);
    pod.spec!.affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' }] }] } },
    };
    // With zone b excluded, zone a is the only domain: min is a's count, so skew stays 1.
    assert.deepEqual(filter(pod, nodes, [xPod('e1', 'a1')]), ['ok', 'ok']);
  });
});

describe('PodTopologySpread score', () => {
  it('prefers domains with fewer matching pods for ScheduleAnyway constraints', () => {
    const pod = xPod('p', undefined, [spread({ whenUnsatisfiable: 'ScheduleAnyway' })]);
    const infos = nodeInfos([zoned('a1', 'a'), zoned('b1', 'b')], [xPod('e1', 'a1'), xPod('e2', 'a1')]);
    const ctx = cycle(pod, infos);
    assert.equal(podTopologySpreadScore.preScore!(ctx, infos), undefined);
    const scores = infos.map((i) => ({ name: i.node!.metadata!.name!, score: podTopologySpreadScore.score(ctx, i) }));
    podTopologySpreadScore.normalize!(ctx, scores);
    assert.ok(scores[1]!.score > scores[0]!.score, JSON.stringify(scores));
    assert.equal(scores[1]!.score, 100);
  });

  it('applies the system default constraints to pods selected by a Service', () => {
    const pod = makePod('p', { labels: { app: 'web' } });
    const infos = nodeInfos([makeNode('n1'), makeNode('n2')], [makePod('w1', { labels: { app: 'web' }, nodeName: 'n1' })]);
    const ctx = cycle(pod, infos, { ownerSelectors: () => [selectorFromSet({ app: 'web' })] });
    assert.equal(podTopologySpreadScore.preScore!(ctx, infos), undefined);
    const scores = infos.map((i) => ({ name: i.node!.metadata!.name!, score: podTopologySpreadScore.score(ctx, i) }));
    podTopologySpreadScore.normalize!(ctx, scores);
    assert.ok(scores[1]!.score > scores[0]!.score, JSON.stringify(scores));
    const none = cycle(pod, infos);
    assert.equal(podTopologySpreadScore.preScore!(none, infos), 'skip', 'no owner, no default spreading');
  });
});

describe('countMatchingPods', () => {
  it('counts again once the node gains or loses a pod, and keeps namespaces and selectors apart', () => {
    const e1 = xPod('e1', 'a1');
    const e2 = xPod('e2', 'a1');
    const [info] = nodeInfos([zoned('a1', 'a')], [e1, makePod('other', { labels: { app: 'y' }, nodeName: 'a1' })]);
    const x = selectorFromSet({ app: 'x' });
    const y = selectorFromSet({ app: 'y' });
    assert.equal(countMatchingPods(info!, x, 'default'), 1);
    assert.equal(countMatchingPods(info!, y, 'default'), 1);
    assert.equal(countMatchingPods(info!, x, 'elsewhere'), 0);
    assert.equal(countMatchingPods(info!, nothing(), 'default'), 0);
    addPod(info!, newPodInfo(e2));
    assert.equal(countMatchingPods(info!, x, 'default'), 2);
    assert.equal(removePod(info!, e1), true);
    assert.equal(removePod(info!, e2), true);
    assert.equal(countMatchingPods(info!, x, 'default'), 0);
    assert.equal(countMatchingPods(info!, y, 'default'), 1);
  });
});
