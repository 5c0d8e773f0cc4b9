import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa-conversion.js';

type Obj = Record<string, unknown>;

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';

const ref = { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' };

/** A stored autoscaling/v2 HPA with one metric and its current value. */
function v2With(metric: Obj, current: Obj): Obj {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
    spec: { scaleTargetRef: ref, minReplicas: 2, maxReplicas: 10, metrics: [metric] },
    status: {
      observedGeneration: 1,
      lastScaleTime: '2024-05-01T10:00:00Z',
      currentReplicas: 3,
      desiredReplicas: 4,
      currentMetrics: [current],
      conditions: [{ type: 'ScalingActive', status: 'True', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'ValidMetricFound' }],
    },
  };
}

const ingress = { kind: 'Ingress', name: 'main-route', apiVersion: 'networking.k8s.io/v1' };
const selector = { matchLabels: { queue: 'jobs' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] };

// Each case round-trips exactly. Where v1 has a plain (non-pointer) Quantity the v2
// status sets the matching value, since v1 -> v2 always sets it (see the cases below).
const cases: Record<string, [Obj, Obj]> = {
  'Pods': [
    { type: 'Pods', pods: { metric: { name: 'packets-per-second', selector }, target: { type: 'AverageValue', averageValue: '1k' } } },
    { type: 'Pods', pods: { metric: { name: 'packets-per-second', selector }, current: { averageValue: '900' } } },
  ],
  'Object with a Value target': [
    { type: 'Object', object: { describedObject: ingress, target: { type: 'Value', value: '10k' }, metric: { name: 'requests-per-second' } } },
    { type: 'Object', object: { metric: { name: 'requests-per-second' }, current: { value: '12k' }, describedObject: ingress } },
  ],
  'External with a Value target': [
    { type: 'External', external: { metric: { name: 'queue_messages', selector }, target: { type: 'Value', value: '30' } } },
    { type: 'External', external: { metric: { name: 'queue_messages', selector }, current: { value: '25' } } },
  ],
  'External with an AverageValue target': [
    { type: 'External', external: { metric: { name: 'queue_messages' }, target: { type: 'AverageValue', averageValue: '30' } } },
    { type: 'External', external: { metric: { name: 'queue_messages' }, current: { value: '100', averageValue: '25' } } },
  ],
  'Resource memory with an AverageValue target': [
    { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
    { type: 'Resource', resource: { name: 'memory', current: { averageValue: '400Mi' } } },
  ],
  'Resource memory with a Utilization target': [
    { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 70 } } },
    { type: 'Resource', resource: { name: 'memory', current: { averageValue: '300Mi', averageUtilization: 65 } } },
  ],
  'Resource cpu with an AverageValue target': [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'AverageValue', averageValue: '500m' } } },
    { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '450m' } } },
  ],
  'Resource cpu with a Utilization target (v1 targetCPUUtilizationPercentage)': [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
    { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '120m', averageUtilization: 40 } } },
  ],
  'ContainerResource with a Utilization target': [
    { type: 'ContainerResource', containerResource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 }, container: 'app' } },
    { type: 'ContainerResource', containerResource: { name: 'cpu', current: { averageValue: '200m', averageUtilization: 55 }, container: 'app' } },
  ],
  'ContainerResource with an AverageValue target': [
    { type: 'ContainerResource', containerResource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' }, container: 'app' } },
    { type: 'ContainerResource', containerResource: { name: 'memory', current: { averageValue: '900Mi' }, container: 'app' } },
  ],
};

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

const annotationsOf = (o: Obj) => ((o.metadata as Obj).annotations ?? {}) as Record<string, string>;

describe('autoscaling/v1 <-> v2 HorizontalPodAutoscaler conversion', () => {
  describe('round trips', () => {
    for (const [name, [metric, current]] of Object.entries(cases)) {
      it(`v2 -> v1 -> v2 keeps an HPA with a ${name} metric`, () => {
        const v2 = deepFreeze(v2With(metric, current));
        const v1 = hpaV2ToV1(v2);
        assert.equal(v1.apiVersion, 'autoscaling/v1');
        assert.deepEqual(hpaV1ToV2(v1), v2);
      });

      it(`v1 -> v2 -> v1 keeps an HPA with a ${name} metric`, () => {
        const v1 = deepFreeze(hpaV2ToV1(v2With(metric, current)));
        const v2 = hpaV1ToV2(v1);
        assert.equal(v2.apiVersion, 'autoscaling/v2');
        assert.deepEqual(hpaV2ToV1(v2), v1);
      });
    }

    it('v1 -> v2 -> v1 keeps a plain v1 HPA', () => {
      const v1 = deepFreeze({
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web', namespace: 'default' },
        spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
        status: { currentReplicas: 0, desiredReplicas: 0 },
      });
      assert.deepEqual(hpaV2ToV1(hpaV1ToV2(v1)), v1);
    });

    it('moves the CPU utilization metric after the others (it comes back from targetCPUUtilizationPercentage)', () => {
      const [pods] = cases['Pods']!;
      const cpu = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } };
      const v2 = v2With(cpu, {});
      (v2.spec as Obj).metrics = [cpu, pods];
      assert.deepEqual((hpaV1ToV2(hpaV2ToV1(v2)).spec as Obj).metrics, [pods, cpu]);
    });

    it('gives an Object metric with an AverageValue target a value of 0 (Value: &in.TargetValue; fixed only in 1.36)', () => {
      const metric = { type: 'Object', object: { describedObject: ingress, target: { type: 'AverageValue', averageValue: '2' }, metric: { name: 'rps' } } };
      const v1 = hpaV2ToV1(v2With(metric, { type: 'Object', object: { metric: { name: 'rps' }, current: { value: '1' }, describedObject: ingress } }));
      assert.equal(
        annotationsOf(v1)[METRICS],
        '[{"type":"Object","object":{"target":{"kind":"Ingress","name":"main-route","apiVersion":"networking.k8s.io/v1"},"metricName":"rps","targetValue":"0","averageValue":"2"}}]',
      );
      const back = ((hpaV1ToV2(v1).spec as Obj).metrics as Obj[])[0];
      assert.deepEqual(back, { ...metric, object: { ...metric.object, target: { type: 'AverageValue', value: '0', averageValue: '2' } } });
    });
  });

  describe('v2 -> v1', () => {
    const v2 = deepFreeze({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'default', annotations: { team: 'a' } },
      spec: {
        scaleTargetRef: ref,
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [
          {
            type: 'Pods',
            pods: {
              metric: { name: 'packets-per-second', selector: { matchLabels: { tier: 'web', app: 'x' } } },
              target: { type: 'AverageValue', averageValue: '1k' },
            },
          },
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1024Mi' } } },
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
        ],
        behavior: {
          scaleUp: {
            stabilizationWindowSeconds: 0,
            selectPolicy: 'Max',
            policies: [
              { type: 'Pods', value: 4, periodSeconds: 15 },
              { type: 'Percent', value: 100, periodSeconds: 15 },
            ],
          },
          scaleDown: { policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] },
        },
      },
      status: {
        observedGeneration: 3,
        lastScaleTime: '2024-05-01T12:00:00.123456+02:00',
        currentReplicas: 3,
        desiredReplicas: 4,
        currentMetrics: [
          { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, current: { averageValue: '0.5' } } },
          { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '250m', averageUtilization: 50 } } },
        ],
        conditions: [
          {
            type: 'AbleToScale',
            status: 'True',
            lastTransitionTime: '2024-05-01T10:00:00Z',
            reason: 'ReadyForNewScale',
            message: 'recommended size matches current size',
          },
          { type: 'ScalingLimited', status: 'False', lastTransitionTime: '2024-05-01T09:00:00Z', message: 'desired < max && desired > min' },
        ],
      },
    });

    it('writes spec, status and the annotations as kube-apiserver does', () => {
      const v1 = hpaV2ToV1(v2);
      assert.deepEqual(v1.spec, { scaleTargetRef: ref, minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 60 });
      assert.deepEqual(v1.status, {
        observedGeneration: 3,
        lastScaleTime: '2024-05-01T10:00:00Z', // metav1.Time: RFC 3339 in UTC, whole seconds
        currentReplicas: 3,
        desiredReplicas: 4,
        currentCPUUtilizationPercentage: 50,
      });
      // The expected strings were written by hand from Go's encoding/json rules:
      // - keys in the order of the Go struct fields: v1 PodsMetricSource is metricName,
      //   targetAverageValue, selector; ResourceMetricSource name, targetAverageUtilization,
      //   targetAverageValue; ResourceMetricStatus name, currentAverageUtilization,
      //   currentAverageValue; HorizontalPodAutoscalerCondition type, status,
      //   lastTransitionTime, reason, message;
      // - omitempty fields left out when nil or "" (the cpu-free metrics have no
      //   targetAverageUtilization, the second condition has no reason), plain
      //   Quantities and Times always written;
      // - Quantity.MarshalJSON writes the canonical form: 1024Mi -> 1Gi, 0.5 -> 500m;
      // - map keys sorted (matchLabels app before tier);
      // - the behavior is the internal struct, which has no json tags: Go field names
      //   (ScaleUp, StabilizationWindowSeconds, ..., Tolerance since 1.33), every field
      //   written, nil pointers and slices as null;
      // - strings HTML-escaped: < > & become \u003c \u003e \u0026;
      // - the CPU utilization metric is v1's targetCPUUtilizationPercentage and is not in
      //   the metrics annotation, but every current metric is in current-metrics.
      assert.deepEqual(annotationsOf(v1), {
        team: 'a',
        [METRICS]:
          '[{"type":"Pods","pods":{"metricName":"packets-per-second","targetAverageValue":"1k","selector":{"matchLabels":{"app":"x","tier":"web"}}}},' +
          '{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]',
        [CURRENT_METRICS]:
          '[{"type":"Pods","pods":{"metricName":"packets-per-second","currentAverageValue":"500m"}},' +
          '{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":50,"currentAverageValue":"250m"}}]',
        [BEHAVIOR]:
          '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},' +
          '"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":null,"Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}],"Tolerance":null}}',
        [CONDITIONS]:
          '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T10:00:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"},' +
          '{"type":"ScalingLimited","status":"False","lastTransitionTime":"2024-05-01T09:00:00Z","message":"desired \\u003c max \\u0026\\u0026 desired \\u003e min"}]',
      });
    });

    it('reads its own annotations back', () => {
      const back = hpaV1ToV2(hpaV2ToV1(v2));
      assert.deepEqual(back.metadata, { name: 'web', namespace: 'default', annotations: { team: 'a' } });
      assert.deepEqual((back.spec as Obj).behavior, (v2.spec as Obj).behavior);
      assert.deepEqual((back.status as Obj).conditions, (v2.status as Obj).conditions);
      assert.deepEqual(((back.spec as Obj).metrics as Obj[]).map((m) => m.type), ['Pods', 'Resource', 'Resource']);
    });

    it('writes a tolerance into the behavior annotation', () => {
      const withTolerance = v2With(cases['Pods']![0], cases['Pods']![1]);
      (withTolerance.spec as Obj).behavior = { scaleDown: { tolerance: '0.05' } };
      const v1 = hpaV2ToV1(withTolerance);
      assert.equal(
        annotationsOf(v1)[BEHAVIOR],
        '{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":null,"Policies":null,"Tolerance":"50m"}}',
      );
      assert.deepEqual((hpaV1ToV2(v1).spec as Obj).behavior, { scaleDown: { tolerance: '50m' } });
    });

    it('takes targetCPUUtilizationPercentage from the first CPU metric with a utilization target (#101370)', () => {
      const v1 = hpaV2ToV1({
        ...v2With({ type: 'Resource', resource: { name: 'cpu', target: { type: 'AverageValue', averageValue: '300m' } } }, {}),
        status: { desiredReplicas: 1 },
      });
      assert.equal((v1.spec as Obj).targetCPUUtilizationPercentage, undefined);
      const v2Both = v2With({}, {});
      (v2Both.spec as Obj).metrics = [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'AverageValue', averageValue: '300m' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ];
      const both = hpaV2ToV1(v2Both);
      assert.equal((both.spec as Obj).targetCPUUtilizationPercentage, 70);
      assert.equal(annotationsOf(both)[METRICS], '[{"type":"Resource","resource":{"name":"cpu","targetAverageValue":"300m"}}]');
    });

    it('writes currentReplicas and desiredReplicas as 0 and no annotation for an HPA without status', () => {
      const v1 = hpaV2ToV1({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web' },
        spec: { scaleTargetRef: ref, maxReplicas: 3, metrics: [cases['Resource cpu with a Utilization target (v1 targetCPUUtilizationPercentage)']![0]] },
      });
      assert.deepEqual(v1, {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web' },
        spec: { scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 60 },
        status: { currentReplicas: 0, desiredReplicas: 0 },
      });
    });

    it('does not let client-set round-trip annotations through', () => {
      const forged = {
        keep: 'me',
        [METRICS]: '[{"type":"Pods","pods":{"metricName":"forged","targetAverageValue":"1"}}]',
        [CURRENT_METRICS]: '[{"type":"Pods","pods":{"metricName":"forged","currentAverageValue":"1"}}]',
        [CONDITIONS]: '[{"type":"AbleToScale","status":"False"}]',
        [BEHAVIOR]: '{"ScaleUp":{"SelectPolicy":"Disabled"}}',
        'autoscaling.alpha.kubernetes.io/scale-up-tolerance': '0.5',
        'autoscaling.alpha.kubernetes.io/scale-down-tolerance': '0.5',
      };
      // Nothing to write: only the other annotations are left.
      const cpuOnly = v2With(cases['Resource cpu with a Utilization target (v1 targetCPUUtilizationPercentage)']![0], {});
      const plain = { ...cpuOnly, metadata: { name: 'web', annotations: forged }, status: { desiredReplicas: 1 } };
      assert.deepEqual(hpaV2ToV1(plain).metadata, { name: 'web', annotations: { keep: 'me' } });
      // Something to write: only what the conversion wrote.
      const pods = { ...v2With(cases['Pods']![0], cases['Pods']![1]), metadata: { name: 'web', annotations: forged } };
      const v1 = hpaV2ToV1(pods);
      assert.deepEqual(annotationsOf(v1), { ...annotationsOf(hpaV2ToV1(v2With(cases['Pods']![0], cases['Pods']![1]))), keep: 'me' });
      assert.ok(!annotationsOf(v1)[METRICS]!.includes('forged'));
      // Only round-trip annotations: none left at all.
      const onlyForged = { ...cpuOnly, metadata: { name: 'web', annotations: { [METRICS]: forged[METRICS] } }, status: {} };
      assert.deepEqual(hpaV2ToV1(onlyForged).metadata, { name: 'web' });
    });
  });

  describe('v1 -> v2', () => {
    const base = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'default' },
    };

    it('turns targetCPUUtilizationPercentage 50 into a cpu Utilization 50 metric', () => {
      const v1 = deepFreeze({
        ...base,
        spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
        status: { currentReplicas: 0, desiredReplicas: 0 },
      });
      assert.deepEqual(hpaV1ToV2(v1), {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          scaleTargetRef: ref,
          minReplicas: 1,
          maxReplicas: 5,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        },
        // v2's currentReplicas is omitempty, currentMetrics is not.
        status: { desiredReplicas: 0, currentMetrics: null },
      });
    });

    it('stores an HPA without a target with the cpu Utilization 80 metric the conversion adds', () => {
      // minReplicas: 1 comes from v1 defaulting (the strategy), not from the conversion.
      const v1 = { ...base, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 5 } };
      assert.deepEqual(hpaV1ToV2(v1), {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          scaleTargetRef: { kind: 'Deployment', name: 'web' },
          maxReplicas: 5,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
        },
        status: { desiredReplicas: 0, currentMetrics: null },
      });
    });

    it('adds no cpu metric when the metrics annotation has one', () => {
      const v1 = {
        ...base,
        metadata: { ...base.metadata, annotations: { [METRICS]: '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]' } },
        spec: { scaleTargetRef: ref, maxReplicas: 5 },
      };
      const v2 = hpaV1ToV2(v1);
      assert.deepEqual((v2.spec as Obj).metrics, [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }]);
      assert.deepEqual(v2.metadata, base.metadata);
    });

    it('ignores annotations json.Unmarshal would refuse', () => {
      for (const bad of ['not json', '{"type":"Pods"}', '[{"type":"Pods","pods":{"metricName":5}}]', '[{"type":"Pods","pods":{"targetAverageValue":"lots"}}]']) {
        const v1 = { ...base, metadata: { ...base.metadata, annotations: { [METRICS]: bad, other: 'x' } }, spec: { scaleTargetRef: ref, maxReplicas: 5 } };
        const v2 = hpaV1ToV2(v1);
        assert.deepEqual((v2.spec as Obj).metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }], bad);
        assert.deepEqual(v2.metadata, { ...base.metadata, annotations: { other: 'x' } });
      }
    });

    it('reads annotation keys case-insensitively, as encoding/json does, and sets no behavior for an empty one', () => {
      const v1 = {
        ...base,
        metadata: {
          ...base.metadata,
          annotations: {
            [METRICS]: '[{"Type":"Resource","Resource":{"Name":"memory","TargetAverageValue":"1024Mi"}}]',
            [BEHAVIOR]: '{"scaleUp":{"selectPolicy":"Min","policies":[{"type":"Pods","value":2,"periodSeconds":30}]}}',
          },
        },
        spec: { scaleTargetRef: ref, maxReplicas: 5 },
      };
      const spec = hpaV1ToV2(v1).spec as Obj;
      assert.deepEqual(spec.metrics, [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } }]);
      assert.deepEqual(spec.behavior, { scaleUp: { selectPolicy: 'Min', policies: [{ type: 'Pods', value: 2, periodSeconds: 30 }] } });
      const empty = { ...v1, metadata: { ...base.metadata, annotations: { [BEHAVIOR]: '{}' } } };
      assert.equal((hpaV1ToV2(empty).spec as Obj).behavior, undefined);
    });

    it('turns currentCPUUtilizationPercentage into a current metric, unless the annotation has them all', () => {
      const v1 = { ...base, spec: { scaleTargetRef: ref, maxReplicas: 5, targetCPUUtilizationPercentage: 50 }, status: { currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 40 } };
      const v2 = hpaV1ToV2(v1);
      assert.deepEqual(v2.status, {
        currentReplicas: 2,
        desiredReplicas: 2,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40 } } }],
      });
      // Served back to v1, the current metric is in the annotation too, with its plain averageValue as 0.
      assert.equal(
        annotationsOf(hpaV2ToV1(v2))[CURRENT_METRICS],
        '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"0"}}]',
      );
      const annotated = {
        ...v1,
        metadata: { ...base.metadata, annotations: { [CURRENT_METRICS]: '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":41,"currentAverageValue":"205m"}}]' } },
      };
      assert.deepEqual((hpaV1ToV2(annotated).status as Obj).currentMetrics, [
        { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '205m', averageUtilization: 41 } } },
      ]);
    });

    it('reads the conditions annotation, a zero lastTransitionTime as null', () => {
      const v1 = {
        ...base,
        metadata: { ...base.metadata, annotations: { [CONDITIONS]: '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T12:00:00+02:00"},{"type":"ScalingActive","status":"False","reason":"FailedGetResourceMetric"}]' } },
        spec: { scaleTargetRef: ref, maxReplicas: 5 },
      };
      assert.deepEqual((hpaV1ToV2(v1).status as Obj).conditions, [
        { type: 'AbleToScale', status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z' },
        { type: 'ScalingActive', status: 'False', lastTransitionTime: null, reason: 'FailedGetResourceMetric' },
      ]);
    });
  });
});
