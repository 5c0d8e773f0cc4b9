import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { Client } from '../client/interfaces.js';
import type { KubeObject } from '../api/types.js';
import { newFakeClient, type FakeClient } from '../controller/testing/index.js';
import { newFakeRecorder } from '../tools/record/index.js';
import { newSharedInformerFactory, type SharedInformerFactoryOptions } from '../tools/cache/index.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { setLogOutput } from '../util/log/logger.js';
import { newNodeSimulator, type NodeSimulatorOptions } from './node-simulator.js';
import { setHeartbeatPaused } from './pause.js';

setLogOutput(() => {});

/** `seed` stores objects before the simulator starts (as after a restart of kcm). */
/** `opts` may be made from the fake client (to wrap it). */
async function start(opts: Partial<NodeSimulatorOptions> | ((fake: FakeClient) => Partial<NodeSimulatorOptions>) = {}, informerOpts?: SharedInformerFactoryOptions, seed?: (fake: FakeClient, clock: FakeClock) => void) {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  seed?.(fake, clock);
  if (typeof opts === 'function') opts = opts(fake);
  const recorder = newFakeRecorder();
  const informers = informerOpts ? newSharedInformerFactory(fake, { clock, ...informerOpts }) : undefined;
  const sim = newNodeSimulator({ client: fake, clock, count: 2, recorderFor: () => recorder, probeJitter: false, ...(informers ? { informers } : {}), ...opts });
  const ac = new AbortController();
  const done = sim.run(ac.signal);
  const settle = async () => {
    for (let i = 0; i < 20; i++) {
      await clock.advance(0);
      await sim.whenIdle();
      await flushMicrotasks();
    }
  };
  await settle();
  const stop = async () => {
    ac.abort();
    await settle();
    await done;
    await informers?.shutdown();
  };
  return { clock, fake, recorder, sim, settle, stop, advance: async (ms: number) => {
    // Step in 100 ms slices so informer and timer work interleave as on a real clock.
    for (let t = 0; t < ms; t += 100) {
      await clock.advance(Math.min(100, ms - t));
      await settle();
    }
  } };
}

function lease(fake: FakeClient, name: string): Lease | undefined {
  return fake.stored<Lease & KubeObject>(GVR.leases, 'kube-node-lease', name);
}

function seedPod(fake: FakeClient, spec: Pod['spec'], name = 'p', extra: Partial<NonNullable<Pod['metadata']>> = {}): void {
  fake.seed<Pod & KubeObject>(GVR.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ...extra }, spec });
}

function storedPod(fake: FakeClient, name = 'p'): Pod | undefined {
  return fake.stored<Pod & KubeObject>(GVR.pods, 'default', name);
}

describe('newNodeSimulator', () => {
  it('registers ready nodes with their labels, status and leases', async () => {
    const h = await start({ zones: ['zone-a', 'zone-b'], labels: { team: 'x' } });
    const nodes = h.fake.storedList<Node & KubeObject>(GVR.nodes);
    assert.deepEqual(nodes.map((n) => n.metadata!.name), ['kcm-node-0', 'kcm-node-1']);
    const n1 = nodes[1]!;
    assert.equal(n1.metadata!.labels!['kubernetes.io/hostname'], 'kcm-node-1');
    assert.equal(n1.metadata!.labels!['kubernetes.io/os'], 'linux');
    assert.equal(n1.metadata!.labels!['topology.kubernetes.io/zone'], 'zone-b');
    assert.equal(n1.metadata!.labels!.team, 'x');
    const ready = n1.status!.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.status, 'True');
    assert.equal(ready.reason, 'KubeletReady');
    assert.equal(ready.message, 'kubelet is posting ready status');
    assert.equal(n1.status!.conditions!.find((c) => c.type === 'MemoryPressure')!.reason, 'KubeletHasSufficientMemory');
    assert.equal(n1.status!.capacity!.cpu, '4');
    assert.equal(n1.status!.nodeInfo!.containerRuntimeVersion, 'kcm://0.1.0');
    assert.deepEqual(n1.status!.addresses, [{ type: 'InternalIP', address: '172.18.0.3' }, { type: 'Hostname', address: 'kcm-node-1' }]);
    const l = lease(h.fake, 'kcm-node-0')!;
    assert.equal(l.spec!.holderIdentity, 'kcm-node-0');
    assert.equal(l.spec!.leaseDurationSeconds, 40);
    assert.equal(l.metadata!.ownerReferences![0]!.uid, nodes[0]!.metadata!.uid);
    await h.stop();
  });

  it('records the kubelet start-up node events, and NodeReady again after the controller marked the node Unknown', async () => {
    const h = await start({ count: 1 });
    assert.deepEqual(h.recorder.events, [
      'Normal Starting Starting kubelet.',
      'Normal NodeHasSufficientMemory Node kcm-node-0 status is now: NodeHasSufficientMemory',
      'Normal NodeHasNoDiskPressure Node kcm-node-0 status is now: NodeHasNoDiskPressure',
      'Normal NodeHasSufficientPID Node kcm-node-0 status is now: NodeHasSufficientPID',
      'Normal NodeAllocatableEnforced Updated Node Allocatable limit across pods',
      'Normal NodeReady Node kcm-node-0 status is now: NodeReady',
    ]);
    assert.deepEqual(h.recorder.targets[0], { apiVersion: 'v1', kind: 'Node', name: 'kcm-node-0', uid: 'kcm-node-0', namespace: '' });
    h.recorder.clear();
    await h.advance(20_000);
    assert.deepEqual(h.recorder.events, [], 'no events while nothing changes');
    const node = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!;
    const unknown = node.status!.conditions!.map((c) => ({ ...c, status: 'Unknown', reason: 'NodeStatusUnknown' }));
    await h.fake.resource(GVR.nodes).patch('kcm-node-0', 'merge', { status: { conditions: unknown } }, { subresource: 'status' });
    await h.advance(10_000);
    assert.deepEqual(h.recorder.events, [
      'Normal NodeHasSufficientMemory Node kcm-node-0 status is now: NodeHasSufficientMemory',
      'Normal NodeHasNoDiskPressure Node kcm-node-0 status is now: NodeHasNoDiskPressure',
      'Normal NodeHasSufficientPID Node kcm-node-0 status is now: NodeHasSufficientPID',
      'Normal NodeReady Node kcm-node-0 status is now: NodeReady',
    ]);
    await h.stop();
  });

  it('renews each lease every 10 seconds', async () => {
    const h = await start();
    const t0 = Date.parse(lease(h.fake, 'kcm-node-0')!.spec!.renewTime!);
    await h.advance(9_900);
    assert.equal(Date.parse(lease(h.fake, 'kcm-node-0')!.spec!.renewTime!), t0);
    await h.advance(100);
    assert.equal(Date.parse(lease(h.fake, 'kcm-node-0')!.spec!.renewTime!), t0 + 10_000);
    await h.advance(10_000);
    assert.equal(Date.parse(lease(h.fake, 'kcm-node-0')!.spec!.renewTime!), t0 + 20_000);
    await h.stop();
  });

  it('renews leases and posts node status through the heartbeat client, events through the event client, pods through the other', async () => {
    const asked = { pods: new Set<string>(), heartbeat: new Set<string>(), events: new Set<string>() };
    const recording = (fake: FakeClient, seen: Set<string>): Client => ({
      resource: (gvr) => (seen.add(gvr.resource), fake.resource(gvr)),
      metadata: (gvr) => (seen.add(gvr.resource), fake.metadata(gvr)),
    });
    // No recorderFor: the default event broadcasters, on the event client.
    const h = await start((fake) => ({ client: recording(fake, asked.pods), heartbeatClient: recording(fake, asked.heartbeat), eventClient: recording(fake, asked.events), count: 1, recorderFor: undefined }));
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx' }] });
    await h.advance(11_000);
    assert.equal(storedPod(h.fake)!.status!.phase, 'Running');
    assert.ok(h.fake.actions().some((a) => a.verb === 'update' && a.resource === 'leases'), 'the lease was renewed');
    assert.deepEqual([...asked.heartbeat].sort(), ['leases', 'nodes']);
    assert.ok(asked.pods.has('pods') && !asked.pods.has('leases'), [...asked.pods].join());
    assert.ok(asked.events.has('events') && !asked.pods.has('events'), [...asked.events].join());
    await h.stop();
  });

  it('stops renewing a paused node and resumes at once when the annotation goes', async () => {
    const h = await start();
    await setHeartbeatPaused(h.fake, 'kcm-node-0', true);
    await h.settle();
    const before = lease(h.fake, 'kcm-node-0')!.spec!.renewTime;
    await h.advance(30_000);
    assert.equal(lease(h.fake, 'kcm-node-0')!.spec!.renewTime, before);
    // The other node keeps going.
    assert.notEqual(lease(h.fake, 'kcm-node-1')!.spec!.renewTime, before);
    await setHeartbeatPaused(h.fake, 'kcm-node-0', false);
    await h.settle();
    assert.equal(Date.parse(lease(h.fake, 'kcm-node-0')!.spec!.renewTime!), h.clock.now());
    await h.stop();
  });

  it('takes a pod from Pending to Running and Ready with an IP from the node podCIDR', async () => {
    const h = await start({ podStartDelayMs: 1_000 });
    await h.fake.resource(GVR.nodes).patch('kcm-node-0', 'merge', { spec: { podCIDR: '10.200.7.0/24' } });
    await h.settle();
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx' }] });
    await h.settle();
    let p = storedPod(h.fake)!;
    assert.equal(p.status!.phase, 'Pending');
    assert.equal(p.status!.containerStatuses![0]!.state!.waiting!.reason, 'ContainerCreating');
    assert.equal(p.status!.hostIP, '172.18.0.2');
    await h.advance(1_000);
    p = storedPod(h.fake)!;
    assert.equal(p.status!.phase, 'Running');
    assert.equal(p.status!.podIP, '10.200.7.2');
    assert.deepEqual(p.status!.podIPs, [{ ip: '10.200.7.2' }]);
    assert.equal(p.status!.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
    assert.equal(p.status!.conditions!.find((c) => c.type === 'PodScheduled')!.status, 'True');
    assert.ok(h.recorder.events.includes('Normal Started Started container web'));
    await h.stop();
  });

  it('uses the built-in pod range when the node has no podCIDR', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'kcm-node-1', containers: [{ name: 'web', image: 'nginx' }] });
    await h.settle();
    assert.equal(storedPod(h.fake)!.status!.podIP, '10.244.1.2');
    await h.stop();
  });

  it('adopts a pod it ran before a restart: same IP, container id, start time and restart count, no new events', async () => {
    const startedAt = new Date(Date.UTC(2024, 0, 1) - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const h = await start({}, undefined, (fake) => {
      seedPod(fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx' }] }, 'fresh');
      fake.seed<Pod & KubeObject>(GVR.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'old', namespace: 'default' },
        spec: { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], readinessProbe: { initialDelaySeconds: 5, httpGet: { port: 80 } } }] },
        status: {
          phase: 'Running',
          hostIP: '172.18.0.2',
          podIP: '10.244.0.2',
          podIPs: [{ ip: '10.244.0.2' }],
          containerStatuses: [{ name: 'web', image: 'docker.io/library/nginx:latest', imageID: '', ready: true, started: true, restartCount: 2, containerID: 'kcm://abc123', state: { running: { startedAt } }, lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt, finishedAt: startedAt } } }],
        },
      });
    });
    const old = storedPod(h.fake, 'old')!;
    assert.equal(old.status!.podIP, '10.244.0.2');
    const cs = old.status!.containerStatuses![0]!;
    assert.equal(cs.containerID, 'kcm://abc123');
    assert.equal(cs.restartCount, 2);
    assert.equal(cs.state!.running!.startedAt, startedAt);
    assert.equal(cs.lastState!.terminated!.exitCode, 1);
    assert.equal(cs.ready, true);
    assert.equal(old.status!.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
    // The new pod does not take the adopted pod's address, and is the only one started.
    assert.equal(storedPod(h.fake, 'fresh')!.status!.podIP, '10.244.0.3');
    assert.deepEqual(h.recorder.events.filter((e) => e.includes('Started')), ['Normal Started Started container web']);
    await h.stop();
  });

  it('does not run a pod bound to a node that is not one of its own', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'elsewhere', containers: [{ name: 'web', image: 'nginx' }] });
    await h.advance(1_000);
    assert.equal(storedPod(h.fake)!.status, undefined);
    await h.stop();
  });

  it('fails a pod whose command is "sleep 2; exit 1" after 2 seconds', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'kcm-node-0', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 2; exit 1'] }] });
    await h.settle();
    assert.equal(storedPod(h.fake)!.status!.phase, 'Running');
    await h.advance(1_900);
    assert.equal(storedPod(h.fake)!.status!.phase, 'Running');
    await h.advance(100);
    const p = storedPod(h.fake)!;
    assert.equal(p.status!.phase, 'Failed');
    assert.equal(p.status!.containerStatuses![0]!.state!.terminated!.exitCode, 1);
    await h.stop();
  });

  it('shows CrashLoopBackOff for a failing OnFailure pod', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'kcm-node-0', restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox', command: ['false'] }] });
    await h.settle();
    let cs = storedPod(h.fake)!.status!.containerStatuses![0]!;
    // The end shows as terminated (Error) until the next sync, a second later.
    assert.equal(cs.state!.terminated!.reason, 'Error');
    await h.advance(2_000);
    cs = storedPod(h.fake)!.status!.containerStatuses![0]!;
    assert.equal(cs.state!.waiting!.reason, 'CrashLoopBackOff');
    assert.equal(cs.restartCount, 1);
    await h.advance(10_000);
    cs = storedPod(h.fake)!.status!.containerStatuses![0]!;
    assert.equal(cs.restartCount, 2);
    assert.match(cs.state!.waiting!.message!, /^back-off 20s restarting failed container=c pod=p_default\(/);
    await h.stop();
  });

  it('reports ErrImagePull then ImagePullBackOff for an unpullable image', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'c', image: 'registry.invalid/app' }] });
    await h.settle();
    assert.equal(storedPod(h.fake)!.status!.containerStatuses![0]!.state!.waiting!.reason, 'ErrImagePull');
    await h.advance(1_000);
    const p = storedPod(h.fake)!;
    assert.equal(p.status!.phase, 'Pending');
    assert.equal(p.status!.containerStatuses![0]!.state!.waiting!.reason, 'ImagePullBackOff');
    assert.ok(h.recorder.events.some((e) => e.startsWith('Warning Failed Failed to pull image "registry.invalid/app"')));
    await h.stop();
  });

  it('deletes a terminating pod with grace 0 and its uid as precondition', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx' }] }, 'p', { finalizers: ['test/keep'] });
    await h.settle();
    const uid = storedPod(h.fake)!.metadata!.uid;
    h.fake.clearActions();
    await h.fake.resource(GVR.pods).namespace('default').delete('p');
    await h.settle();
    const deletes = h.fake.actions().filter((a) => a.verb === 'delete');
    assert.equal(deletes.length, 2);
    assert.deepEqual(deletes[1]!.deleteOptions, { gracePeriodSeconds: 0, preconditions: { uid } });
    const p = storedPod(h.fake)!;
    assert.equal(p.status!.containerStatuses![0]!.state!.terminated!.exitCode, 0);
    assert.ok(h.recorder.events.includes('Normal Killing Stopping container web'));
    await h.stop();
  });

  it('runs every pod of a burst larger than it starts in one turn (the rest wait in its queue)', async () => {
    const h = await start();
    for (let i = 0; i < 120; i++) seedPod(h.fake, { nodeName: `kcm-node-${i % 2}`, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '1000'] }] }, `p${i}`);
    await h.settle();
    for (let i = 0; i < 120; i++) assert.equal(storedPod(h.fake, `p${i}`)?.status?.phase, 'Running', `p${i}`);
    await h.stop();
  });

  it('takes the grace period to stop a pod with gracefulShutdown', async () => {
    // The fake client deletes with a zero grace period; the informer shows
    // the pod as an API server would after a default (graceful) delete.
    const graceful = (obj: unknown) => {
      const o = obj as Pod;
      if (o.kind !== 'Pod' || !o.metadata?.deletionTimestamp) return obj;
      return { ...o, metadata: { ...o.metadata, deletionGracePeriodSeconds: 5 } };
    };
    const h = await start({ gracefulShutdown: true }, { transform: graceful });
    seedPod(h.fake, { nodeName: 'kcm-node-0', terminationGracePeriodSeconds: 30, containers: [{ name: 's', image: 'busybox', command: ['sleep', '100'] }] }, 'p', {
      finalizers: ['test/keep'],
    });
    await h.settle();
    h.fake.clearActions();
    await h.fake.resource(GVR.pods).namespace('default').delete('p');
    await h.advance(4_900);
    assert.equal(h.fake.actions().filter((a) => a.verb === 'delete').length, 1);
    await h.advance(100);
    assert.equal(h.fake.actions().filter((a) => a.verb === 'delete').length, 2);
    assert.equal(storedPod(h.fake)!.status!.containerStatuses![0]!.state!.terminated!.exitCode, 137);
    await h.stop();
  });

  it('writes no status for probe runs that change nothing, and follows the probe.kcm.dev/fail annotation live', async () => {
    const h = await start();
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], readinessProbe: { httpGet: { port: 80 }, periodSeconds: 1, failureThreshold: 1 } }] });
    await h.settle();
    await h.advance(1_000);
    const ready = () => storedPod(h.fake)!.status!.conditions!.find((c) => c.type === 'Ready')!.status;
    assert.equal(ready(), 'True');
    h.fake.clearActions();
    await h.advance(10_000);
    assert.deepEqual(h.fake.actions().filter((a) => a.verb === 'patch'), [], 'ten probe runs, no status write');
    await h.fake.resource(GVR.pods).namespace('default').patch('p', 'merge', { metadata: { annotations: { 'probe.kcm.dev/fail': 'web=readiness' } } });
    await h.advance(1_100);
    assert.equal(ready(), 'False');
    assert.ok(h.recorder.events.includes('Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500'));
    await h.fake.resource(GVR.pods).namespace('default').patch('p', 'merge', { metadata: { annotations: { 'probe.kcm.dev/fail': null } } });
    await h.advance(1_100);
    assert.equal(ready(), 'True');
    await h.stop();
  });

  it("puts each probe's ticks where its drawn phase says, as the kubelet's worker after its random start delay", async () => {
    const draws = [0.5];
    const h = await start({ probeJitter: () => draws.shift() ?? 0 });
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], readinessProbe: { httpGet: { port: 80 }, periodSeconds: 10 } }] });
    await h.settle();
    const ready = () => storedPod(h.fake)!.status!.conditions!.find((c) => c.type === 'Ready')!.status;
    await h.advance(4_900);
    assert.equal(ready(), 'False', 'no probe before half a period');
    await h.advance(200);
    assert.equal(ready(), 'True', 'the first tick at half a period after admission');
    assert.deepEqual(draws, [], 'one draw for the one probe');
    await h.stop();
  });

  it('runs the preStop hook, then SIGTERM ends a server, and deletes the pod when it has stopped', async () => {
    const graceful = (obj: unknown) => {
      const o = obj as Pod;
      if (o.kind !== 'Pod' || !o.metadata?.deletionTimestamp) return obj;
      return { ...o, metadata: { ...o.metadata, deletionGracePeriodSeconds: 30 } };
    };
    const h = await start({ gracefulShutdown: true }, { transform: graceful });
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx', lifecycle: { preStop: { exec: { command: ['sleep', '3'] } } } }] }, 'p', { finalizers: ['test/keep'] });
    await h.settle();
    h.fake.clearActions();
    await h.fake.resource(GVR.pods).namespace('default').delete('p');
    await h.advance(2_900);
    assert.equal(h.fake.actions().filter((a) => a.verb === 'delete').length, 1, 'only the user\'s delete so far');
    assert.ok(storedPod(h.fake)!.status!.containerStatuses![0]!.state!.running);
    await h.advance(200);
    assert.equal(h.fake.actions().filter((a) => a.verb === 'delete').length, 2);
    const p = storedPod(h.fake)!;
    assert.equal(p.status!.containerStatuses![0]!.state!.terminated!.exitCode, 0);
    assert.equal(p.status!.phase, 'Succeeded');
    await h.stop();
  });

  it('registers a node again when it is deleted while running', async () => {
    const h = await start();
    const uid = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!.metadata!.uid;
    await h.fake.resource(GVR.nodes).delete('kcm-node-0');
    await h.settle();
    const again = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0');
    assert.ok(again);
    assert.notEqual(again.metadata!.uid, uid);
    assert.equal(again.status!.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
    await h.stop();
  });

  it('posts its status again at the next heartbeat when the server shows Ready Unknown', async () => {
    const h = await start();
    const node = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!;
    const conditions = node.status!.conditions!.map((c) =>
      c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' } : c,
    );
    await h.fake.resource(GVR.nodes).patch('kcm-node-0', 'merge', { status: { conditions } }, { subresource: 'status' });
    await h.settle();
    await h.advance(10_000);
    const ready = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!.status!.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.status, 'True');
    assert.equal(ready.reason, 'KubeletReady');
    assert.equal(Date.parse(ready.lastTransitionTime!), h.clock.now());
    await h.stop();
  });

  it('does not update pods on a paused node until it resumes', async () => {
    const h = await start();
    await setHeartbeatPaused(h.fake, 'kcm-node-0', true);
    await h.settle();
    seedPod(h.fake, { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx' }] });
    await h.advance(1_000);
    assert.equal(storedPod(h.fake)!.status, undefined);
    await setHeartbeatPaused(h.fake, 'kcm-node-0', false);
    await h.settle();
    assert.equal(storedPod(h.fake)!.status!.phase, 'Running');
    await h.stop();
  });

  it('evicts the pod using memory over its request once the node runs low, one per 10 s, with kubelet\'s status and event', async () => {
    const h = await start({ capacity: { cpu: '4', memory: '1Gi', pods: '110', 'ephemeral-storage': '100Gi' } });
    const spec = (memory: string) => ({ nodeName: 'kcm-node-0', containers: [{ name: 'app', image: 'nginx', resources: { requests: { memory } } }] });
    seedPod(h.fake, spec('64Mi'), 'hog', { annotations: { 'kcm.dev/usage': 'memory=700Mi' } });
    seedPod(h.fake, spec('64Mi'), 'quiet');
    await h.advance(1_000);
    assert.equal(storedPod(h.fake, 'hog')!.status!.phase, 'Running');
    // 256Mi for the system + 700Mi + 32Mi leaves less than 100Mi of 1Gi.
    await h.advance(10_000);
    const node = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!;
    assert.equal(node.status!.conditions!.find((c) => c.type === 'MemoryPressure')!.reason, 'KubeletHasInsufficientMemory');
    const hog = storedPod(h.fake, 'hog')!;
    assert.equal(hog.status!.phase, 'Failed');
    assert.equal(hog.status!.reason, 'Evicted');
    // The quiet pod's usage has noise seeded by its uid (new each run): what is left prints in canonical form, "31744Ki" or, when whole, "32Mi".
    assert.match(hog.status!.message!, /^The node was low on resource: memory\. Threshold quantity: 100Mi, available: \d+(?:Ki|Mi)\. Container app was using 700Mi, request is 64Mi, has larger consumption of memory\. $/);
    assert.deepEqual(
      hog.status!.conditions!.filter((c) => c.type === 'DisruptionTarget').map((c) => [c.status, c.reason]),
      [['True', 'TerminationByKubelet']],
    );
    assert.ok(hog.status!.containerStatuses![0]!.state!.terminated, 'its container was stopped');
    assert.ok(h.recorder.events.some((e) => e.startsWith('Warning Evicted The node was low on resource: memory.')));
    assert.equal(storedPod(h.fake, 'quiet')!.status!.phase, 'Running', 'one pod per round, and the pressure is gone');
    await h.advance(10_000);
    assert.equal(storedPod(h.fake, 'quiet')!.status!.phase, 'Running');
    const relieved = h.fake.stored<Node & KubeObject>(GVR.nodes, '', 'kcm-node-0')!;
    assert.equal(relieved.status!.conditions!.find((c) => c.type === 'MemoryPressure')!.status, 'False');
    await h.stop();
  });

  it('rejects a BestEffort pod on a node under memory pressure, and every pod under disk pressure', async () => {
    const h = await start();
    await h.fake.resource(GVR.nodes).patch('kcm-node-0', 'merge', { metadata: { annotations: { 'kcm.dev/pressure': 'memory' } } });
    await h.settle();
    const seedWithQos = (name: string, qosClass: string, spec: Pod['spec']) =>
      h.fake.seed<Pod & KubeObject>(GVR.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec, status: { qosClass } });
    seedWithQos('be', 'BestEffort', { nodeName: 'kcm-node-0', containers: [{ name: 'app', image: 'nginx' }] });
    seedWithQos('burst', 'Burstable', { nodeName: 'kcm-node-0', containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }] });
    await h.advance(1_000);
    const be = storedPod(h.fake, 'be')!;
    assert.deepEqual([be.status!.phase, be.status!.reason, be.status!.message], ['Failed', 'Evicted', 'Pod was rejected: The node had condition: [MemoryPressure]. ']);
    assert.equal(be.status!.containerStatuses, undefined);
    assert.equal(storedPod(h.fake, 'burst')!.status!.phase, 'Running');
    assert.ok(h.recorder.events.includes('Warning Evicted The node had condition: [MemoryPressure]. '));
    await h.fake.resource(GVR.nodes).patch('kcm-node-0', 'merge', { metadata: { annotations: { 'kcm.dev/pressure': 'disk' } } });
    await h.settle();
    seedWithQos('guaranteed', 'Guaranteed', { nodeName: 'kcm-node-0', containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } }] });
    await h.advance(1_000);
    assert.equal(storedPod(h.fake, 'guaranteed')!.status!.message, 'Pod was rejected: The node had condition: [DiskPressure]. ');
    // The forced disk pressure evicts the running pod at the next round, available reported as 0.
    await h.advance(10_000);
    const evicted = storedPod(h.fake, 'burst')!;
    assert.equal(evicted.status!.reason, 'Evicted');
    assert.match(evicted.status!.message!, /^The node was low on resource: ephemeral-storage\. Threshold quantity: 10Gi, available: 0\. $/);
    await h.stop();
  });

  it('rejects a pod whose host port is taken on its node, as kubelet\'s admission: Failed, NodePorts, an event', async () => {
    const h = await start();
    const spec = { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80, hostPort: 8080 }] }] };
    seedPod(h.fake, spec, 'first');
    await h.advance(1_000);
    assert.equal(storedPod(h.fake, 'first')!.status!.phase, 'Running');
    seedPod(h.fake, spec, 'second');
    await h.advance(1_000);
    const second = storedPod(h.fake, 'second')!;
    assert.deepEqual([second.status!.phase, second.status!.reason, second.status!.message], [
      'Failed',
      'NodePorts',
      "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    ]);
    assert.ok(h.recorder.events.includes("Warning NodePorts Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"));
    await h.stop();
  });
});
