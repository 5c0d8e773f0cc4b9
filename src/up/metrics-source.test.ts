import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../api/types.js';
import type { MetricsObjectReader } from '../apiserver/metrics-api/types.js';
import { FakeClock } from '../util/clock/clock.js';
import { USAGE_ANNOTATION } from '../nodes/usage.js';
import { newSimulatedMetricsSource } from './metrics-source.js';

const T0 = Date.parse('2024-01-01T00:00:00Z');

function world() {
  const objects: Record<string, KubeObject[]> = {
    pods: [],
    nodes: [{ metadata: { name: 'n1', uid: 'n1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } as KubeObject],
    replicasets: [{ metadata: { name: 'web-abc', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd', controller: true }] } } as KubeObject],
    deployments: [{ metadata: { name: 'web', namespace: 'default', annotations: {} } } as KubeObject],
  };
  let lists = 0;
  const reader: MetricsObjectReader = {
    async list(_group, resource) {
      lists++;
      return structuredClone(objects[resource] ?? []);
    },
  };
  const addPod = (name: string, startedAt: number, cpu = '500m') => {
    const p: Pod = {
      metadata: { name, namespace: 'default', uid: `uid-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs', controller: true }] },
      spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu, memory: '100Mi' } } }] },
      status: { phase: 'Running', containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date(startedAt).toISOString().replace('.000Z', 'Z') } } }] },
    };
    objects.pods!.push(p as KubeObject);
    return p;
  };
  return { objects, reader, addPod, lists: () => lists };
}

describe('simulated metrics-server', () => {
  it('reports a pod once its containers have run for 10 s at a scrape, with the scrape time and window', async () => {
    const clock = new FakeClock(T0 + 1_000);
    const w = world();
    const pod = w.addPod('web-1', T0 + 2_000);
    const src = newSimulatedMetricsSource({ clock, resolutionMs: 15_000 });
    assert.deepEqual(await src.podSamples([pod], w.reader), [undefined], 'not running at the scrape');
    clock.setTime(T0 + 15_500);
    const [s] = await src.podSamples([pod], w.reader);
    assert.equal(s!.timestamp, '2024-01-01T00:00:15Z');
    assert.equal(s!.window, '13s', 'a fresh container: the window starts at its start');
    assert.equal(s!.containers[0]!.name, 'app');
    assert.match(s!.containers[0]!.usage.cpu!, /^\d+n$|^\d+u$|^\d+m$/);
    clock.setTime(T0 + 30_000);
    assert.equal((await src.podSamples([pod], w.reader))[0]!.window, '15s');
  });

  it('takes one scrape per resolution: a Deployment annotation shows at the next scrape', async () => {
    const clock = new FakeClock(T0 + 60_000);
    const w = world();
    const pod = w.addPod('web-1', T0);
    const src = newSimulatedMetricsSource({ clock, resolutionMs: 15_000 });
    const before = (await src.podSamples([pod], w.reader))[0]!;
    const listsAfterFirst = w.lists();
    (w.objects.deployments![0]!.metadata!.annotations as Record<string, string>)[USAGE_ANNOTATION] = 'cpu=450m,memory=50Mi';
    clock.setTime(T0 + 70_000);
    assert.deepEqual((await src.podSamples([pod], w.reader))[0], before, 'same scrape until the resolution passes');
    assert.equal(w.lists(), listsAfterFirst, 'no new scrape within the resolution');
    clock.setTime(T0 + 75_000);
    const after = (await src.podSamples([pod], w.reader))[0]!;
    assert.deepEqual(after.containers[0]!.usage, { cpu: '450m', memory: '50Mi' });
    assert.equal(after.timestamp, '2024-01-01T00:01:15Z');
  });

  it('reports Ready nodes as their pods plus the system base, and nothing for a replaced pod or one on an unready node', async () => {
    const clock = new FakeClock(T0 + 60_000);
    const w = world();
    const pod = w.addPod('web-1', T0);
    (w.objects.deployments![0]!.metadata!.annotations as Record<string, string>)[USAGE_ANNOTATION] = 'cpu=1,memory=1Gi';
    w.objects.nodes!.push({ metadata: { name: 'n2' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } } as KubeObject);
    const src = newSimulatedMetricsSource({ clock });
    const [n1, n2] = await src.nodeSamples(w.objects.nodes as Node[], w.reader);
    assert.equal(n2, undefined);
    const cpu = Number(/^(\d+)n$/.exec(n1!.usage.cpu!)?.[1] ?? NaN);
    assert.ok(cpu > 1_000_000_000 + 45_000_000 && cpu < 1_000_000_000 + 55_000_000, n1!.usage.cpu);
    assert.equal(n1!.window, '15s');
    const replaced = { ...pod, metadata: { ...pod.metadata, uid: 'other' } };
    assert.deepEqual(await src.podSamples([replaced], w.reader), [undefined]);
    // A pod on a node that is not Ready is not scraped.
    const far = w.addPod('web-far', T0);
    (far.spec as { nodeName: string }).nodeName = 'n2';
    clock.setTime(T0 + 75_000);
    const [near, away] = await src.podSamples([pod, far], w.reader);
    assert.ok(near);
    assert.equal(away, undefined);
  });
});
