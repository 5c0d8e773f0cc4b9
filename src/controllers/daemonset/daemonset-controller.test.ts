import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { newFakeClient } from '../../controller/testing/fake-client.js';
import { newSharedInformerFactory } from '../../tools/cache/factory.js';
import { newFakeRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks, rfc3339 } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import { newDaemonSetsController } from './daemonset-controller.js';
import { getTargetNodeName } from './eligibility.js';

type Obj = KubeObject;
type KPod = Obj & Pod;
const RESOURCES = [GVR.daemonSets, GVR.pods, GVR.nodes, GVR.controllerRevisions];
const stops: AbortController[] = [];
after(() => stops.forEach((s) => s.abort()));

function node(name: string, labels: Record<string, string> = {}, taints: NonNullable<NonNullable<Node['spec']>['taints']> = []): Obj {
  return { metadata: { name, labels }, spec: { taints } };
}

async function setup(spec: Partial<DaemonSet['spec']> = {}, nodes: Obj[] = [node('n1'), node('n2'), node('n3')]) {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  const informers = newSharedInformerFactory(fake, { clock });
  const recorder = newFakeRecorder();
  const ctx: ControllerContext = {
    client: fake,
    informers,
    clock,
    options: { concurrency: {}, extra: {} } as unknown as ControllerOptions,
    recorder: () => recorder,
    logger: (n) => newLogger(n),
  };
  const controller = newDaemonSetsController(ctx);
  fake.seed(GVR.nodes, ...nodes);
  const [ds] = fake.seed<Obj>(GVR.daemonSets, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'agent:1' }] } },
      ...spec,
    },
  });
  const stop = new AbortController();
  stops.push(stop);
  informers.start(stop.signal);

  /** Waits until every informer cache holds exactly what the fake store holds. */
  const settle = async () => {
    for (let i = 0; i < 500; i++) {
      const same = RESOURCES.every((gvr) => {
        const want = fake.storedList(gvr).map((o) => `${o.metadata?.namespace}/${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
        const have = informers.forResource(gvr).getIndexer().list().map((o) => `${o.metadata?.namespace}/${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
        return want.join() === have.join();
      });
      if (same) return;
      await flushMicrotasks();
    }
    throw new Error('informers did not catch up');
  };
  const sync = async () => {
    await settle();
    await controller.sync('ns/agent');
    // Play the scheduler and the API server: bind pods to their affinity node, phase Pending.
    for (const p of fake.storedList<KPod>(GVR.pods, 'ns')) {
      if (!p.spec?.nodeName && !p.metadata?.deletionTimestamp) {
        await fake.resource<KPod>(GVR.pods).namespace('ns').update({ ...p, spec: { ...p.spec!, nodeName: getTargetNodeName(p)! } });
        const bound = fake.stored<KPod>(GVR.pods, 'ns', p.metadata!.name!)!;
        await fake.resource<KPod>(GVR.pods).namespace('ns').updateStatus({ ...bound, status: { phase: 'Pending' } });
      }
    }
    await settle();
  };
  const pods = () => fake.storedList<KPod>(GVR.pods, 'ns');
  const podNodes = () => pods().map((p) => p.spec?.nodeName).sort();
  const status = () => fake.stored<Obj & DaemonSet>(GVR.daemonSets, 'ns', 'agent')!.status!;
  const setPhase = async (p: KPod, phase: string, ready: boolean) => {
    const cur = fake.stored<KPod>(GVR.pods, 'ns', p.metadata!.name!)!;
    await fake.resource<KPod>(GVR.pods).namespace('ns').updateStatus({
      ...cur,
      status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339(clock.now()) }] },
    });
  };
  const allReady = async () => {
    for (const p of pods()) if (p.status?.phase !== 'Running') await setPhase(p, 'Running', true);
  };
  const updateDs = async (f: (d: Obj & DaemonSet) => void) => {
    const d = fake.stored<Obj & DaemonSet>(GVR.daemonSets, 'ns', 'agent')!;
    f(d);
    await fake.resource<Obj & DaemonSet>(GVR.daemonSets).namespace('ns').update(d);
  };
  const updateNode = async (name: string, f: (n: Obj & Node) => void) => {
    const n = fake.stored<Obj & Node>(GVR.nodes, '', name)!;
    f(n);
    await fake.resource<Obj & Node>(GVR.nodes).update(n);
  };
  return { clock, fake, recorder, controller, ds: ds!, sync, settle, pods, podNodes, status, setPhase, allReady, updateDs, updateNode };
}

const image = (p: Pod) => p.spec?.containers[0]?.image;

describe('daemonset controller: placement', () => {
  it('creates one pod per node, bound by a metadata.name affinity term, with default tolerations and labels', async () => {
    const t = await setup();
    await t.sync();
    assert.deepEqual(t.podNodes(), ['n1', 'n2', 'n3']);
    const pod = t.pods()[0]!;
    assert.match(pod.metadata!.name!, /^agent-[a-z0-9]{5}$/);
    const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    assert.equal(terms?.length, 1);
    assert.deepEqual(terms?.[0]?.matchFields?.[0]?.key, 'metadata.name');
    const keys = (pod.spec?.tolerations ?? []).map((x) => `${x.key}:${x.effect}`).sort();
    assert.deepEqual(keys, [
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    assert.equal(pod.metadata?.labels?.['pod-template-generation'], '1');
    const hash = pod.metadata?.labels?.['controller-revision-hash'];
    const revs = t.fake.storedList<Obj & { revision?: number }>(GVR.controllerRevisions, 'ns');
    assert.deepEqual(revs.map((r) => [r.metadata?.name, r.revision]), [[`agent-${hash}`, 1]]);
    assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, t.ds.metadata?.uid);
    await t.sync();
    assert.equal(t.pods().length, 3, 'a second sync creates nothing more');
    assert.equal(t.status().desiredNumberScheduled, 3);
    assert.equal(t.status().currentNumberScheduled, 3);
    assert.equal(t.status().numberReady, 0);
    assert.equal(t.status().numberUnavailable, 3);
    await t.allReady();
    await t.sync();
    assert.equal(t.status().numberReady, 3);
    assert.equal(t.status().numberAvailable, 3);
    assert.equal(t.status().updatedNumberScheduled, 3);
    assert.equal(t.status().observedGeneration, 1);
  });

  it('honours nodeSelector and follows node label changes', async () => {
    const t = await setup({ template: { metadata: { labels: { app: 'agent' } }, spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: 'agent:1' }] } } }, [
      node('n1', { disk: 'ssd' }),
      node('n2'),
    ]);
    await t.sync();
    assert.deepEqual(t.podNodes(), ['n1']);
    await t.updateNode('n2', (n) => (n.metadata!.labels = { disk: 'ssd' }));
    await t.sync();
    assert.deepEqual(t.podNodes(), ['n1', 'n2']);
    await t.updateNode('n1', (n) => (n.metadata!.labels = {}));
    await t.sync();
    assert.deepEqual(t.podNodes(), ['n2']);
    assert.equal(t.status().desiredNumberScheduled, 1);
  });

  it('skips nodes with untolerated NoSchedule taints but tolerates the default ones; NoExecute evicts', async () => {
    const t = await setup({}, [
      node('plain'),
      node('cordoned', {}, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]),
      node('dedicated', {}, [{ key: 'team', value: 'x', effect: 'NoSchedule' }]),
    ]);
    await t.sync();
    assert.deepEqual(t.podNodes(), ['cordoned', 'plain']);
    // NoSchedule added later: the pod stays (shouldContinueRunning) but is misscheduled.
    await t.updateNode('plain', (n) => (n.spec = { taints: [{ key: 'team', value: 'x', effect: 'NoSchedule' }] }));
    await t.sync();
    assert.deepEqual(t.podNodes(), ['cordoned', 'plain']);
    assert.equal(t.status().numberMisscheduled, 1);
    await t.updateNode('plain', (n) => (n.spec = { taints: [{ key: 'team', value: 'x', effect: 'NoExecute' }] }));
    await t.sync();
    assert.deepEqual(t.podNodes(), ['cordoned']);
  });

  it('creates a pod for an added node and deletes unscheduled pods of a removed node', async () => {
    const t = await setup({}, [node('n1')]);
    await t.sync();
    t.fake.seed(GVR.nodes, node('n2'));
    await t.sync();
    assert.deepEqual(t.podNodes(), ['n1', 'n2']);
  });

  it('replaces a failed pod with backoff between attempts', async () => {
    const t = await setup({}, [node('n1')]);
    await t.sync();
    const failed = t.pods()[0]!.metadata!.name!;
    await t.setPhase(t.pods()[0]!, 'Failed', false);
    await t.sync();
    assert.equal(t.pods().length, 0);
    assert.ok(t.recorder.events.includes(`Warning FailedDaemonPod Found failed daemon pod ns/${failed} on node n1, will try to kill it`));
    await t.sync();
    assert.equal(t.pods().length, 1, 'replacement created');
    await t.setPhase(t.pods()[0]!, 'Failed', false);
    await t.sync();
    assert.equal(t.pods().length, 1, 'second failure within 1 s backoff: the failed pod is kept for now');
    await t.clock.advance(1_500);
    await t.sync();
    assert.equal(t.pods().length, 0, 'after the backoff the failed pod is deleted');
  });
});

describe('daemonset controller: updates', () => {
  async function running(spec: Partial<DaemonSet['spec']> = {}) {
    const t = await setup(spec);
    await t.sync();
    await t.allReady();
    await t.sync();
    return t;
  }
  const bump = (img: string) => (d: Obj & DaemonSet) => {
    d.spec!.template!.spec!.containers[0]!.image = img;
  };

  it('rolls out with maxUnavailable 1: one node at a time', async () => {
    const t = await running();
    await t.updateDs(bump('agent:2'));
    await t.sync();
    assert.equal(t.pods().length, 2, 'one old pod deleted');
    await t.sync();
    assert.equal(t.pods().length, 3, 'replacement created');
    assert.equal(t.pods().filter((p) => image(p) === 'agent:2').length, 1);
    await t.sync();
    assert.equal(t.pods().length, 3, 'waits for the new pod to become available');
    for (let i = 0; i < 6; i++) {
      await t.allReady();
      await t.sync();
    }
    assert.deepEqual(t.pods().map(image), ['agent:2', 'agent:2', 'agent:2']);
    assert.equal(t.status().updatedNumberScheduled, 3);
    assert.equal(t.fake.storedList(GVR.controllerRevisions, 'ns').length, 2);
  });

  it('surges a new pod before deleting the old one with maxSurge', async () => {
    const t = await running({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    await t.updateDs(bump('agent:2'));
    await t.sync();
    assert.equal(t.pods().length, 4, 'one new pod next to the old one');
    await t.allReady();
    await t.sync();
    assert.equal(t.pods().length, 3, 'old pod deleted once the new one is available');
  });

  it('does not touch pods under OnDelete', async () => {
    const t = await running({ updateStrategy: { type: 'OnDelete' } });
    await t.updateDs(bump('agent:2'));
    await t.sync();
    await t.sync();
    assert.deepEqual(t.pods().map(image), ['agent:1', 'agent:1', 'agent:1']);
    await t.fake.resource(GVR.pods).namespace('ns').delete(t.pods()[0]!.metadata!.name!);
    await t.sync();
    assert.deepEqual(t.pods().map(image).sort(), ['agent:1', 'agent:1', 'agent:2']);
  });

  it('rolls back by reusing the old revision without restarting pods already at it', async () => {
    const t = await running({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } });
    const first = t.fake.storedList<Obj & { revision?: number }>(GVR.controllerRevisions, 'ns')[0]!;
    await t.updateDs(bump('agent:2'));
    await t.sync();
    await t.sync();
    await t.allReady();
    const untouched = t.pods().filter((p) => image(p) === 'agent:1').map((p) => p.metadata?.uid).sort();
    assert.equal(untouched.length, 2);
    await t.updateDs(bump('agent:1'));
    await t.sync();
    const rev = t.fake.stored<Obj & { revision?: number }>(GVR.controllerRevisions, 'ns', first.metadata!.name!)!;
    assert.equal(rev.revision, 3, 'the old revision moved to the top');
    for (let i = 0; i < 4; i++) {
      await t.allReady();
      await t.sync();
    }
    assert.deepEqual(t.pods().map(image), ['agent:1', 'agent:1', 'agent:1']);
    const kept = t.pods().map((p) => p.metadata?.uid);
    for (const uid of untouched) assert.ok(kept.includes(uid), 'pods at the target revision were not restarted');
  });
});

describe('daemonset controller: selector', () => {
  it('refuses an empty selector with a SelectingAll event', async () => {
    const t = await setup({ selector: {} });
    await t.sync();
    assert.equal(t.pods().length, 0);
    assert.ok(t.recorder.events.includes('Warning SelectingAll This daemon set is selecting all pods. A non-empty selector is required.'));
  });
});
