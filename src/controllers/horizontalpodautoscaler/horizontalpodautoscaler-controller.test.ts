import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { HorizontalPodAutoscaler } from 'kubernetes-types/autoscaling/v2.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { newStatus, StatusError } from '../../client/errors.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { pod, setupController } from '../endpointslice/test-support.js';
import { descriptor, newHorizontalPodAutoscalerController } from './horizontalpodautoscaler-controller.js';
import { convertDesiredReplicasWithBehaviorRate, convertDesiredReplicasWithRules, Recommendations, ScaleEvents, scaleDownRules, scaleUpRules } from './normalize.js';
import { groupPods, utilizationReplicas, type PodMetricsInfo } from './replica-calculator.js';

type HPA = Kube<HorizontalPodAutoscaler>;
const deploy = (replicas: number): Kube<Deployment> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  status: { replicas },
});
const hpa = (min: number, max: number, extra: Partial<HorizontalPodAutoscaler['spec']> = {}): HPA => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: min,
    maxReplicas: max,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    ...extra,
  },
});
const noMetricsAPI = (f: FakeClient) =>
  f.prependReactor('list', 'pods', (a) => {
    if (a.gvr.group !== 'metrics.k8s.io') return undefined;
    throw new StatusError(newStatus(404, 'NotFound', 'the server could not find the requested resource (get pods.metrics.k8s.io)'));
  });
const metricsAPI = (f: FakeClient, usage: Record<string, string>) =>
  f.prependReactor('list', 'pods', (a) => {
    if (a.gvr.group !== 'metrics.k8s.io') return undefined;
    return {
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'PodMetricsList',
      metadata: {},
      items: Object.entries(usage).map(([name, cpu]) => ({ metadata: { name, namespace: 'default' }, timestamp: '2023-12-31T23:59:45Z', window: '15s', containers: [{ name: 'c', usage: { cpu } }] })),
    };
  });
/** A Running pod requesting 100m cpu, started and Ready long ago (or as `ready` says, at `since`). */
const withRequest = (name: string, ready: { status: 'True' | 'False'; since?: string; started?: string } = { status: 'True' }): Kube<Pod> => {
  const p = pod(name);
  p.spec!.containers[0]!.resources = { requests: { cpu: '100m' } };
  (p as { status: Pod['status'] }).status = {
    ...p.status,
    phase: 'Running',
    startTime: ready.started ?? '2023-12-31T00:00:00Z',
    conditions: [{ type: 'Ready', status: ready.status, lastTransitionTime: ready.since ?? '2023-12-31T00:00:10Z' }],
  };
  return p;
};
const storedHpa = (f: FakeClient) => f.stored<HPA>(GVR.horizontalPodAutoscalers, 'default', 'web')!;
const storedReplicas = (f: FakeClient) => f.stored<Kube<Deployment>>(GVR.deployments, 'default', 'web')!.spec!.replicas;
const cond = (h: HPA, t: string) => h.status?.conditions?.find((c) => c.type === t);

describe('horizontal pod autoscaler controller', () => {
  before(() => setLogOutput(() => {}));

  it('reports missing resource metrics as upstream does and leaves the target alone', async () => {
    const env = await setupController((f) => {
      noMetricsAPI(f);
      f.seed(GVR.deployments, deploy(2));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 5));
    }, newHorizontalPodAutoscalerController);
    await assert.rejects(env.c.reconcileKey('default/web'), /failed to compute desired number of replicas based on listed metrics for Deployment\/default\/web/);
    const h = storedHpa(env.fake);
    assert.equal(storedReplicas(env.fake), 2);
    assert.equal(h.status?.currentReplicas, 2);
    assert.deepEqual([cond(h, 'AbleToScale')?.status, cond(h, 'AbleToScale')?.reason], ['True', 'SucceededGetScale']);
    assert.deepEqual([cond(h, 'ScalingActive')?.status, cond(h, 'ScalingActive')?.reason], ['False', 'FailedGetResourceMetric']);
    const inner = 'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)';
    assert.equal(cond(h, 'ScalingActive')?.message, `the HPA was unable to compute the replica count: ${inner}`);
    assert.deepEqual(env.recorder.events, [
      `Warning FailedGetResourceMetric ${inner}`,
      `Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${inner}`,
    ]);
    await env.stop();
  });

  it('scales the target into [minReplicas, maxReplicas] even without metrics', async () => {
    const env = await setupController((f) => {
      noMetricsAPI(f);
      f.seed(GVR.deployments, deploy(1));
      f.seed(GVR.horizontalPodAutoscalers, hpa(3, 5));
    }, newHorizontalPodAutoscalerController);
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 3);
    const h = storedHpa(env.fake);
    assert.equal(h.status?.desiredReplicas, 3);
    assert.equal(h.status?.currentReplicas, 1);
    assert.ok(h.status?.lastScaleTime);
    assert.equal(cond(h, 'AbleToScale')?.reason, 'SucceededRescale');
    assert.deepEqual(env.recorder.events, ['Normal SuccessfulRescale New size: 3; reason: Current number of replicas below Spec.MinReplicas']);
    await env.fake.resource(GVR.deployments).namespace('default').patch('web', 'merge', { spec: { replicas: 9 } });
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 5);
    await env.stop();
  });

  it('does not scale a target scaled to zero', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.deployments, deploy(0));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 5));
    }, newHorizontalPodAutoscalerController);
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 0);
    assert.equal(cond(storedHpa(env.fake), 'ScalingActive')?.reason, 'ScalingDisabled');
    await env.stop();
  });

  it('reports a missing target as FailedGetScale', async () => {
    const env = await setupController((f) => f.seed(GVR.horizontalPodAutoscalers, hpa(1, 5)), newHorizontalPodAutoscalerController);
    await assert.rejects(env.c.reconcileKey('default/web'), /failed to query scale subresource for Deployment\/default\/web/);
    const c = cond(storedHpa(env.fake), 'AbleToScale')!;
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'FailedGetScale');
    assert.match(c.message!, /^the HPA controller was unable to get the target's current scale: /);
    await env.stop();
  });

  it('scales up from resource utilization when the metrics API is served, capped by the scale-up limit', async () => {
    const env = await setupController((f) => {
      metricsAPI(f, { a: '200m', b: '200m' });
      f.seed(GVR.deployments, deploy(2));
      f.seed(GVR.pods, withRequest('a'), withRequest('b'));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 10));
    }, newHorizontalPodAutoscalerController);
    // 200 % of requests against a 50 % target: 8 pods wanted, at most max(2*2, 4) = 4 now.
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 4);
    const h = storedHpa(env.fake);
    assert.equal(cond(h, 'ScalingActive')?.reason, 'ValidMetricFound');
    assert.equal(cond(h, 'ScalingLimited')?.reason, 'ScaleUpLimit');
    assert.deepEqual(h.status?.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 200, averageValue: '200m' } } }]);
    assert.deepEqual(env.recorder.events, ['Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target']);
    await env.stop();
  });

  it('holds a scale-down within the stabilization window', async () => {
    const env = await setupController((f) => {
      metricsAPI(f, { a: '10m', b: '10m', c: '10m', d: '10m' });
      f.seed(GVR.deployments, deploy(4));
      f.seed(GVR.pods, withRequest('a'), withRequest('b'), withRequest('c'), withRequest('d'));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 10));
    }, newHorizontalPodAutoscalerController);
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 4);
    assert.equal(cond(storedHpa(env.fake), 'AbleToScale')?.reason, 'ScaleDownStabilized');
    await env.clock.advance(5 * 60_000 + 1000);
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 1); // 10 % of a 50 % target: 4 * 0.2 -> 1
    await env.stop();
  });

  it('names the container in a ContainerResource failure, with its own reason', async () => {
    const env = await setupController((f) => {
      noMetricsAPI(f);
      f.seed(GVR.deployments, deploy(2));
      f.seed(
        GVR.horizontalPodAutoscalers,
        hpa(1, 5, { metrics: [{ type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 50 } } }] }),
      );
    }, newHorizontalPodAutoscalerController);
    await assert.rejects(env.c.reconcileKey('default/web'));
    const h = storedHpa(env.fake);
    const inner = 'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)';
    assert.deepEqual([cond(h, 'ScalingActive')?.reason, cond(h, 'ScalingActive')?.message], ['FailedGetContainerResourceMetric', `the HPA was unable to compute the replica count: ${inner}`]);
    assert.deepEqual(env.recorder.events, [
      `Warning FailedGetContainerResourceMetric ${inner}`,
      `Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get app container metric value: ${inner}`,
    ]);
    await env.stop();
  });

  it('reports a resource metric without a target as FailedGetResourceMetric, with its event', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.deployments, deploy(2));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 5, { metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization' } } }] }));
    }, newHorizontalPodAutoscalerController);
    await assert.rejects(env.c.reconcileKey('default/web'));
    const inner = 'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set';
    assert.deepEqual(env.recorder.events, [
      `Warning FailedGetResourceMetric ${inner}`,
      `Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get memory resource metric value: ${inner}`,
    ]);
    await env.stop();
  });

  it('words External and Object metric failures as upstream', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.deployments, deploy(2));
      f.seed(
        GVR.horizontalPodAutoscalers,
        hpa(1, 5, {
          metrics: [
            { type: 'External', external: { metric: { name: 'queue', selector: { matchLabels: { q: 'jobs' } } }, target: { type: 'AverageValue', averageValue: '30' } } },
            { type: 'Object', object: { describedObject: { apiVersion: 'v1', kind: 'Service', name: 'front' }, metric: { name: 'rps' }, target: { type: 'Value', value: '10' } } },
          ],
        }),
      );
    }, newHorizontalPodAutoscalerController);
    await assert.rejects(env.c.reconcileKey('default/web'));
    const ext = 'unable to get external metric default/queue/&LabelSelector{MatchLabels:map[string]string{q: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}: unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered';
    const obj = 'unable to get metric rps: Service on default front/unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered';
    assert.deepEqual(env.recorder.events, [
      `Warning FailedGetExternalMetric ${ext}`,
      `Warning FailedGetObjectMetric ${obj}`,
      `Warning FailedComputeMetricsReplicas invalid metrics (2 invalid out of 2), first error is: failed to get queue external metric value: failed to get queue external metric: ${ext}`,
    ]);
    const c = cond(storedHpa(env.fake), 'ScalingActive')!;
    assert.deepEqual([c.reason, c.message], ['FailedGetExternalMetric', `the HPA was unable to compute the replica count: ${ext}`]);
    await env.stop();
  });

  it('reports an unparsable scale selector as InvalidSelector', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.deployments, deploy(2));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 5));
      f.prependReactor('get', 'deployments/scale', () => {
        return { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 2 }, status: { replicas: 2, selector: 'app in (web' } };
      });
    }, newHorizontalPodAutoscalerController);
    await assert.rejects(env.c.reconcileKey('default/web'));
    const c = cond(storedHpa(env.fake), 'ScalingActive')!;
    assert.equal(c.reason, 'InvalidSelector');
    assert.match(c.message!, /^couldn't convert selector into a corresponding internal selector object: /);
    assert.match(env.recorder.events[0]!, /^Warning InvalidSelector couldn't convert selector into a corresponding internal selector object: /);
    await env.stop();
  });

  it('holds a scale-up within the behavior scale-up window as ScaleUpStabilized', async () => {
    const env = await setupController((f) => {
      metricsAPI(f, { a: '200m', b: '200m' });
      f.seed(GVR.deployments, deploy(2));
      f.seed(GVR.pods, withRequest('a'), withRequest('b'));
      f.seed(GVR.horizontalPodAutoscalers, hpa(1, 10, { behavior: { scaleUp: { stabilizationWindowSeconds: 60 } } }));
    }, newHorizontalPodAutoscalerController);
    await env.c.reconcileKey('default/web');
    assert.equal(storedReplicas(env.fake), 2);
    const c = cond(storedHpa(env.fake), 'AbleToScale')!;
    assert.deepEqual([c.reason, c.message], ['ScaleUpStabilized', 'recent recommendations were lower than current one, applying the lowest recent recommendation']);
    await env.stop();
  });

  it('clamps and stabilizes as upstream', () => {
    assert.deepEqual(convertDesiredReplicasWithRules(2, 1, 3, 10).reason, 'TooFewReplicas');
    assert.deepEqual(convertDesiredReplicasWithRules(5, 12, 1, 8), { replicas: 8, reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' });
    assert.equal(convertDesiredReplicasWithRules(5, 7, 1, 8).reason, 'DesiredWithinRange');
    const r = new Recommendations();
    r.record('k', 6, 0);
    assert.equal(r.stabilize('k', 2, 60_000, 300_000), 6);
    assert.equal(r.stabilize('k', 2, 400_000, 300_000), 2);
  });

  it('counts missing pods at 0 on a scale-up and at their request on a scale-down, as upstream', () => {
    const timing = { now: Date.parse('2024-01-01T00:00:00Z'), cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000 };
    const m = (v: number) => ({ value: v, timestamp: timing.now - 10_000, windowMs: 15_000 });
    const pods = ['a', 'b', 'c', 'd'].map((n) => withRequest(n));
    // a, b at 200 % (target 50 %), c, d without metrics counted at 0: 100 % / 50 % = 2 -> 8 pods.
    const up = utilizationReplicas(4, 50, new Map([['a', m(200)], ['b', m(200)]]), pods, 'cpu', 0.1, undefined, timing);
    assert.deepEqual(up, { replicas: 8, utilization: 200, rawAverage: 200 });
    // Scale-down with missing pods: a, b at 10 %, c, d counted at 100 %: 55 % / 50 % flips the direction: keep 4.
    const down = utilizationReplicas(4, 50, new Map([['a', m(10)], ['b', m(10)]]), pods, 'cpu', 0.1, undefined, timing);
    assert.equal(down.replicas, 4);
    assert.equal(down.utilization, 10);
    // Without missing pods the same usage scales down to ceil(0.2 * 2) = 1.
    assert.equal(utilizationReplicas(2, 50, new Map([['a', m(10)], ['b', m(10)]]), pods.slice(0, 2), 'cpu', 0.1, undefined, timing).replicas, 1);
  });

  it('treats pods in their cpu initialization period as unready until a full window after they became Ready', () => {
    const now = Date.parse('2024-01-01T00:10:00Z');
    const timing = { now, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000 };
    const fresh = withRequest('fresh', { status: 'True', started: '2024-01-01T00:09:00Z', since: '2024-01-01T00:09:50Z' });
    const old = withRequest('old');
    const notReady = withRequest('nr', { status: 'False', started: '2024-01-01T00:00:00Z', since: '2024-01-01T00:00:05Z' });
    const pending = withRequest('pending');
    pending.status!.phase = 'Pending';
    const sample = (ts: string) => ({ value: 50, timestamp: Date.parse(ts), windowMs: 15_000 });
    const metrics: PodMetricsInfo = new Map([['fresh', sample('2024-01-01T00:10:00Z')], ['old', sample('2024-01-01T00:10:00Z')], ['nr', sample('2024-01-01T00:10:00Z')]]);
    const g = groupPods([fresh, old, notReady, pending], metrics, 'cpu', timing);
    assert.deepEqual([g.readyPodCount, [...g.unready].sort()], [1, ['fresh', 'nr', 'pending']]);
    // Memory ignores readiness.
    assert.equal(groupPods([fresh, old, notReady], metrics, 'memory', timing).readyPodCount, 3);
    // A scale-up counts the unready pods at 0: old at 200 %, fresh unready -> (200+0)/200 = 100 % / 50 % = 2 -> 4.
    const p = utilizationReplicas(2, 50, new Map([['old', { ...sample('2024-01-01T00:10:00Z'), value: 200 }], ['fresh', sample('2024-01-01T00:10:00Z')]]), [old, fresh], 'cpu', 0.1, undefined, timing);
    assert.equal(p.replicas, 4);
  });

  it('applies the behavior rate policies: Pods and Percent per period, selectPolicy, ScaleUpLimit / ScaleDownLimit', () => {
    const events = new ScaleEvents();
    const up = scaleUpRules({ policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] });
    const down = scaleDownRules({ policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }] }, 300);
    const args = { key: 'k', min: 1, max: 10, up, down };
    assert.deepEqual(convertDesiredReplicasWithBehaviorRate({ ...args, current: 2, desired: 6 }, events, 0), { replicas: 3, reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' });
    events.store('k', 2, 3, { up, down }, 0);
    // Within the period, the one pod already added counts: still 3.
    assert.equal(convertDesiredReplicasWithBehaviorRate({ ...args, current: 3, desired: 6 }, events, 30_000).replicas, 3);
    assert.equal(convertDesiredReplicasWithBehaviorRate({ ...args, current: 3, desired: 6 }, events, 61_000).replicas, 4);
    assert.deepEqual(convertDesiredReplicasWithBehaviorRate({ ...args, current: 8, desired: 1 }, new ScaleEvents(), 0), { replicas: 4, reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' });
    assert.equal(convertDesiredReplicasWithBehaviorRate({ ...args, current: 8, desired: 1, down: { ...down, selectPolicy: 'Disabled' } }, new ScaleEvents(), 0).replicas, 8);
    assert.equal(convertDesiredReplicasWithBehaviorRate({ ...args, current: 4, desired: 5 }, new ScaleEvents(), 0).reason, 'DesiredWithinRange');
    // The API defaults: up 4 pods or 100 % per 15 s (Max), down 100 % per 15 s.
    assert.equal(convertDesiredReplicasWithBehaviorRate({ ...args, max: 100, current: 2, desired: 50, up: scaleUpRules(undefined), down: scaleDownRules(undefined, 300) }, new ScaleEvents(), 0).replicas, 6);
    assert.equal(scaleDownRules(undefined, 300).stabilizationWindowSeconds, 300);
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'horizontal-pod-autoscaler-controller');
    assert.deepEqual(descriptor.aliases, ['horizontalpodautoscaling']);
  });
});
