import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { schedulePod } from './algorithm.js';
import { parseSchedulerConfiguration, SchedulerConfigError } from './config.js';
import { newSnapshot, noLookups } from './framework.js';
import { seededRandom } from './random.js';
import { makeNode, makePod, nodeInfos } from './testing.js';
import type { Profile } from './profile.js';

const V1 = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';
const V1BETA1 = 'apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n';

const names = (p: Profile) => ({ filters: p.filters.map((f) => f.name), scores: p.scores.map((s) => `${s.plugin.name}=${s.weight}`) });

function rejects(text: string, message: RegExp): void {
  assert.throws(() => parseSchedulerConfiguration(text), (err: unknown) => err instanceof SchedulerConfigError && message.test((err as Error).message));
}

describe('KubeSchedulerConfiguration', () => {
  it('gives one default-scheduler profile with the default plugins when no profile is named', () => {
    const c = parseSchedulerConfiguration(V1);
    assert.equal(c.profiles.length, 1);
    const p = c.profiles[0]!;
    assert.equal(p.schedulerName, 'default-scheduler');
    assert.deepEqual(names(p), {
      filters: [
        'NodeUnschedulable',
        'NodeName',
        'TaintToleration',
        'NodeAffinity',
        'NodePorts',
        'NodeResourcesFit',
        'VolumeRestrictions',
        'NodeVolumeLimits',
        'VolumeBinding',
        'VolumeZone',
        'PodTopologySpread',
        'InterPodAffinity',
      ],
      scores: ['TaintToleration=3', 'NodeAffinity=2', 'NodeResourcesFit=1', 'PodTopologySpread=2', 'InterPodAffinity=2', 'NodeResourcesBalancedAllocation=1', 'ImageLocality=1'],
    });
    assert.deepEqual(p.preemption, { minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 100 });
    assert.equal(c.percentageOfNodesToScore, 0);
  });

  it('builds several profiles, each with its plugins disabled, re-weighted or added', () => {
    const c = parseSchedulerConfiguration(`${V1}percentageOfNodesToScore: 40
profiles:
- schedulerName: default-scheduler
- schedulerName: no-preemption
  percentageOfNodesToScore: 70
  plugins:
    postFilter:
      disabled: [{name: DefaultPreemption}]
    score:
      disabled: [{name: ImageLocality}, {name: NodeResourcesBalancedAllocation}]
      enabled: [{name: NodeResourcesFit, weight: 5}]
    filter:
      disabled: [{name: '*'}]
      enabled: [{name: NodeName}, {name: NodeResourcesFit}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
`);
    assert.equal(c.percentageOfNodesToScore, 40);
    assert.deepEqual(c.profiles.map((p) => p.schedulerName), ['default-scheduler', 'no-preemption']);
    const p = c.profiles[1]!;
    assert.equal(p.preemption, undefined);
    assert.equal(p.percentageOfNodesToScore, 70);
    assert.deepEqual(names(p), {
      filters: ['NodeName', 'NodeResourcesFit'],
      // Re-weighted in place; the others keep their default weights and order.
      scores: ['TaintToleration=3', 'NodeAffinity=2', 'NodeResourcesFit=5', 'PodTopologySpread=2', 'InterPodAffinity=2'],
    });
    assert.ok(c.profiles[0]!.preemption);
    // Built again for the scheduler's client: the same plugins, without reading the file again.
    assert.deepEqual(c.profilesFor({}).map(names), c.profiles.map(names));
    assert.notEqual(c.profilesFor({})[1], c.profiles[1]);
  });

  it('packs with the MostAllocated scoring strategy and spreads with LeastAllocated', () => {
    const pack = parseSchedulerConfiguration(`${V1}profiles:
- schedulerName: packer
  plugins:
    multiPoint:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit}, {name: DefaultBinder}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}]}}
`).profiles[0]!;
    assert.deepEqual(names(pack), { filters: ['NodeResourcesFit'], scores: ['NodeResourcesFit=1'] });
    const spread = parseSchedulerConfiguration(V1).profiles[0]!;
    const infos = nodeInfos([makeNode('busy'), makeNode('idle')], [makePod('x', { nodeName: 'busy', requests: { cpu: '3' } })]);
    const pod = makePod('p', { requests: { cpu: '500m' } });
    const place = (profile: Profile) => {
      const r = schedulePod(pod, { profile, snapshot: newSnapshot(infos), lookups: noLookups, random: seededRandom(1) });
      return r.kind === 'scheduled' ? r.node : r.kind;
    };
    assert.equal(place(pack), 'busy');
    assert.equal(place(spread), 'idle');
  });

  it("reads kube-scheduler 1.20's v1beta1 files, with its separate resource scorers and in-tree plugins", () => {
    const c = parseSchedulerConfiguration(`${V1BETA1}profiles:
- schedulerName: bin-packing
  plugins:
    score:
      disabled: [{name: NodeResourcesLeastAllocated}, {name: NodeResourcesFit}]
      enabled: [{name: NodeResourcesMostAllocated, weight: 3}]
    filter:
      disabled: [{name: EBSLimits}, {name: GCEPDLimits}]
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 20, minCandidateNodesAbsolute: 5}
`);
    const p = c.profiles[0]!;
    assert.ok(names(p).scores.includes('NodeResourcesFit=3'));
    assert.ok(!names(p).scores.includes('NodeResourcesFit=1'));
    assert.deepEqual(p.preemption, { minCandidateNodesPercentage: 20, minCandidateNodesAbsolute: 5 });
    assert.equal(c.warnings.length, 2);
    assert.match(c.warnings[0]!, /EBSLimits.*not implemented by kcm/);
  });

  it('takes leader election and client connection settings', () => {
    const c = parseSchedulerConfiguration(`${V1}leaderElection:
  leaderElect: false
  leaseDuration: 1m30s
  resourceName: my-scheduler
clientConnection:
  qps: 100
  burst: 200
`);
    assert.deepEqual(c.leaderElection, { leaderElect: false, leaseDurationMs: 90_000, resourceName: 'my-scheduler' });
    assert.deepEqual(c.clientConnection, { qps: 100, burst: 200 });
  });

  it('rejects bad files with a message naming the field', () => {
    rejects('a: [', /^not valid YAML/);
    rejects('apiVersion: v1\nkind: Pod\n', /no kind "KubeSchedulerConfiguration" is registered for version "v1"/);
    rejects(`${V1}percentageOfNodesToScore: 120\n`, /^percentageOfNodesToScore: Invalid value: 120: not in valid range \[0-100\]/);
    rejects(`${V1}profiles:\n- schedulerName: a\n- schedulerName: a\n`, /^profiles\[1\]\.schedulerName: Duplicate value: "a"/);
    rejects(`${V1}profiles:\n- schedulerName: a\n- {}\n`, /^profiles\[1\]\.schedulerName: Required value/);
    rejects(`${V1}profiles:\n- plugins:\n    filter:\n      enabled: [{name: Magic}]\n`, /^profiles\[0\]\.plugins\.filter\.enabled\[0\]: plugin "Magic" does not exist/);
    rejects(`${V1}profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeName}]\n`, /plugin "NodeName" does not extend score plugin/);
    rejects(`${V1}profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: 1000}]\n`, /weight: Invalid value: 1000/);
    rejects(`${V1}profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}\n`, /cannot both be zero/);
    rejects(`${V1}profiles:\n- plugins:\n    bind:\n      disabled: [{name: DefaultBinder}]\n`, /at least one bind plugin/);
  });
});
