import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node, NodeCondition, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { rfc3339, rfc3339Micro } from '../../util/clock/clock.js';
import { newLogger, setLogOutput } from '../../util/log/logger.js';
import { newTestContext, until, type TestContext } from '../garbagecollector/test-support.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { descriptor, newNodeLifecycleController, type NodeLifecycleController } from './nodelifecycle-controller.js';
import { markPodsNotReady } from './node-util.js';

const T0 = Date.UTC(2024, 0, 1);

function readyCond(status: string, at: number): NodeCondition {
  return { type: 'Ready', status, reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: rfc3339(at), lastTransitionTime: rfc3339(T0) };
}

function node(name: string, opts: { ready?: string; at?: number; taints?: Taint[]; conditions?: NodeCondition[]; unschedulable?: boolean; labels?: Record<string, string> } = {}): Kube<Node> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid: `uid-${name}`, creationTimestamp: rfc3339(T0), labels: opts.labels ?? {} },
    spec: { taints: opts.taints ?? [], ...(opts.unschedulable ? { unschedulable: true } : {}) },
    status: { conditions: opts.conditions ?? (opts.ready ? [readyCond(opts.ready, opts.at ?? T0)] : []) },
  } as Kube<Node>;
}

function lease(name: string, at: number): Kube<Lease> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'kube-node-lease' },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: rfc3339Micro(at) },
  } as Kube<Lease>;
}

function pod(name: string, nodeName: string): Kube<Pod> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { nodeName, containers: [{ name: 'c', image: 'i' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339(T0) }] },
  } as Kube<Pod>;
}

interface Env {
  t: TestContext;
  c: NodeLifecycleController;
  get(name: string): Promise<Kube<Node>>;
  /** Waits until the informer cache shows `pred` for node `name`. */
  cached(name: string, pred: (n: Kube<Node> | undefined) => boolean): Promise<void>;
  renewLease(name: string): Promise<void>;
}

async function setup(seed: (t: TestContext) => void): Promise<Env> {
  const t = newTestContext({
    options: {
      nodeMonitorPeriodMs: 5000,
      nodeMonitorGracePeriodMs: 50_000,
      nodeStartupGracePeriodMs: 60_000,
      nodeEvictionRate: 0.1,
      secondaryNodeEvictionRate: 0.01,
      unhealthyZoneThreshold: 0.55,
      largeClusterSizeThreshold: 50,
    },
  });
  seed(t);
  const c = newNodeLifecycleController(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  await until(() => c.hasSynced(), 'synced');
  const nodes = t.ctx.informers.nodes().getIndexer();
  return {
    t,
    c,
    get: (name) => t.fake.resource<Kube<Node>>(GVR.nodes).get(name),
    async cached(name, pred) {
      await until(() => pred(nodes.getByKey(name)), `cache of node ${name}`);
    },
    async renewLease(name) {
      const leases = t.fake.resource<Kube<Lease>>(GVR.leases).namespace('kube-node-lease');
      const l = await leases.get(name);
      l.spec = { ...l.spec, renewTime: rfc3339Micro(t.clock.now()) };
      const out = await leases.update(l);
      const idx = t.ctx.informers.leases().getIndexer();
      await until(() => idx.getByKey(`kube-node-lease/${name}`)?.metadata?.resourceVersion === out.metadata?.resourceVersion, 'lease cached');
    },
  };
}

const keys = (n: Node, effect?: string) => (n.spec?.taints ?? []).filter((t) => !effect || t.effect === effect).map((t) => t.key).sort();
const cond = (n: Node, type: string) => n.status?.conditions?.find((c) => c.type === type);

describe('node lifecycle controller', () => {
  before(() => setLogOutput(() => {}));

  it('is registered under its upstream name and alias', () => {
    assert.equal(descriptor.name, 'node-lifecycle-controller');
    assert.deepEqual(descriptor.aliases, ['nodelifecycle']);
  });

  it('removes the not-ready NoSchedule taint once the node reports Ready', async () => {
    const e = await setup((t) => t.fake.seed(GVR.nodes, node('n1', { ready: 'True', taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }, { key: 'custom', effect: 'NoSchedule' }] })));
    await e.c.syncNode('n1');
    assert.deepEqual(keys(await e.get('n1')), ['custom']);
    await e.t.close();
  });

  it('keeps NoSchedule taints in step with conditions and unschedulable', async () => {
    const e = await setup((t) =>
      t.fake.seed(
        GVR.nodes,
        node('n1', {
          unschedulable: true,
          conditions: [
            readyCond('False', T0),
            { type: 'MemoryPressure', status: 'True' },
            { type: 'DiskPressure', status: 'False' },
            { type: 'PIDPressure', status: 'True' },
            { type: 'NetworkUnavailable', status: 'True' },
          ],
          taints: [{ key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }],
        }),
      ),
    );
    await e.c.syncNode('n1');
    const n = await e.get('n1');
    assert.deepEqual(keys(n, 'NoSchedule'), [
      'node.kubernetes.io/memory-pressure',
      'node.kubernetes.io/network-unavailable',
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/pid-pressure',
      'node.kubernetes.io/unschedulable',
    ]);
    assert.ok(n.spec?.taints?.every((t) => t.timeAdded), 'added taints carry timeAdded');
    await e.t.close();
  });

  it('copies the os and arch labels to their beta names', async () => {
    const e = await setup((t) => t.fake.seed(GVR.nodes, node('n1', { ready: 'True', labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'windows' } })));
    await e.c.syncNode('n1');
    const l = (await e.get('n1')).metadata?.labels ?? {};
    assert.equal(l['beta.kubernetes.io/os'], 'linux');
    assert.equal(l['beta.kubernetes.io/arch'], 'amd64');
    await e.t.close();
  });

  it('marks a node whose heartbeats stop Unknown after the grace period, taints it unreachable and its pods not ready', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('n1', { ready: 'True' }), node('n2', { ready: 'True' }));
      t.fake.seed(GVR.leases, lease('n1', T0), lease('n2', T0));
      t.fake.seed(GVR.pods, pod('p1', 'n1'), pod('p2', 'n2'));
    });
    await e.c.monitorNodeHealth();
    assert.deepEqual(e.t.recorder.events.filter((x) => x.includes('RegisteredNode')), ['Normal RegisteredNode Node n1 event: Registered Node n1 in Controller', 'Normal RegisteredNode Node n2 event: Registered Node n2 in Controller']);
    for (const dt of [10_000, 20_000, 20_000]) {
      await e.t.clock.advance(dt);
      await e.renewLease('n2');
      await e.c.monitorNodeHealth();
    }
    assert.equal(cond(await e.get('n1'), 'Ready')?.status, 'True', 'still within the 50 s grace period');
    await e.t.clock.advance(5_000);
    await e.renewLease('n2');
    await e.c.monitorNodeHealth();
    const n1 = await e.get('n1');
    for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      const c = cond(n1, type);
      assert.equal(c?.status, 'Unknown', type);
      assert.equal(c?.reason, type === 'Ready' ? 'NodeStatusUnknown' : 'NodeStatusNeverUpdated', type);
    }
    assert.equal(cond(n1, 'Ready')?.message, 'Kubelet stopped posting node status.');
    assert.equal(cond(await e.get('n2'), 'Ready')?.status, 'True', 'the node with a renewed lease stays Ready');
    const statusChange = e.t.recorder.events.indexOf('Normal NodeNotReady Node n1 status is now: NodeNotReady');
    assert.ok(statusChange >= 0);
    const ref = e.t.recorder.targets[statusChange] as { kind?: string; name?: string; uid?: string };
    assert.deepEqual([ref.kind, ref.name, ref.uid], ['Node', 'n1', 'uid-n1'], 'the status-change event references the node by its uid');
    const p1 = await e.t.fake.resource<Kube<Pod>>(GVR.pods).namespace('ns').get('p1');
    assert.equal(p1.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    const p2 = await e.t.fake.resource<Kube<Pod>>(GVR.pods).namespace('ns').get('p2');
    assert.equal(p2.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.ok(e.t.recorder.events.includes('Warning NodeNotReady Node is not ready'));

    await e.cached('n1', (n) => cond(n!, 'Ready')?.status === 'Unknown');
    await e.c.monitorNodeHealth();
    await e.c.doNoExecuteTaintingPass();
    const tainted = await e.get('n1');
    assert.ok(tainted.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute' && t.timeAdded));
    await e.t.close();
  });

  it('counts a renewed lease as a heartbeat even when the status is old', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('n1', { ready: 'True' }));
      t.fake.seed(GVR.leases, lease('n1', T0));
    });
    await e.c.monitorNodeHealth();
    for (let i = 0; i < 12; i++) {
      await e.t.clock.advance(10_000);
      await e.renewLease('n1');
      await e.c.monitorNodeHealth();
    }
    assert.equal(cond(await e.get('n1'), 'Ready')?.status, 'True');
    await e.t.close();
  });

  it('swaps not-ready and unreachable NoExecute taints at once and removes both on recovery', async () => {
    const e = await setup((t) => {
      t.fake.seed(
        GVR.nodes,
        node('n1', { ready: 'False', taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] }),
        node('n2', { ready: 'True' }),
      );
    });
    await e.c.monitorNodeHealth();
    // n1 is new to the controller: it starts reachable (taints removed), then is queued.
    await e.c.doNoExecuteTaintingPass();
    assert.deepEqual(keys(await e.get('n1'), 'NoExecute'), ['node.kubernetes.io/not-ready']);

    // Recovery: the kubelet posts Ready again.
    const n1 = await e.get('n1');
    (n1.status!.conditions as NodeCondition[])[0] = readyCond('True', e.t.clock.now());
    await e.t.fake.resource<Kube<Node>>(GVR.nodes).updateStatus(n1);
    await e.cached('n1', (n) => cond(n!, 'Ready')?.status === 'True');
    await e.c.monitorNodeHealth();
    assert.deepEqual(keys(await e.get('n1'), 'NoExecute'), []);
    await e.t.close();
  });

  it('rate-limits NoExecute tainting per zone at --node-eviction-rate', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('a', { ready: 'False' }), node('b', { ready: 'False' }), node('c', { ready: 'True' }), node('d', { ready: 'True' }), node('e', { ready: 'True' }));
    });
    await e.c.monitorNodeHealth();
    await e.c.doNoExecuteTaintingPass();
    const tainted = async () => {
      let n = 0;
      for (const name of ['a', 'b']) if (keys(await e.get(name), 'NoExecute').length) n++;
      return n;
    };
    assert.equal(await tainted(), 1, 'burst of 1');
    await e.t.clock.advance(5_000);
    await e.c.doNoExecuteTaintingPass();
    assert.equal(await tainted(), 1, 'half a token at 0.1 qps');
    await e.t.clock.advance(5_000);
    await e.c.doNoExecuteTaintingPass();
    assert.equal(await tainted(), 2);
    assert.equal(e.c.zoneStates().get(''), 'Normal');
    await e.t.close();
  });

  it('stops tainting when every node is not ready (full disruption)', async () => {
    const e = await setup((t) => {
      t.fake.seed(GVR.nodes, node('a', { ready: 'False' }), node('b', { ready: 'Unknown' }));
    });
    await e.c.monitorNodeHealth();
    await e.c.doNoExecuteTaintingPass();
    assert.deepEqual(keys(await e.get('a'), 'NoExecute'), []);
    assert.deepEqual(keys(await e.get('b'), 'NoExecute'), []);
    assert.equal(e.c.zoneStates().get(''), 'FullDisruption');
    await e.t.close();
  });

  it('sets the conditions of a node that never posted status Unknown after the startup grace period', async () => {
    const e = await setup((t) => t.fake.seed(GVR.nodes, node('n1'), node('n2', { ready: 'True' })));
    await e.c.monitorNodeHealth();
    await e.t.clock.advance(59_000);
    await e.c.monitorNodeHealth();
    assert.equal(cond(await e.get('n1'), 'Ready'), undefined);
    await e.t.clock.advance(2_000);
    await e.c.monitorNodeHealth();
    const c = cond(await e.get('n1'), 'Ready');
    assert.equal(c?.status, 'Unknown');
    assert.equal(c?.reason, 'NodeStatusNeverUpdated');
    assert.equal(c?.message, 'Kubelet never posted node status.');
    await e.t.close();
  });

  it('records RemovingNode when a node disappears', async () => {
    const e = await setup((t) => t.fake.seed(GVR.nodes, node('n1', { ready: 'True' })));
    await e.c.monitorNodeHealth();
    await e.t.fake.resource(GVR.nodes).delete('n1');
    await e.cached('n1', (n) => n === undefined);
    await e.c.monitorNodeHealth();
    assert.ok(e.t.recorder.events.includes('Normal RemovingNode Node n1 event: Removing Node n1 from Controller'));
    await e.t.close();
  });

  it('records NodeNotReady on a pod even when its status update fails, as upstream, and reports the failure', async () => {
    const t = newTestContext();
    t.fake.seed(GVR.pods, pod('p1', 'n1'));
    t.fake.prependReactor('update', 'pods/status', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'boom'));
    });
    const deps = { client: t.fake, recorder: t.recorder, clock: t.clock, log: newLogger('test') };
    await assert.rejects(markPodsNotReady(deps, [pod('p1', 'n1')], 'n1'), /boom/);
    assert.deepEqual(t.recorder.events, ['Warning NodeNotReady Node is not ready']);
    await t.close();
  });
});
