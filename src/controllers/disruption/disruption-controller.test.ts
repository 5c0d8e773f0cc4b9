import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { pod, setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newDisruptionController, type DisruptionControllerOptions } from './disruption-controller.js';

type Pdb = Kube<PodDisruptionBudget>;

function setup(seed: (f: FakeClient) => void, opts: DisruptionControllerOptions = {}) {
  return setupController((f) => seed(f), (ctx) => newDisruptionController(ctx, opts));
}

const pdb = (spec: PodDisruptionBudget['spec'], status?: PodDisruptionBudget['status']): Pdb => ({
  metadata: { name: 'pdb', namespace: 'default', generation: 3 },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
  ...(status ? { status } : {}),
});

const owned = (name: string, kind: string, ownerName: string, apiVersion = 'apps/v1', extra: Parameters<typeof pod>[1] = {}): Kube<Pod> => {
  const p = pod(name, extra);
  return { ...p, metadata: { ...p.metadata, ownerReferences: [{ apiVersion, kind, name: ownerName, uid: `uid-${ownerName}`, controller: true }] } };
};

const status = (f: FakeClient) => f.stored<Pdb>(GVR.podDisruptionBudgets, 'default', 'pdb')!.status!;

describe('disruption controller', () => {
  before(() => setLogOutput(() => {}));

  it('allows disruptions above an integer minAvailable and reports SufficientPods', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ minAvailable: 2 }));
      f.seed(GVR.pods, pod('a'), pod('b'), pod('c'), pod('d', { ready: false }), pod('x', { labels: { app: 'db' } }));
    });
    await env.c.sync('default/pdb');
    const s = status(env.fake);
    assert.deepEqual(
      { currentHealthy: s.currentHealthy, desiredHealthy: s.desiredHealthy, expectedPods: s.expectedPods, disruptionsAllowed: s.disruptionsAllowed, observedGeneration: s.observedGeneration },
      { currentHealthy: 3, desiredHealthy: 2, expectedPods: 4, disruptionsAllowed: 1, observedGeneration: 3 },
    );
    assert.deepEqual(
      s.conditions?.map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
      [['DisruptionAllowed', 'True', 'SufficientPods', 3]],
    );
    assert.equal(s.conditions?.[0]?.lastTransitionTime, '2024-01-01T00:00:00Z');
    await env.stop();
  });

  it('counts a Deployment once through its ReplicaSets for maxUnavailable', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ maxUnavailable: 1 }));
      f.seed(GVR.deployments, { metadata: { name: 'web', namespace: 'default', uid: 'uid-web' }, spec: { replicas: 4, selector: {}, template: {} } });
      f.seed(GVR.replicaSets, { metadata: { name: 'web-1', namespace: 'default', uid: 'uid-web-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true }] }, spec: { replicas: 2, selector: {} } });
      f.seed(GVR.replicaSets, { metadata: { name: 'web-2', namespace: 'default', uid: 'uid-web-2', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true }] }, spec: { replicas: 2, selector: {} } });
      f.seed(GVR.pods, owned('a', 'ReplicaSet', 'web-1'), owned('b', 'ReplicaSet', 'web-2'), owned('c', 'ReplicaSet', 'web-2'));
    });
    await env.c.sync('default/pdb');
    const s = status(env.fake);
    assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [4, 3, 3, 0]);
    assert.deepEqual(s.conditions?.map((c) => [c.status, c.reason]), [['False', 'InsufficientPods']]);
    await env.stop();
  });

  it('scales a percentage minAvailable by StatefulSet and ReplicationController replicas, rounding up', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ minAvailable: '50%' }));
      f.seed(GVR.statefulSets, { metadata: { name: 'db', namespace: 'default', uid: 'uid-db' }, spec: { replicas: 3, selector: {}, template: {}, serviceName: 'db' } });
      f.seed(GVR.replicationControllers, { metadata: { name: 'rc', namespace: 'default', uid: 'uid-rc' }, spec: { replicas: 2 } });
      f.seed(GVR.pods, owned('db-0', 'StatefulSet', 'db'), owned('db-1', 'StatefulSet', 'db'), owned('rc-a', 'ReplicationController', 'rc', 'v1'));
    });
    await env.c.sync('default/pdb');
    const s = status(env.fake);
    assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [5, 3, 3, 0]);
    await env.stop();
  });

  it('reads other controllers through the scale lookup', async () => {
    const env = await setup(
      (f) => {
        f.seed(GVR.podDisruptionBudgets, pdb({ maxUnavailable: '25%' }));
        f.seed(GVR.pods, owned('a', 'Widget', 'w', 'example.com/v1'), owned('b', 'Widget', 'w', 'example.com/v1'));
      },
      { scaleLookup: async (ref) => (ref.kind === 'Widget' ? { uid: ref.uid, scale: 8 } : undefined) },
    );
    await env.c.sync('default/pdb');
    const s = status(env.fake);
    assert.deepEqual([s.expectedPods, s.desiredHealthy, s.disruptionsAllowed], [8, 6, 0]);
    await env.stop();
  });

  it('fails safe with SyncFailed when a pod controller cannot be found', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ maxUnavailable: 1 }, { disruptionsAllowed: 2, currentHealthy: 3, desiredHealthy: 1, expectedPods: 3, observedGeneration: 3 }));
      f.seed(GVR.pods, owned('a', 'ReplicaSet', 'missing'));
    });
    await assert.rejects(env.c.sync('default/pdb'), /found no controllers for pod "a"/);
    const s = status(env.fake);
    assert.equal(s.disruptionsAllowed, 0);
    assert.deepEqual(s.conditions?.map((c) => [c.status, c.reason, c.message]), [['False', 'SyncFailed', 'found no controllers for pod "a"']]);
    assert.ok(env.recorder.events.includes('Warning CalculateExpectedPodCountFailed Failed to calculate the number of expected pods: found no controllers for pod "a"'));
    await env.stop();
  });

  it('warns about unmanaged pods and counts only managed ones for maxUnavailable', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ maxUnavailable: 0 }));
      f.seed(GVR.replicaSets, { metadata: { name: 'rs', namespace: 'default', uid: 'uid-rs' }, spec: { replicas: 1, selector: {} } });
      f.seed(GVR.pods, owned('a', 'ReplicaSet', 'rs'), pod('bare'));
    });
    await env.c.sync('default/pdb');
    const s = status(env.fake);
    assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [1, 1, 2, 1]);
    assert.ok(
      env.recorder.events.includes(
        'Warning UnmanagedPods Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.',
      ),
      env.recorder.events.join('\n'),
    );
    await env.stop();
  });

  it('allows nothing while no pods match, with a NoPods event', async () => {
    const env = await setup((f) => f.seed(GVR.podDisruptionBudgets, pdb({ maxUnavailable: 1 })));
    await env.c.sync('default/pdb');
    assert.equal(status(env.fake).disruptionsAllowed, 0);
    assert.deepEqual(env.recorder.events, ['Normal NoPods No matching pods found']);
    await env.stop();
  });

  it('keeps recently disrupted pods out of currentHealthy and drops entries older than two minutes', async () => {
    const env = await setup((f) => {
      f.seed(
        GVR.podDisruptionBudgets,
        pdb({ minAvailable: 1 }, { disruptedPods: { a: '2023-12-31T23:59:30Z', b: '2023-12-31T23:50:00Z', gone: '2023-12-31T23:59:30Z' }, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 0 }),
      );
      f.seed(GVR.pods, pod('a'), pod('b'), pod('c'));
    });
    await env.c.sync('default/pdb');
    const s = status(env.fake);
    assert.deepEqual(s.disruptedPods, { a: '2023-12-31T23:59:30Z' });
    assert.equal(s.currentHealthy, 2);
    assert.equal(s.disruptionsAllowed, 1);
    // Upstream prints the PDB's namespace twice.
    assert.deepEqual(env.recorder.events, ["Warning NotDeleted Pod was expected by PDB default/default to be deleted but it wasn't"]);
    // The PDB is rechecked when the remaining entry expires (90 s later).
    assert.equal(env.clock.nextTimerAt(), Date.parse('2024-01-01T00:01:30Z'));
    await env.stop();
  });

  it('warns on a pod that several PDBs select, naming the one it chose', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ minAvailable: 1 }), { ...pdb({ minAvailable: 1 }), metadata: { name: 'pdb-b', namespace: 'default', generation: 1 } });
      f.seed(GVR.pods, pod('a'));
    });
    await until(() => env.recorder.events.length > 0, 'event');
    assert.ok(
      env.recorder.events.includes('Warning MultiplePodDisruptionBudgets Pod "default"/"a" matches multiple PodDisruptionBudgets.  Chose "pdb" arbitrarily.'),
      env.recorder.events.join('\n'),
    );
    await env.stop();
  });

  it('resets a DisruptionTarget condition still True on a running pod after two minutes, and only then', async () => {
    const target = (name: string, at: string, reason = 'EvictionByEvictionAPI'): Kube<Pod> => {
      const p = pod(name);
      p.status!.conditions!.push({ type: 'DisruptionTarget', status: 'True', reason, message: 'Eviction API: evicting', lastTransitionTime: at });
      return p;
    };
    const env = await setup((f) => {
      f.seed(GVR.pods, target('old', '2023-12-31T23:57:00Z'), target('fresh', '2023-12-31T23:59:30Z'), target('kubelet', '2023-12-31T23:50:00Z', 'TerminationByKubelet'));
    });
    for (const n of ['old', 'fresh', 'kubelet']) await env.c.syncStalePodDisruption(`default/${n}`);
    const cond = (n: string) => env.fake.stored<Kube<Pod>>(GVR.pods, 'default', n)!.status!.conditions!.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual(cond('old'), { type: 'DisruptionTarget', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z' });
    assert.equal(cond('fresh')?.status, 'True');
    assert.equal(cond('kubelet')?.status, 'True');
    await env.stop();
  });

  it('writes nothing when the status is already current', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ minAvailable: 1 }));
      f.seed(GVR.pods, pod('a'));
    });
    await env.c.sync('default/pdb');
    await until(() => env.informers.podDisruptionBudgets().getIndexer().getByKey('default/pdb')?.status?.observedGeneration === 3, 'status cached');
    env.fake.clearActions();
    await env.c.sync('default/pdb');
    assert.deepEqual(env.fake.actions().filter((a) => a.verb === 'update'), []);
    await env.stop();
  });

  it('resyncs the PDB when a matching pod changes while running', async () => {
    const env = await setup((f) => {
      f.seed(GVR.podDisruptionBudgets, pdb({ minAvailable: 1 }));
      f.seed(GVR.pods, pod('a'));
    });
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await until(() => status(env.fake)?.currentHealthy === 1, 'first status');
    await env.fake.resource(GVR.pods).namespace('default').create(pod('b') as never);
    await until(() => status(env.fake).currentHealthy === 2 && status(env.fake).disruptionsAllowed === 1, 'pod counted');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'disruption-controller');
    assert.deepEqual(descriptor.aliases, ['disruption']);
  });
});
