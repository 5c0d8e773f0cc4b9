import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, TopologySpreadConstraint } from 'kubernetes-types/core/v1.js';
import { nothing, selectorFromSet } from '../../api/labels.js';
import { addPod, newPodInfo, removePod } from '../node-info.js';
import { newSnapshot } from '../framework.js';
import { newSchedulerCache } from '../scheduler-cache.js';
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

describe('PodTopologySpread score over a scheduler cache', () => {
  it('keeps zone sums equal to a walk over every node while pods and nodes change', () => {
    const cache = newSchedulerCache();
    const zoneOf = (i: number) => ['a', 'b', 'c'][i % 3]!;
    for (let i = 0; i < 12; i++) cache.addNode(makeNode(`n${i}`, { labels: { 'topology.kubernetes.io/zone': zoneOf(i) } }));
    const web = selectorFromSet({ app: 'web' });
    const lookups = { ownerSelectors: (p: Pod) => (p.metadata?.labels?.app === 'web' ? [web] : []) };
    const incoming = makePod('incoming', { labels: { app: 'web' } });
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const placed = new Map<string, Pod>();
    const check = (step: number) => {
      const snapshot = cache.snapshot();
      assert.ok(snapshot.changes, 'a cache snapshot carries its change log');
      const scores = (s: typeof snapshot) => {
        const ctx = { ...cycle(incoming, [...s.nodes], lookups), snapshot: s };
        assert.equal(podTopologySpreadScore.preScore!(ctx, s.nodes), undefined);
        return s.nodes.map((i) => podTopologySpreadScore.score(ctx, i));
      };
      assert.deepEqual(scores(snapshot), scores(newSnapshot(snapshot.nodes)), `step ${step}`);
    };
    check(0);
    for (let step = 1; step <= 300; step++) {
      const op = rand(10);
      const name = `p${rand(40)}`;
      const old = placed.get(name);
      if (op < 5 && !old) {
        const pod = makePod(name, { labels: { app: rand(3) === 0 ? 'other' : 'web' }, nodeName: `n${rand(12)}` });
        if (rand(2) === 0) cache.assumePod(pod);
        else cache.addPod(pod);
        placed.set(name, pod);
      } else if (op < 7 && old) {
        cache.removePod(old);
        placed.delete(name);
      } else if (op < 9 && old) {
        const relabelled = { ...old, metadata: { ...old.metadata, labels: { app: old.metadata?.labels?.app === 'web' ? 'other' : 'web' } } };
        cache.updatePod(old, relabelled);
        placed.set(name, relabelled);
      } else if (op === 9) {
        const i = rand(12);
        cache.updateNode(makeNode(`n${i}`, { labels: { 'topology.kubernetes.io/zone': rand(2) === 0 ? zoneOf(i) : 'd' } }));
      }
      check(step);
    }
  });
});
