import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node as CoreNode, PersistentVolume, PersistentVolumeClaim, Pod as CorePod, Taint } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../api/types.js';
import { GVR } from '../api/gvr.js';
import { newFakeClient, type FakeClient } from '../controller/testing/fake-client.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { newFakeRecorder, type FakeEventRecorder } from '../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { newLogger, setLogOutput } from '../util/log/logger.js';
import { seededRandom } from './random.js';
import { claimVolumes, makeClaim, makeStorageClass, makeVolume } from './testing.js';
import { Registry } from 'prom-client';
import { newScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';
import { parseSchedulerConfiguration } from './config.js';

type Node = CoreNode & KubeObject;
type Pod = CorePod & KubeObject;

function node(name: string, opts: { cpu?: string; memory?: string; pods?: string; labels?: Record<string, string>; taints?: Taint[] } = {}): Node {
  const alloc = { cpu: opts.cpu ?? '4', memory: opts.memory ?? '8Gi', pods: opts.pods ?? '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) } },
    spec: opts.taints ? { taints: opts.taints } : {},
    status: { allocatable: alloc, capacity: alloc },
  };
}

function pod(name: string, opts: { cpu?: string; labels?: Record<string, string>; nodeName?: string; spec?: Partial<CorePod['spec']> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: opts.labels ?? {} },
    spec: {
      schedulerName: 'default-scheduler',
      ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
      containers: [{ name: 'c', image: 'nginx', resources: opts.cpu ? { requests: { cpu: opts.cpu } } : {} }],
      ...(opts.spec ?? {}),
    },
    status: { phase: 'Pending' },
  };
}

async function settle(rounds = 50): Promise<void> {
  for (let i = 0; i < rounds; i++) await flushMicrotasks();
}

interface Env {
  fake: FakeClient;
  clock: FakeClock;
  recorder: FakeEventRecorder;
  sched: Scheduler;
  stop(): Promise<void>;
}

async function start(seed: (f: FakeClient) => void, opts: Partial<SchedulerOptions> = {}): Promise<Env & { registry: Registry }> {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  seed(fake);
  const informers = newSharedInformerFactory(fake, { clock });
  const recorder = newFakeRecorder();
  const registry = new Registry();
  const sched = newScheduler({ client: fake, informers, clock, recorder, random: seededRandom(7), logger: newLogger('test-scheduler'), registry, ...opts });
  const ac = new AbortController();
  const done = sched.run(ac.signal);
  for (let i = 0; i < 200 && !sched.healthy(); i++) await clock.advance(100);
  assert.ok(sched.healthy(), 'scheduler started');
  await settle();
  return {
    fake,
    clock,
    recorder,
    sched,
    registry,
    async stop() {
      ac.abort();
      await done;
      await informers.shutdown();
    },
  };
}

function boundNode(fake: FakeClient, name: string): string | undefined {
  return fake.stored<Pod>(GVR.pods, 'default', name)?.spec?.nodeName;
}

describe('default scheduler', () => {
  before(() => setLogOutput(() => {}));

  it('binds a pod to the least loaded node and records Scheduled', async () => {
    const env = await start((f) => {
      f.seed(GVR.nodes, node('busy'), node('idle'));
      f.seed(GVR.pods, pod('existing', { cpu: '3', nodeName: 'busy' }));
    });
    env.fake.seed(GVR.pods, pod('web', { cpu: '500m' }));
    await settle();
    await env.sched.waitForBindings();
    await settle();
    assert.equal(boundNode(env.fake, 'web'), 'idle');
    assert.ok(env.recorder.events.includes('Normal Scheduled Successfully assigned default/web to idle'), env.recorder.events.join('\n'));
    const binding = env.fake.actions().find((a) => a.subresource === 'binding');
    assert.equal((binding?.object as { target?: { name?: string } })?.target?.name, 'idle');
    await env.stop();
  });

  it('spreads the pods of a ReplicaSet or a Service over nodes (default topology spread through their selectors), however roomy the busier node', async () => {
    const place = async (owner: 'none' | 'replicaset' | 'service') => {
      const env = await start((f) => {
        f.seed(GVR.nodes, node('roomy', { cpu: '64', memory: '256Gi' }), node('small'));
        f.seed(GVR.pods, pod('w1', { labels: { app: 'web' }, nodeName: 'roomy' }), pod('w2', { labels: { app: 'web' }, nodeName: 'roomy' }));
        f.seed(GVR.replicaSets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'other', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'other' } }, template: {} } } as KubeObject);
        if (owner === 'replicaset') f.seed(GVR.replicaSets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template: {} } } as KubeObject);
        if (owner === 'service') f.seed(GVR.services, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' } } } as KubeObject);
      });
      try {
        env.fake.seed(GVR.pods, pod('w3', { labels: { app: 'web' } }));
        await settle();
        await env.sched.waitForBindings();
        await settle();
        return boundNode(env.fake, 'w3');
      } finally {
        await env.stop();
      }
    };
    assert.equal(await place('none'), 'roomy', 'without an owner only the free resources count');
    assert.equal(await place('replicaset'), 'small');
    assert.equal(await place('service'), 'small');
  });

  it('reports FailedScheduling with upstream wording, sets PodScheduled=False, and binds once a node is added', async () => {
    const env = await start((f) => {
      f.seed(
        GVR.nodes,
        node('a', { cpu: '1' }),
        node('b', { cpu: '1' }),
        node('c', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] }),
      );
    });
    env.fake.seed(GVR.pods, pod('big', { cpu: '2' }));
    await settle();
    const msg =
      '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 2 Insufficient cpu. ' +
      'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..';
    assert.deepEqual(env.recorder.events, [`Warning FailedScheduling ${msg}`]);
    await settle();
    const stored = env.fake.stored<Pod>(GVR.pods, 'default', 'big');
    const cond = stored?.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'Unschedulable');
    assert.equal(cond?.message, msg);
    assert.equal(env.sched.queue.counts().unschedulable, 1);

    env.fake.seed(GVR.nodes, node('large', { cpu: '8' }));
    await settle();
    // The pod is still backing off from its first attempt; a backoff flush (every second) moves it.
    for (let i = 0; i < 3 && !boundNode(env.fake, 'big'); i++) {
      await env.clock.advance(1_000);
      await settle();
      await env.sched.waitForBindings();
    }
    await settle();
    await env.sched.waitForBindings();
    await settle();
    assert.equal(boundNode(env.fake, 'big'), 'large');
    await env.stop();
  });

  it('retries an unschedulable pod after five minutes even without cluster events', async () => {
    const env = await start((f) => f.seed(GVR.nodes, node('a', { cpu: '1' })));
    env.fake.seed(GVR.pods, pod('big', { cpu: '2' }));
    await settle();
    assert.equal(env.recorder.events.length, 1);
    await env.clock.advance(4 * 60_000);
    await settle();
    assert.equal(env.recorder.events.length, 1, 'no retry before 5 minutes');
    await env.clock.advance(2 * 60_000);
    await settle();
    assert.equal(env.recorder.events.length, 2, 'retried after 5 minutes');
    await env.stop();
  });

  it('spreads pods with required anti-affinity one per node and leaves the extra one pending', async () => {
    const env = await start((f) => f.seed(GVR.nodes, node('n1'), node('n2'), node('n3')));
    const anti = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }],
        },
      },
    };
    for (let i = 0; i < 4; i++) env.fake.seed(GVR.pods, pod(`web-${i}`, { labels: { app: 'web' }, spec: anti }));
    await settle(200);
    await env.sched.waitForBindings();
    await settle();
    const nodes = [0, 1, 2, 3].map((i) => boundNode(env.fake, `web-${i}`)).filter((n) => n !== undefined);
    assert.equal(nodes.length, 3);
    assert.deepEqual([...new Set(nodes)].sort(), ['n1', 'n2', 'n3']);
    assert.ok(
      env.recorder.events.some((e) => e.startsWith("Warning FailedScheduling 0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.")),
      env.recorder.events.join('\n'),
    );
    await env.stop();
  });

  it('keeps zones within maxSkew for DoNotSchedule topology spread', async () => {
    const env = await start((f) =>
      f.seed(
        GVR.nodes,
        node('a1', { labels: { 'topology.kubernetes.io/zone': 'a' } }),
        node('a2', { labels: { 'topology.kubernetes.io/zone': 'a' } }),
        node('b1', { labels: { 'topology.kubernetes.io/zone': 'b' } }),
      ),
    );
    const spread = {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'db' } } },
      ],
    };
    for (let i = 0; i < 6; i++) env.fake.seed(GVR.pods, pod(`db-${i}`, { labels: { app: 'db' }, spec: spread }));
    await settle(300);
    await env.sched.waitForBindings();
    await settle();
    const zones = { a: 0, b: 0 };
    for (let i = 0; i < 6; i++) {
      const n = boundNode(env.fake, `db-${i}`);
      assert.ok(n, `db-${i} bound`);
      zones[n.startsWith('a') ? 'a' : 'b']++;
    }
    assert.deepEqual(zones, { a: 3, b: 3 });
    await env.stop();
  });

  it('counts assumed pods so a burst of pods never over-commits a node', async () => {
    const env = await start((f) => f.seed(GVR.nodes, node('only', { cpu: '2' })));
    for (let i = 0; i < 5; i++) env.fake.seed(GVR.pods, pod(`p-${i}`, { cpu: '1' }));
    await settle(200);
    await env.sched.waitForBindings();
    await settle();
    const bound = [0, 1, 2, 3, 4].filter((i) => boundNode(env.fake, `p-${i}`) === 'only');
    assert.equal(bound.length, 2);
    const failed = env.recorder.events.filter((e) => e.startsWith('Warning FailedScheduling'));
    assert.equal(failed.length, 3);
    for (const f of failed) assert.match(f, /0\/1 nodes are available: 1 Insufficient cpu\./);
    await env.stop();
  });

  it('ignores pods for other schedulers, gated pods and pods already assigned', async () => {
    const env = await start((f) => f.seed(GVR.nodes, node('n1')));
    env.fake.seed(
      GVR.pods,
      pod('other', { spec: { schedulerName: 'my-scheduler' } }),
      pod('gated', { spec: { schedulingGates: [{ name: 'wait' }] } }),
    );
    await settle();
    await env.sched.waitForBindings();
    assert.equal(boundNode(env.fake, 'other'), undefined);
    assert.equal(boundNode(env.fake, 'gated'), undefined);
    assert.equal(env.fake.actions().filter((a) => a.subresource === 'binding').length, 0);
    await env.stop();
  });

  describe('volumes', () => {
    const claimObj = (c: PersistentVolumeClaim) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...c }) as PersistentVolumeClaim & KubeObject;
    const volumeObj = (v: PersistentVolume) => ({ apiVersion: 'v1', kind: 'PersistentVolume', ...v }) as PersistentVolume & KubeObject;
    const classObj = (name: string, mode: 'Immediate' | 'WaitForFirstConsumer') => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', ...makeStorageClass(name, { mode }) }) as KubeObject;
    const storedClaim = (fake: FakeClient, name: string) => fake.stored<PersistentVolumeClaim & KubeObject>(GVR.persistentVolumeClaims, 'default', name);

    it('keeps a pod with an unbound Immediate claim pending, and binds it once the claim is bound', async () => {
      const env = await start((f) => {
        f.seed(GVR.nodes, node('n1'));
        f.seed(GVR.storageClasses, classObj('standard', 'Immediate'));
        f.seed(GVR.persistentVolumeClaims, claimObj(makeClaim('data', { class: 'standard' })));
      });
      env.fake.seed(GVR.pods, pod('web', { spec: { volumes: claimVolumes('data') } }));
      await settle();
      const msg =
        '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..';
      assert.deepEqual(env.recorder.events, [`Warning FailedScheduling ${msg}`]);
      await settle();
      assert.equal(env.fake.stored<Pod>(GVR.pods, 'default', 'web')?.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message, msg);
      assert.equal(boundNode(env.fake, 'web'), undefined);

      // The PersistentVolume controller binds the claim: the claim update retries the pod.
      const c = storedClaim(env.fake, 'data')!;
      env.fake.seed(GVR.persistentVolumes, volumeObj(makeVolume('pv-1', { class: 'standard', claim: c })));
      await env.fake
        .resource(GVR.persistentVolumeClaims)
        .namespace('default')
        .update({ ...c, metadata: { ...c.metadata, annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }, spec: { ...c.spec, volumeName: 'pv-1' } });
      for (let i = 0; i < 3 && !boundNode(env.fake, 'web'); i++) {
        await env.clock.advance(1_000);
        await settle();
        await env.sched.waitForBindings();
      }
      assert.equal(boundNode(env.fake, 'web'), 'n1');
      await env.stop();
    });

    it('sends a pod whose claim is bound to a local volume to that node', async () => {
      const env = await start((f) => {
        f.seed(GVR.nodes, node('n1'), node('n2'), node('n3'));
        const c = claimObj(makeClaim('data', { volume: 'local-n3' }));
        f.seed(GVR.persistentVolumeClaims, c);
        f.seed(GVR.persistentVolumes, volumeObj(makeVolume('local-n3', { hosts: ['n3'], claim: storedClaim(f, 'data') })));
      });
      env.fake.seed(GVR.pods, pod('db', { spec: { volumes: claimVolumes('data') } }));
      await settle();
      await env.sched.waitForBindings();
      await settle();
      assert.equal(boundNode(env.fake, 'db'), 'n3');
      await env.stop();
    });

    it('selects a node for a WaitForFirstConsumer claim and binds the pod once the claim is provisioned and bound', async () => {
      const env = await start((f) => {
        f.seed(GVR.nodes, node('n1'));
        f.seed(GVR.storageClasses, classObj('wffc', 'WaitForFirstConsumer'));
        f.seed(GVR.persistentVolumeClaims, claimObj(makeClaim('data', { class: 'wffc' })));
      });
      env.fake.seed(GVR.pods, pod('web', { spec: { volumes: claimVolumes('data') } }));
      await settle();
      const c = storedClaim(env.fake, 'data')!;
      assert.equal(c.metadata?.annotations?.['volume.kubernetes.io/selected-node'], 'n1');
      assert.equal(boundNode(env.fake, 'web'), undefined, 'waits for the claim');
      await env.clock.advance(1_000);
      await settle();
      assert.equal(boundNode(env.fake, 'web'), undefined, 'still waits for the claim');

      // The provisioner creates the volume; the PersistentVolume controller binds both.
      env.fake.seed(GVR.persistentVolumes, volumeObj(makeVolume('pvc-123', { class: 'wffc', claim: c })));
      await env.fake
        .resource(GVR.persistentVolumeClaims)
        .namespace('default')
        .update({ ...c, metadata: { ...c.metadata, annotations: { ...c.metadata?.annotations, 'pv.kubernetes.io/bind-completed': 'yes' } }, spec: { ...c.spec, volumeName: 'pvc-123' } });
      await settle();
      await env.clock.advance(1_000);
      await settle();
      await env.sched.waitForBindings();
      await settle();
      assert.equal(boundNode(env.fake, 'web'), 'n1');
      await env.stop();
    });

    it('reports a failed provisioning as a SchedulerError and selects a node again after the backoff', async () => {
      const env = await start((f) => {
        f.seed(GVR.nodes, node('n1'));
        f.seed(GVR.storageClasses, classObj('wffc', 'WaitForFirstConsumer'));
        f.seed(GVR.persistentVolumeClaims, claimObj(makeClaim('data', { class: 'wffc' })));
      });
      env.fake.seed(GVR.pods, pod('web', { spec: { volumes: claimVolumes('data') } }));
      await settle();
      const c = storedClaim(env.fake, 'data')!;
      assert.equal(c.metadata?.annotations?.['volume.kubernetes.io/selected-node'], 'n1');
      // The provisioner gives up on n1: it removes the annotation but keeps the others.
      await env.fake
        .resource(GVR.persistentVolumeClaims)
        .namespace('default')
        .update({ ...c, metadata: { ...c.metadata, annotations: { 'volume.kubernetes.io/storage-provisioner': 'example.com/csi' } } });
      await settle();
      await env.clock.advance(1_000);
      await settle();
      const msg = 'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "data"';
      assert.ok(env.recorder.events.includes(`Warning FailedScheduling ${msg}`), env.recorder.events.join('\n'));
      const cond = env.fake.stored<Pod>(GVR.pods, 'default', 'web')?.status?.conditions?.find((x) => x.type === 'PodScheduled');
      assert.equal(cond?.reason, 'SchedulerError');
      assert.equal(cond?.message, msg);
      assert.equal(boundNode(env.fake, 'web'), undefined);
      // Retried after the backoff: the node is selected again.
      for (let i = 0; i < 3 && !storedClaim(env.fake, 'data')?.metadata?.annotations?.['volume.kubernetes.io/selected-node']; i++) {
        await env.clock.advance(1_000);
        await settle();
      }
      assert.equal(storedClaim(env.fake, 'data')?.metadata?.annotations?.['volume.kubernetes.io/selected-node'], 'n1');
      await env.stop();
    });
  });

  it('preempts lower-priority pods for a high-priority pod, nominates the node, and binds once they are gone', async () => {
    const env = await start((f) => {
      f.seed(GVR.nodes, node('a', { cpu: '2' }), node('b', { cpu: '2' }));
      f.seed(
        GVR.pods,
        pod('low-a', { cpu: '2', nodeName: 'a', spec: { priority: 1 } }),
        pod('mid-b', { cpu: '2', nodeName: 'b', spec: { priority: 50 } }),
      );
    });
    env.fake.seed(GVR.pods, pod('high', { cpu: '2', spec: { priority: 1000 } }));
    await settle();
    await env.sched.waitForBindings();
    await settle();
    // The lowest-priority victim is chosen: low-a on node a; it got DisruptionTarget before its deletion.
    assert.equal(env.fake.stored<Pod>(GVR.pods, 'default', 'low-a'), undefined);
    assert.ok(env.fake.stored<Pod>(GVR.pods, 'default', 'mid-b'));
    const patch = env.fake.actions().find((a) => a.verb === 'patch' && a.name === 'low-a' && a.subresource === 'status');
    assert.match(JSON.stringify(patch?.patch), /"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler","message":"default-scheduler: preempting to accommodate a higher priority pod"/);
    const highUid = env.fake.stored<Pod>(GVR.pods, 'default', 'high')?.metadata?.uid;
    assert.ok(env.recorder.events.includes(`Normal Preempted Preempted by pod ${highUid} on node a`), env.recorder.events.join('\n'));
    assert.ok(env.recorder.events.includes('Warning FailedScheduling 0/2 nodes are available: 2 Insufficient cpu.'), env.recorder.events.join('\n'));
    // The deletion moved the preemptor back; it binds to its nominated node.
    for (let i = 0; i < 20 && !boundNode(env.fake, 'high'); i++) {
      await env.clock.advance(1000);
      await settle();
      await env.sched.waitForBindings();
    }
    assert.equal(boundNode(env.fake, 'high'), 'a');
    const nominated = env.fake.actions().find((a) => a.verb === 'patch' && a.name === 'high' && JSON.stringify(a.patch).includes('nominatedNodeName'));
    assert.match(JSON.stringify(nominated?.patch), /"nominatedNodeName":"a"/);
    // A replacement for the victim (as its owner would create) stays Pending: it cannot preempt anyone.
    env.fake.seed(GVR.pods, pod('low-a2', { cpu: '2', spec: { priority: 1 } }));
    await settle();
    await env.clock.advance(2000);
    await settle();
    assert.equal(boundNode(env.fake, 'low-a2'), undefined);
    const metrics = await env.registry.metrics();
    assert.match(metrics, /scheduler_preemption_attempts_total \d+/);
    assert.match(metrics, /scheduler_preemption_victims_sum 1/);
    assert.match(metrics, /scheduler_schedule_attempts_total\{profile="default-scheduler",result="scheduled"\} 1/);
    assert.match(metrics, /scheduler_schedule_attempts_total\{profile="default-scheduler",result="unschedulable"\} [1-9]/);
    assert.match(metrics, /scheduler_pending_pods\{queue="unschedulable"\} 1/);
    await env.stop();
  });

  it('keeps a freed node for the nominated pod: a lower-priority pod arriving meanwhile does not take it', async () => {
    const env = await start((f) => {
      f.seed(GVR.nodes, node('a', { cpu: '2' }));
      f.seed(GVR.pods, { ...pod('waiting', { cpu: '2', spec: { priority: 1000 } }), status: { phase: 'Pending', nominatedNodeName: 'a' } });
    });
    // 'waiting' binds at once (the node is empty); a second pod of lower priority then finds no room.
    await settle();
    await env.sched.waitForBindings();
    assert.equal(boundNode(env.fake, 'waiting'), 'a');
    await env.stop();
    // With the nominated pod not yet placed (a victim still there), the lower one is kept out by the nomination.
    const env2 = await start((f) => {
      f.seed(GVR.nodes, node('a', { cpu: '4' }));
      f.seed(GVR.pods, pod('victim', { cpu: '2', nodeName: 'a', spec: { priority: 1 } }));
    });
    env2.sched.nominator.add({ ...pod('nominated', { cpu: '2', spec: { priority: 1000 } }), metadata: { name: 'nominated', namespace: 'default', uid: 'u-nom' } }, 'a');
    env2.fake.seed(GVR.pods, pod('sneaky', { cpu: '2', spec: { priority: 10, preemptionPolicy: 'Never' } }));
    await settle();
    await env2.sched.waitForBindings();
    assert.equal(boundNode(env2.fake, 'sneaky'), undefined);
    assert.ok(env2.recorder.events.some((e) => e.startsWith('Warning FailedScheduling 0/1 nodes are available: 1 Insufficient cpu.')), env2.recorder.events.join('\n'));
    await env2.stop();
  });

  it('gives the event loop a turn between scheduling cycles, so a full queue does not hold everything else back', async () => {
    const env = await start((f) => f.seed(GVR.nodes, node('n', { pods: '100' })));
    env.fake.seed(GVR.pods, ...Array.from({ length: 8 }, (_, i) => pod(`p${i}`)));
    const bindings = () => env.fake.actions().filter((a) => a.subresource === 'binding').length;
    const perTurn: number[] = [];
    for (let turn = 0, before = 0; turn < 60 && before < 8; turn++) {
      await flushMicrotasks();
      const now = bindings();
      if (now > before) perTurn.push(now - before);
      before = now;
    }
    assert.equal(perTurn.reduce((a, b) => a + b, 0), 8, 'every pod is bound');
    assert.ok(Math.max(...perTurn) <= 2, `at most a cycle or two per turn of the event loop, got ${perTurn.join(',')}`);
    await env.sched.waitForBindings();
    await env.stop();
  });

  it('serves several profiles: each schedulerName with its own plugins and events; other names are left alone', async () => {
    const config = parseSchedulerConfiguration(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
`);
    const byProfile = new Map<string, FakeEventRecorder>();
    const recorderFor = (name: string) => {
      const r = newFakeRecorder();
      byProfile.set(name, r);
      return r;
    };
    const env = await start(
      (f) => {
        f.seed(GVR.nodes, node('busy'), node('idle'));
        f.seed(GVR.pods, pod('existing', { cpu: '3', nodeName: 'busy' }));
      },
      { profiles: config.profiles, recorderFor },
    );
    assert.deepEqual(env.sched.profileNames, ['default-scheduler', 'packer']);
    env.fake.seed(
      GVR.pods,
      pod('spread', { cpu: '500m' }),
      pod('packed', { cpu: '500m', spec: { schedulerName: 'packer' } }),
      pod('elsewhere', { cpu: '500m', spec: { schedulerName: 'someone-else' } }),
    );
    await settle();
    await env.sched.waitForBindings();
    await settle();
    assert.equal(boundNode(env.fake, 'spread'), 'idle');
    assert.equal(boundNode(env.fake, 'packed'), 'busy');
    assert.equal(boundNode(env.fake, 'elsewhere'), undefined);
    assert.deepEqual(byProfile.get('packer')!.events, ['Normal Scheduled Successfully assigned default/packed to busy']);
    assert.deepEqual(byProfile.get('default-scheduler')!.events, ['Normal Scheduled Successfully assigned default/spread to idle']);
    // A pod of a scheduler no profile serves is not even queued.
    assert.equal(env.sched.queue.counts().active + env.sched.queue.counts().unschedulable, 0);
    await env.stop();
  });
});
