import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';
import { coreEventToV1, eventV1ToCore } from './conversions.js';

const coreEvents = '/api/v1/namespaces/default/events';
const v1Events = '/apis/events.k8s.io/v1/namespaces/default/events';

const v1Event = {
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name: 'e1' },
  eventTime: '2024-01-01T00:00:00.000000Z',
  reportingController: 'test-controller',
  reportingInstance: 'i',
  action: 'Do',
  reason: 'Because',
  type: 'Normal',
  regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
  note: 'hello',
};

describe('events.k8s.io/v1 Events are core v1 Events', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('shows an event written through one API in the other, converted as kube-apiserver v1.20 does', async () => {
    assert.equal((await t.request('POST', v1Events, v1Event)).status, 201);
    const core = (await t.request('GET', `${coreEvents}/e1`)).body;
    // What kube-apiserver v1.20 answers for the same request (uid, times and resourceVersion aside).
    assert.deepEqual(
      { ...core, metadata: { name: core.metadata.name, namespace: core.metadata.namespace } },
      {
        kind: 'Event',
        apiVersion: 'v1',
        metadata: { name: 'e1', namespace: 'default' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
        reason: 'Because',
        message: 'hello',
        source: {},
        firstTimestamp: null,
        lastTimestamp: null,
        type: 'Normal',
        eventTime: '2024-01-01T00:00:00.000000Z',
        action: 'Do',
        reportingComponent: 'test-controller',
        reportingInstance: 'i',
      },
    );
    const back = (await t.request('GET', `${v1Events}/e1`)).body;
    assert.deepEqual(
      { ...back, metadata: { name: back.metadata.name } },
      { ...v1Event, deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, regarding: { kind: 'Pod', namespace: 'default', name: 'p' } },
    );
    assert.equal(back.metadata.resourceVersion, core.metadata.resourceVersion);
  });

  it('lists, selects and watches across both APIs', async () => {
    await t.request('POST', coreEvents, {
      metadata: { name: 'c1' },
      involvedObject: { kind: 'Node', name: 'n1' },
      reason: 'Core',
      message: 'from core',
      source: { component: 'kubelet' },
      count: 2,
      type: 'Warning',
    });
    const names = async (path: string) => ((await t.request('GET', path)).body.items as { metadata: { name: string } }[]).map((e) => e.metadata.name).sort();
    assert.deepEqual(await names(v1Events), ['c1', 'e1']);
    // Core's `source` is source.component, else the reporting controller; events.k8s.io's labels map onto core fields.
    assert.deepEqual(await names(`${coreEvents}?fieldSelector=source%3Dtest-controller`), ['e1']);
    assert.deepEqual(await names(`${coreEvents}?fieldSelector=source%3Dkubelet`), ['c1']);
    assert.deepEqual(await names(`${v1Events}?fieldSelector=reportingController%3Dtest-controller`), ['e1']);
    assert.deepEqual(await names(`${v1Events}?fieldSelector=regarding.kind%3DNode`), ['c1']);
    assert.equal((await t.request('GET', `${v1Events}?fieldSelector=source%3Dkubelet`)).status, 400);
    const c1 = (await t.request('GET', `${v1Events}/c1`)).body;
    assert.equal(c1.note, 'from core');
    assert.equal(c1.deprecatedCount, 2);
    assert.deepEqual(c1.deprecatedSource, { component: 'kubelet' });

    const w = await t.watch(`${v1Events}?watch=1&resourceVersion=${c1.metadata.resourceVersion}`);
    await t.request('PATCH', `${coreEvents}/c1`, { message: 'patched in core' });
    const ev = await w.next();
    assert.equal(ev.type, 'MODIFIED');
    assert.equal(ev.object.apiVersion, 'events.k8s.io/v1');
    assert.equal(ev.object.note, 'patched in core');
    w.close();
  });

  it('updates and patches through events.k8s.io write the core object', async () => {
    const r = await t.request('PATCH', `${v1Events}/e1`, { note: 'patched in v1', deprecatedCount: 3 });
    assert.equal(r.status, 200);
    assert.equal(r.body.note, 'patched in v1');
    const core = (await t.request('GET', `${coreEvents}/e1`)).body;
    assert.equal(core.message, 'patched in v1');
    assert.equal(core.count, 3);
    assert.equal(core.note, undefined);
    assert.equal((await t.request('DELETE', `${v1Events}/e1`)).status, 200);
    assert.equal((await t.request('GET', `${coreEvents}/e1`)).status, 404);
  });

  it('converts field by field both ways', () => {
    const core = eventV1ToCore({ ...v1Event, series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' }, related: { kind: 'Node', name: 'n' }, deprecatedSource: { component: 'c', host: 'h' }, deprecatedCount: 4 });
    assert.equal(core.reportingComponent, 'test-controller');
    assert.deepEqual(core.series, { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' });
    assert.deepEqual(core.source, { component: 'c', host: 'h' });
    assert.equal(core.count, 4);
    assert.equal(core.message, 'hello');
    const round = coreEventToV1(core);
    assert.deepEqual(Object.keys(round).sort(), [...Object.keys(v1Event), 'series', 'related', 'deprecatedSource', 'deprecatedCount'].sort());
    assert.equal(round.reportingController, 'test-controller');
  });
});

describe('autoscaling/v1 HorizontalPodAutoscalers are autoscaling/v2 in storage', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });
  const v1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
  const v2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';

  it('serves a v2 object to v1 clients with the rest in annotations, and takes it back whole', async () => {
    const spec = {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
      minReplicas: 2,
      maxReplicas: 5,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ],
    };
    assert.equal((await t.request('POST', v2, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h1' }, spec })).status, 201);
    const old = (await t.request('GET', `${v1}/h1`)).body;
    assert.equal(old.apiVersion, 'autoscaling/v1');
    assert.equal(old.spec.targetCPUUtilizationPercentage, 60);
    assert.equal(old.spec.metrics, undefined);
    assert.equal(old.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'], '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]');
    assert.deepEqual(old.status, { currentReplicas: 0, desiredReplicas: 0 });
    // A v1 client (the 1.20 HPA controller) writes its view back: nothing is lost.
    old.status = { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 70 };
    assert.equal((await t.request('PUT', `${v1}/h1/status`, old)).status, 200);
    const now = (await t.request('GET', `${v2}/h1`)).body;
    assert.deepEqual(now.spec.metrics.map((m: { resource: { name: string } }) => m.resource.name).sort(), ['cpu', 'memory']);
    assert.equal(now.metadata.annotations, undefined);
    assert.equal(now.status.desiredReplicas, 3);
    assert.deepEqual(now.status.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 70 } } }]);
  });

  it('stores a v1 object as v2, with the cpu target as a Utilization metric', async () => {
    const r = await t.request('POST', v1, { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h2' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 4, targetCPUUtilizationPercentage: 50 } });
    assert.equal(r.status, 201);
    assert.equal(r.body.apiVersion, 'autoscaling/v1');
    assert.equal(r.body.spec.targetCPUUtilizationPercentage, 50);
    const stored = (await t.request('GET', `${v2}/h2`)).body;
    assert.deepEqual(stored.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    assert.equal(stored.spec.minReplicas, 1);
    assert.equal(stored.spec.targetCPUUtilizationPercentage, undefined);
  });
});
