import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newFakeClient } from '../controller/testing/index.js';
import { newFakeRecorder } from '../tools/record/index.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { newLogger, setLogOutput } from '../util/log/logger.js';
import { NodeAgent } from './node-agent.js';
import { buildNodeStatus, conditionEvents, conditionsDiffer, pressureOf, PRESSURE_ANNOTATION } from './node-object.js';

setLogOutput(() => {});

const id = { name: 'n1', index: 0, internalIP: '172.18.0.2', defaultPodCIDR: '10.244.0.0/24' };
const template = { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, labels: {}, taints: [], kubeletVersion: 'v1.33.0', architecture: 'amd64' };

function conditions(n: Node | undefined): string[] {
  return (n?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`);
}

describe('node pressure', () => {
  it('reads kcm.dev/pressure as a subset of memory, disk and pid', () => {
    const node = (v: string) => ({ metadata: { annotations: { [PRESSURE_ANNOTATION]: v } } });
    assert.deepEqual(pressureOf(node('disk, Memory,bogus')), ['memory', 'disk']);
    assert.deepEqual(pressureOf(node('')), []);
    assert.deepEqual(pressureOf(undefined), []);
    assert.deepEqual(pressureOf(node('pid')), ['pid']);
  });

  it("reports the kubelet's pressure conditions and events, Ready staying True", () => {
    const healthy = buildNodeStatus(id, template, undefined, 0);
    const pressed = buildNodeStatus(id, template, healthy, 10_000, ['memory', 'disk', 'pid']);
    assert.deepEqual(conditions({ status: pressed }), [
      'MemoryPressure=True KubeletHasInsufficientMemory: kubelet has insufficient memory available',
      'DiskPressure=True KubeletHasDiskPressure: kubelet has disk pressure',
      'PIDPressure=True KubeletHasInsufficientPID: kubelet has insufficient PID available',
      'Ready=True KubeletReady: kubelet is posting ready status',
    ]);
    assert.equal(pressed.conditions![3]!.lastTransitionTime, healthy.conditions![3]!.lastTransitionTime);
    assert.notEqual(pressed.conditions![0]!.lastTransitionTime, healthy.conditions![0]!.lastTransitionTime);
    assert.deepEqual(conditionEvents(healthy, pressed), ['NodeHasInsufficientMemory', 'NodeHasDiskPressure', 'NodeHasInsufficientPID']);
    assert.deepEqual(conditionEvents(pressed, buildNodeStatus(id, template, pressed, 20_000, [])), ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']);
    assert.equal(conditionsDiffer(pressed, ['memory', 'disk', 'pid']), false);
    assert.equal(conditionsDiffer(pressed, ['memory']), true);
  });

  it('keeps extended resources others advertise in capacity, copies them to allocatable, and drops them when removed', () => {
    const first = buildNodeStatus(id, template, undefined, 0);
    // As the upstream e2e tests do: someone patches status.capacity with an extended resource.
    const advertised = { ...first, capacity: { ...first.capacity, 'scheduling.k8s.io/foo': '3', 'kubernetes.io/not-extended': '1' } };
    const next = buildNodeStatus(id, template, advertised, 10_000);
    assert.equal(next.capacity!['scheduling.k8s.io/foo'], '3');
    assert.equal(next.allocatable!['scheduling.k8s.io/foo'], '3');
    assert.equal(next.capacity!['kubernetes.io/not-extended'], undefined);
    assert.equal(next.capacity!.cpu, template.capacity.cpu);
    // Removed from capacity: allocatable loses it too (null in the merge patch).
    const removed = { ...next, capacity: { ...template.capacity } };
    assert.equal(buildNodeStatus(id, template, removed, 20_000).allocatable!['scheduling.k8s.io/foo'], null);
  });

  it('posts the status at once when the annotation changes, and again when it goes', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const recorder = newFakeRecorder();
    const stored = () => fake.stored<Node & KubeObject>(GVR.nodes, '', 'n1');
    const agent = new NodeAgent({ client: fake, clock, logger: newLogger('test'), identity: id, template, cached: () => stored(), recorder });
    await agent.register();
    agent.observe(stored()!);
    recorder.clear();
    const annotate = async (v: string | undefined) => {
      const n = structuredClone(stored()!);
      const annotations = { ...(n.metadata?.annotations ?? {}) };
      if (v === undefined) delete annotations[PRESSURE_ANNOTATION];
      else annotations[PRESSURE_ANNOTATION] = v;
      n.metadata = { ...n.metadata, annotations };
      const updated = await fake.resource<Node & KubeObject>(GVR.nodes).update(n);
      agent.observe(updated);
      for (let i = 0; i < 10; i++) await flushMicrotasks();
    };
    await annotate('memory');
    assert.equal(stored()!.status!.conditions!.find((c) => c.type === 'MemoryPressure')!.status, 'True');
    assert.deepEqual(recorder.events, ['Normal NodeHasInsufficientMemory Node n1 status is now: NodeHasInsufficientMemory']);
    recorder.clear();
    agent.observe(stored()!);
    for (let i = 0; i < 10; i++) await flushMicrotasks();
    assert.deepEqual(recorder.events, [], 'an unchanged annotation posts nothing');
    await annotate(undefined);
    assert.equal(stored()!.status!.conditions!.find((c) => c.type === 'MemoryPressure')!.reason, 'KubeletHasSufficientMemory');
    assert.deepEqual(recorder.events, ['Normal NodeHasSufficientMemory Node n1 status is now: NodeHasSufficientMemory']);
  });

  it('posts at the next heartbeat when someone advertises an extended resource in capacity, copying it to allocatable', async () => {
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const stored = () => fake.stored<Node & KubeObject>(GVR.nodes, '', 'n1');
    const agent = new NodeAgent({ client: fake, clock, logger: newLogger('test'), identity: id, template, cached: () => stored(), recorder: newFakeRecorder() });
    await agent.register();
    await agent.heartbeat();
    const posts = () => fake.actions().filter((a) => a.verb === 'patch' && a.subresource === 'status').length;
    const before = posts();
    await agent.heartbeat();
    assert.equal(posts(), before, 'nothing changed: no post before the report interval');
    await fake.resource<Node & KubeObject>(GVR.nodes).patch('n1', 'merge', { status: { capacity: { 'example.com/fakecpu': '1k' } } }, { subresource: 'status' });
    await agent.heartbeat();
    assert.equal(posts(), before + 2);
    assert.equal(stored()!.status!.allocatable!['example.com/fakecpu'], '1k');
    await agent.heartbeat();
    assert.equal(posts(), before + 2, 'allocatable caught up: no further post');
  });
});
