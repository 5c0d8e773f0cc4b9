import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import { filtersWithNominatedPods, fitErrorMessage, schedulePod } from './algorithm.js';
import { newSnapshot, noLookups, type Status } from './framework.js';
import { newPodInfo, type NodeInfo } from './node-info.js';
import { newPodNominator } from './nominator.js';
import { moreImportant, preempt, selectCandidate, splitByPDBViolation, type Candidate, type PreemptionOptions } from './preemption.js';
import { defaultProfile } from './profile.js';
import { seededRandom } from './random.js';
import { cycle, makeNode, makePod, nodeInfos } from './testing.js';

interface PrioOpts {
  cpu?: string;
  node?: string;
  labels?: Record<string, string>;
  start?: string;
  spec?: Partial<Pod['spec']>;
  status?: Pod['status'];
  deletionTimestamp?: string;
}

function prio(name: string, priority: number, o: PrioOpts = {}): Pod {
  const p = makePod(name, { requests: o.cpu ? { cpu: o.cpu } : undefined, nodeName: o.node, labels: o.labels, spec: { priority, ...(o.spec ?? {}) } });
  const status = { ...(o.start ? { startTime: o.start } : {}), ...(o.status ?? {}) };
  return { ...p, metadata: { ...p.metadata, ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}) }, status };
}

function options(infos: NodeInfo[], extra: Partial<PreemptionOptions> = {}): PreemptionOptions {
  return { profile: defaultProfile(), snapshot: newSnapshot(infos), lookups: noLookups, random: seededRandom(3), pdbs: [], now: Date.parse('2026-01-01T00:00:00Z'), ...extra };
}

/** Schedules `pod`; it must fail; then runs preemption over the failure. */
function tryPreempt(pod: Pod, infos: NodeInfo[], extra: Partial<PreemptionOptions> = {}) {
  const o = options(infos, extra);
  const r = schedulePod(pod, o);
  assert.equal(r.kind, 'unschedulable', 'the pod must not fit before preemption');
  if (r.kind !== 'unschedulable') throw new Error('unreachable');
  // With the scheduling cycle's preFilter state, as the scheduler calls it (volume-binding.test.ts calls it without).
  const out = preempt(pod, r.nodeStatuses, { ...o, ...(r.ctx ? { ctx: r.ctx } : {}) });
  const message = out.kind === 'none' && r.fit ? fitErrorMessage({ ...r.fit, postFilterMessage: out.message }) : r.message;
  return { out, message };
}

function victimsOf(out: ReturnType<typeof preempt>): string[] {
  assert.equal(out.kind, 'nominate', JSON.stringify(out));
  return out.kind === 'nominate' ? out.candidate.victims.map((v) => v.metadata!.name!).sort() : [];
}

function pdb(name: string, labels: Record<string, string>, disruptionsAllowed: number): PodDisruptionBudget {
  return { metadata: { name, namespace: 'default' }, spec: { selector: { matchLabels: labels } }, status: { disruptionsAllowed, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } };
}

describe('DefaultPreemption', () => {
  it('evicts only as many lower-priority pods as needed, the least important ones', () => {
    const infos = nodeInfos(
      [makeNode('n', { cpu: '4' })],
      [prio('low-a', 10, { cpu: '1', node: 'n' }), prio('low-b', 20, { cpu: '1', node: 'n' }), prio('mid', 50, { cpu: '1', node: 'n' }), prio('same', 100, { cpu: '1', node: 'n' })],
    );
    const { out } = tryPreempt(prio('high', 100, { cpu: '2' }), infos);
    assert.equal(out.kind === 'nominate' && out.candidate.node, 'n');
    // Pods of the preemptor's own priority are never victims; mid (50) is reprieved first and fits back.
    assert.deepEqual(victimsOf(out), ['low-a', 'low-b']);
  });

  it('keeps pods of equal or higher priority and says no victims were found', () => {
    const infos = nodeInfos([makeNode('n', { cpu: '2' })], [prio('peer', 100, { cpu: '2', node: 'n' })]);
    const { out, message } = tryPreempt(prio('p', 100, { cpu: '1' }), infos);
    assert.equal(out.kind, 'none');
    assert.equal(message, '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..');
  });

  it('does not preempt for a pod with preemptionPolicy Never', () => {
    const infos = nodeInfos([makeNode('n', { cpu: '2' })], [prio('low', 1, { cpu: '2', node: 'n' })]);
    const { out, message } = tryPreempt(prio('p', 100, { cpu: '1', spec: { preemptionPolicy: 'Never' } }), infos);
    assert.deepEqual(out, { kind: 'none', message: 'preemption: not eligible due to preemptionPolicy=Never.', clearNomination: false });
    assert.equal(message, '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..');
  });

  it('skips nodes where removing pods cannot help, and says which failure remains', () => {
    const infos = nodeInfos(
      [makeNode('tainted', { taints: [{ key: 'k', effect: 'NoSchedule' }] }), makeNode('small', { cpu: '1' }), makeNode('full', { cpu: '2' })],
      [prio('low-small', 1, { cpu: '1', node: 'small' }), prio('low-full', 1, { cpu: '2', node: 'full' })],
    );
    // 3 cpu: 'small' is too small even when empty, 'full' too; the taint cannot be preempted away.
    const { out, message } = tryPreempt(prio('p', 100, { cpu: '3' }), infos);
    assert.equal(out.kind === 'none' && out.clearNomination, true);
    assert.equal(
      message,
      '0/3 nodes are available: 1 node(s) had untolerated taint {k: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 Insufficient cpu..',
    );
  });

  it('prefers a node whose victims violate no PodDisruptionBudget', () => {
    const infos = nodeInfos(
      [makeNode('guarded', { cpu: '1' }), makeNode('free', { cpu: '1' })],
      [prio('db-0', 1, { cpu: '1', node: 'guarded', labels: { app: 'db' } }), prio('web-0', 5, { cpu: '1', node: 'free', labels: { app: 'web' } })],
    );
    // Without the budget, the lower victim priority (db-0, 1) wins; with it, web-0 (5) is chosen.
    assert.deepEqual(victimsOf(tryPreempt(prio('p', 100, { cpu: '1' }), infos).out), ['db-0']);
    const { out } = tryPreempt(prio('p', 100, { cpu: '1' }), infos, { pdbs: [pdb('db', { app: 'db' }, 0)] });
    assert.equal(out.kind === 'nominate' && out.candidate.node, 'free');
    assert.equal(out.kind === 'nominate' && out.candidate.numPDBViolations, 0);
  });

  it('still preempts when every candidate violates a budget, counting the violations', () => {
    const infos = nodeInfos([makeNode('n', { cpu: '1' })], [prio('db-0', 1, { cpu: '1', node: 'n', labels: { app: 'db' } })]);
    const { out } = tryPreempt(prio('p', 100, { cpu: '1' }), infos, { pdbs: [pdb('db', { app: 'db' }, 0)] });
    assert.equal(out.kind === 'nominate' && out.candidate.numPDBViolations, 1);
  });

  it('reprieves budget-protected pods before the others', () => {
    // Either pod alone frees enough; the one a budget protects is put back first and stays.
    const infos = nodeInfos([makeNode('n', { cpu: '2' })], [prio('guarded', 1, { cpu: '1', node: 'n', labels: { app: 'db' } }), prio('plain', 1, { cpu: '1', node: 'n', labels: { app: 'x' } })]);
    const { out } = tryPreempt(prio('p', 100, { cpu: '1' }), infos, { pdbs: [pdb('db', { app: 'db' }, 0)] });
    assert.deepEqual(victimsOf(out), ['plain']);
    assert.equal(out.kind === 'nominate' && out.candidate.numPDBViolations, 0);
  });

  it('splits pods by budget in order, each taking one allowed disruption', () => {
    const pods = [prio('a', 1, { labels: { app: 'db' } }), prio('b', 1, { labels: { app: 'db' } }), prio('c', 1, { labels: { app: 'web' } }), prio('d', 1)];
    const b = pdb('db', { app: 'db' }, 1);
    const { violating, nonViolating } = splitByPDBViolation(pods, [b]);
    assert.deepEqual(violating.map((p) => p.metadata!.name), ['b']);
    assert.deepEqual(nonViolating.map((p) => p.metadata!.name), ['a', 'c', 'd']);
    // A pod the budget already counts as disrupted takes nothing.
    b.status!.disruptedPods = { a: '2026-01-01T00:00:00Z' };
    assert.deepEqual(splitByPDBViolation(pods, [b]).violating, []);
  });

  it('evicts the pod whose anti-affinity keeps the preemptor out, not the bigger ones', () => {
    const anti = {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }] },
    };
    const infos = nodeInfos(
      [makeNode('n', { cpu: '4' })],
      [prio('web-old', 1, { cpu: '100m', node: 'n', labels: { app: 'web' } }), prio('batch', 1, { cpu: '1', node: 'n', labels: { app: 'batch' } })],
    );
    const { out } = tryPreempt(prio('web-new', 100, { cpu: '100m', labels: { app: 'web' }, spec: { affinity: anti } }), infos);
    assert.deepEqual(victimsOf(out), ['web-old']);
  });

  it('evicts matching pods to satisfy a DoNotSchedule topology spread constraint', () => {
    const spread = [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } }];
    const infos = nodeInfos(
      [makeNode('a', { labels: { zone: 'a' } }), makeNode('b', { labels: { zone: 'b' }, cpu: '1' })],
      [
        prio('web-a1', 1, { node: 'a', labels: { app: 'web' } }),
        prio('web-a2', 1, { node: 'a', labels: { app: 'web' } }),
        prio('batch-a', 1, { cpu: '1', node: 'a', labels: { app: 'batch' } }),
        prio('peer-b', 100, { cpu: '1', node: 'b', labels: { app: 'other' } }),
      ],
    );
    // Zone b is full with a pod of equal priority. In zone a, two web pods against none in b:
    // a third would skew by 3, so both web pods must go (the batch pod is in no one's way).
    const { out } = tryPreempt(prio('web-new', 100, { cpu: '500m', labels: { app: 'web' }, spec: { topologySpreadConstraints: spread } }), infos);
    assert.equal(out.kind === 'nominate' && out.candidate.node, 'a');
    assert.deepEqual(victimsOf(out), ['web-a1', 'web-a2']);
  });

  it('chooses among candidates by lowest top priority, then sum, then count, then latest start', () => {
    const c = (node: string, victims: Pod[]): Candidate => ({ node, victims, numPDBViolations: 0 });
    assert.equal(selectCandidate([c('x', [prio('x1', 20)]), c('y', [prio('y1', 10), prio('y2', 10)])])!.node, 'y');
    assert.equal(selectCandidate([c('x', [prio('x1', 10), prio('x2', 5)]), c('y', [prio('y1', 10), prio('y2', 1)])])!.node, 'y');
    assert.equal(selectCandidate([c('x', [prio('x1', 10), prio('x2', 10)]), c('y', [prio('y1', 10)])])!.node, 'y');
    const older = prio('old', 10, { start: '2025-01-01T00:00:00Z' });
    const newer = prio('new', 10, { start: '2025-06-01T00:00:00Z' });
    assert.equal(selectCandidate([c('x', [older]), c('y', [newer])])!.node, 'y');
    assert.ok(moreImportant(older, newer, 0));
  });

  it('counts nominated pods of at least the same priority on their node', () => {
    const infos = nodeInfos([makeNode('n', { cpu: '2' })]);
    const nominator = newPodNominator();
    const waiting = prio('nominated', 100, { cpu: '2' });
    nominator.add(waiting, 'n');
    const profile = defaultProfile();
    const lower = prio('lower', 50, { cpu: '1' });
    const s: Status | undefined = filtersWithNominatedPods(cycle(lower, infos), profile, infos[0]!, nominator);
    assert.deepEqual(s?.reasons, ['Insufficient cpu']);
    // A pod of higher priority than the nominated one ignores it.
    assert.equal(filtersWithNominatedPods(cycle(prio('higher', 200, { cpu: '1' }), infos), profile, infos[0]!, nominator), undefined);
    // The nominated pod itself is not counted twice.
    assert.equal(filtersWithNominatedPods(cycle(waiting, infos), profile, infos[0]!, nominator), undefined);
  });

  it('does not preempt again while a victim on the nominated node is terminating', () => {
    const victim = prio('victim', 1, {
      cpu: '2',
      node: 'n',
      deletionTimestamp: '2026-01-01T00:00:00Z',
      status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] },
    });
    const infos = nodeInfos([makeNode('n', { cpu: '2' }), makeNode('m', { cpu: '2' })], [victim, prio('other', 1, { cpu: '2', node: 'm' })]);
    const p = prio('p', 100, { cpu: '2', status: { nominatedNodeName: 'n' } });
    const { out } = tryPreempt(p, infos);
    assert.deepEqual(out, { kind: 'none', message: 'preemption: not eligible due to a terminating pod on the nominated node.', clearNomination: false });
  });

  it('tries the nominated node first once it has room', () => {
    const infos = nodeInfos([makeNode('a', { cpu: '2' }), makeNode('b', { cpu: '8' })]);
    const p = prio('p', 100, { cpu: '1', status: { nominatedNodeName: 'a' } });
    const r = schedulePod(p, options(infos), newPodInfo(p));
    // 'b' would score higher (more room); the nomination wins.
    assert.equal(r.kind === 'scheduled' && r.node, 'a');
  });
});
