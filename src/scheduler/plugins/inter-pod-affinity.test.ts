import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { cycle, makeNode, makePod, nodeInfos } from '../testing.js';
import { interPodAffinityFilter, interPodAffinityScore } from './inter-pod-affinity.js';

const zoneNodes = () => [
  makeNode('a1', { labels: { zone: 'a' } }),
  makeNode('a2', { labels: { zone: 'a' } }),
  makeNode('b1', { labels: { zone: 'b' } }),
];

function run(pod: Pod, existing: Pod[]) {
  const infos = nodeInfos(zoneNodes(), existing);
  const ctx = cycle(pod, infos);
  interPodAffinityFilter.preFilter!(ctx);
  return infos.map((i) => interPodAffinityFilter.filter(ctx, i)?.reasons[0] ?? 'ok');
}

const term = (app: string, topologyKey: string) => ({ labelSelector: { matchLabels: { app } }, topologyKey });

describe('InterPodAffinity filter', () => {
  it('requires a matching pod in the same topology domain for required affinity', () => {
    const pod = makePod('p', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('cache', 'zone')] } } } });
    const got = run(pod, [makePod('cache', { labels: { app: 'cache' }, nodeName: 'a2' })]);
    assert.deepEqual(got, ['ok', 'ok', "node(s) didn't match pod affinity rules"]);
  });

  it('lets the first pod of a self-affine group go anywhere with the topology label', () => {
    const pod = makePod('p', { labels: { app: 'web' }, spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('web', 'zone')] } } } });
    assert.deepEqual(run(pod, []), ['ok', 'ok', 'ok']);
  });

  it('rejects domains holding a pod the incoming pod is anti-affine to', () => {
    const pod = makePod('p', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('db', 'zone')] } } } });
    const got = run(pod, [makePod('db', { labels: { app: 'db' }, nodeName: 'b1' })]);
    assert.deepEqual(got, ['ok', 'ok', "node(s) didn't match pod anti-affinity rules"]);
  });

  it("honours existing pods' anti-affinity against the incoming pod", () => {
    const existing = makePod('loner', {
      nodeName: 'a1',
      spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('web', 'kubernetes.io/hostname')] } } },
    });
    const got = run(makePod('p', { labels: { app: 'web' } }), [existing]);
    assert.deepEqual(got, ["node(s) didn't satisfy existing pods anti-affinity rules", 'ok', 'ok']);
  });

  it('only matches pods in the namespaces of the term', () => {
    const pod = makePod('p', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('db', 'zone')] } } } });
    const got = run(pod, [makePod('db', { namespace: 'other', labels: { app: 'db' }, nodeName: 'b1' })]);
    assert.deepEqual(got, ['ok', 'ok', 'ok']);
  });
});

describe('InterPodAffinity score', () => {
  it('adds preferred affinity weights and subtracts anti-affinity weights per domain, scaled 0-100', () => {
    const pod = makePod('p', {
      spec: {
        affinity: {
          podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: term('cache', 'zone') }] },
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, podAffinityTerm: term('noisy', 'kubernetes.io/hostname') }] },
        },
      },
    });
    const infos = nodeInfos(zoneNodes(), [
      makePod('cache', { labels: { app: 'cache' }, nodeName: 'a1' }),
      makePod('noisy', { labels: { app: 'noisy' }, nodeName: 'a2' }),
    ]);
    const ctx = cycle(pod, infos);
    assert.equal(interPodAffinityScore.preScore!(ctx, infos), undefined);
    const scores = infos.map((i) => ({ name: i.node!.metadata!.name!, score: interPodAffinityScore.score(ctx, i) }));
    assert.deepEqual(scores.map((s) => s.score), [10, 5, 0]);
    interPodAffinityScore.normalize!(ctx, scores);
    assert.deepEqual(scores.map((s) => s.score), [100, 50, 0]);
  });

  it('is skipped when neither the pod nor any existing pod has affinity', () => {
    const infos = nodeInfos(zoneNodes(), [makePod('x', { nodeName: 'a1' })]);
    assert.equal(interPodAffinityScore.preScore!(cycle(makePod('p'), infos), infos), 'skip');
  });
});
