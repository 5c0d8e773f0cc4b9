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
import { convertDesiredReplicasWithRules, Recommendations } from './normalize.js';

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
    return { apiVersion: 'metrics.k8s.io/v1beta1', kind: 'PodMetricsList', metadata: {}, items: Object.entries(usage).map(([name, cpu]) => ({ metadata: { name, namespace: 'default' }, containers: [{ name: 'c', usage: { cpu } }] })) };
  });
const withRequest = (name: string): Kube<Pod> => {
  const p = pod(name);
  p.spec!.containers[0]!.resources = { requests: { cpu: '100m' } };
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

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'horizontal-pod-autoscaler-controller');
    assert.deepEqual(descriptor.aliases, ['horizontalpodautoscaling']);
  });
});
