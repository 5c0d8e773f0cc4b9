/**
 * The horizontal pod autoscaler (pkg/controller/podautoscaler/horizontal.go)
 * for autoscaling/v2 HPAs. Every `--horizontal-pod-autoscaler-sync-period`
 * (15 s) each HPA is reconciled: read the target's scale subresource
 * (AbleToScale SucceededGetScale / FailedGetScale), keep the target inside
 * [minReplicas, maxReplicas] even without metrics, otherwise compute a
 * proposal per metric, stabilize scale-down over the last 5 minutes, clamp
 * (ScalingLimited), write the scale (SuccessfulRescale / FailedRescale) and
 * the status.
 *
 * Metrics: Resource and ContainerResource metrics come from metrics.k8s.io
 * (metrics-server) when it is served. Without it (kcm's embedded control
 * plane) each metric fails as upstream's does: ScalingActive False
 * FailedGetResourceMetric, events FailedGetResourceMetric and
 * FailedComputeMetricsReplicas. Pods, Object and External metrics need the
 * custom/external metrics APIs, which kcm does not read: they always fail
 * (FailedGetPodsMetric, FailedGetObjectMetric, FailedGetExternalMetric).
 * With spec.behavior, the stabilization windows and the rate policies
 * (pods/percent per period, selectPolicy) apply as upstream's
 * normalizeDesiredReplicasWithBehaviors; without it, scale-down is
 * stabilized over --horizontal-pod-autoscaler-downscale-stabilization and
 * scale-up limited to max(2 * current, 4).
 */
import type { HorizontalPodAutoscaler, HPAScalingRules, MetricSpec, MetricStatus } from 'kubernetes-types/autoscaling/v2.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { GVR } from '../../api/gvr.js';
import { parseSelector } from '../../api/labels.js';
import { newMilliQuantity, quantityToString, milliValue } from '../../api/quantity.js';
import { parseApiVersion, splitKey, type GroupVersionResource } from '../../api/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { convertDesiredReplicasWithBehaviorRate, convertDesiredReplicasWithRules, Recommendations, ScaleEvents, scaleDownRules, scaleUpRules, setCondition } from './normalize.js';
import {
  averageValueReplicas,
  DEFAULT_CPU_INITIALIZATION_PERIOD_MS,
  DEFAULT_INITIAL_READINESS_DELAY_MS,
  getResourceMetric,
  utilizationReplicas,
  type PodMetricsInfo,
  type ReadinessTiming,
} from './replica-calculator.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const HPA_CONTROLLER_NAME = 'horizontal-pod-autoscaler-controller';
export const DEFAULT_SYNC_PERIOD_MS = 15_000;
export const DEFAULT_DOWNSCALE_STABILIZATION_MS = 5 * 60_000;
export const DEFAULT_TOLERANCE = 0.1;

type HPA = Kube<HorizontalPodAutoscaler>;
interface Scale {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

export interface HPAController extends Controller {
  /** Reconciles HPA `ns/name` once; true when it no longer exists. */
  reconcileKey(key: string): Promise<boolean>;
  hasSynced(): boolean;
}

const KNOWN_KINDS: Record<string, string> = {
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  ReplicationController: 'replicationcontrollers',
};

/** The scale target's resource (a static mapping of the built-in kinds; others pluralised). */
export function targetResource(apiVersion: string, kind: string): GroupVersionResource {
  const { group, version } = parseApiVersion(apiVersion);
  return { group, version, resource: KNOWN_KINDS[kind] ?? `${kind.toLowerCase()}s` };
}

/** What one metric yielded: a proposal, or the failure with its condition reason. */
type MetricResult =
  | { ok: true; replicas: number; name: string; status: MetricStatus }
  | { ok: false; reason: string; error: string; /** The condition's part of the message. */ inner: string };

class HorizontalController implements HPAController {
  readonly name = HPA_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly hpas: Lister<HPA>;
  private readonly pods: Lister<Kube<Pod>>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly recommendations = new Recommendations();
  private readonly scaleEvents = new ScaleEvents();
  private readonly cpuInitializationPeriodMs: number;
  private readonly initialReadinessDelayMs: number;
  private readonly resyncMs: number;
  private readonly downscaleWindowMs: number;
  private readonly tolerance: number;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting HPA controller', stopping: 'Shutting down HPA controller' };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder('horizontal-pod-autoscaler');
    const extra = ctx.options.extra ?? {};
    this.resyncMs = Number(extra['horizontal-pod-autoscaler-sync-period'] ?? DEFAULT_SYNC_PERIOD_MS) || DEFAULT_SYNC_PERIOD_MS;
    this.downscaleWindowMs = Number(extra['horizontal-pod-autoscaler-downscale-stabilization'] ?? DEFAULT_DOWNSCALE_STABILIZATION_MS);
    this.tolerance = Number(extra['horizontal-pod-autoscaler-tolerance'] ?? DEFAULT_TOLERANCE);
    this.cpuInitializationPeriodMs = Number(extra['horizontal-pod-autoscaler-cpu-initialization-period'] ?? DEFAULT_CPU_INITIALIZATION_PERIOD_MS);
    this.initialReadinessDelayMs = Number(extra['horizontal-pod-autoscaler-initial-readiness-delay'] ?? DEFAULT_INITIAL_READINESS_DELAY_MS);
    this.worker = newQueueWorker({ name: 'horizontalpodautoscaler', clock: ctx.clock, logger: this.log, sync: (k) => this.sync(k) });
    const hpaInf = ctx.informers.horizontalPodAutoscalers();
    const podInf = ctx.informers.pods();
    this.hpas = newLister(hpaInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    const regs = [
      hpaInf.addEventHandler({
        onAdd: (h) => this.worker.enqueue(keyFunc(h)),
        onUpdate: (o, n) => {
          if (JSON.stringify(o.spec) !== JSON.stringify(n.spec)) this.worker.enqueue(keyFunc(n));
        },
        onDelete: (obj) => {
          const h = objectFromDeleted(obj);
          if (h) {
            this.recommendations.forget(keyFunc(h));
            this.scaleEvents.forget(keyFunc(h));
          }
        },
      }),
      podInf.addEventHandler({}),
    ];
    this.synced = regs.map((r) => () => r.hasSynced());
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  /** Reconciles, logs failures, and comes back after the resync period while the HPA exists. */
  private async sync(key: string): Promise<void> {
    let deleted = false;
    try {
      deleted = await this.reconcileKey(key);
    } catch (err) {
      this.log.error(err, { hpa: key }, 'failed to reconcile HPA');
    }
    if (!deleted) this.worker.enqueueAfter(key, this.resyncMs);
  }

  async reconcileKey(key: string): Promise<boolean> {
    const { namespace, name } = splitKey(key);
    const shared = this.hpas.namespace(namespace).get(name);
    if (!shared) {
      this.recommendations.forget(key);
      this.scaleEvents.forget(key);
      return true;
    }
    await this.reconcile(key, shared);
    return false;
  }

  private cond(hpa: HPA, type: string, status: 'True' | 'False', reason: string, message: string): void {
    setCondition(hpa, type, status, reason, message, rfc3339(this.ctx.clock.now()));
  }

  private async reconcile(key: string, shared: HPA): Promise<void> {
    const hpa: HPA = { ...deepCopy(shared), apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' };
    const original = JSON.stringify(hpa.status ?? {});
    const ref = hpa.spec?.scaleTargetRef ?? { kind: '', name: '' };
    const ns = hpa.metadata?.namespace ?? '';
    const reference = `${ref.kind}/${ns}/${ref.name}`;
    const target = targetResource(ref.apiVersion ?? '', ref.kind);
    const scales = this.ctx.client.resource(target).namespace(ns);
    let scale: Scale;
    try {
      scale = await scales.getSubresource<Scale>(ref.name, 'scale');
    } catch (err) {
      const msg = (err as Error).message;
      this.recorder.event(hpa, 'Warning', 'FailedGetScale', msg);
      this.cond(hpa, 'AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${msg}`);
      await this.updateStatusIfNeeded(original, hpa);
      throw new Error(`failed to query scale subresource for ${reference}: ${msg}`, { cause: err });
    }
    this.cond(hpa, 'AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const current = scale.spec?.replicas ?? 0;
    this.recommendations.recordInitial(key, current, this.ctx.clock.now());
    const min = hpa.spec?.minReplicas ?? 1;
    const max = hpa.spec?.maxReplicas ?? min;
    let desired = 0;
    let reason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] = [];
    let retErr: Error | undefined;

    if (current === 0 && min !== 0) {
      rescale = false;
      this.cond(hpa, 'ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (current > max) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = max;
    } else if (current < min) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      const computed = await this.computeReplicasForMetrics(hpa, scale);
      metricStatuses = computed.statuses;
      if (computed.error && computed.replicas === -1) {
        this.setCurrent(hpa, current, metricStatuses);
        await this.updateStatusIfNeeded(original, hpa).catch((e: unknown) => this.log.error(e, { hpa: key }, 'status update failed'));
        this.recorder.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', computed.error);
        throw new Error(`failed to compute desired number of replicas based on listed metrics for ${reference}: ${computed.error}`);
      }
      if (computed.error) retErr = new Error(computed.error);
      let rescaleMetric = '';
      if (computed.replicas > desired) {
        desired = computed.replicas;
        rescaleMetric = computed.metric;
      }
      if (desired > current) reason = `${rescaleMetric} above target`;
      if (desired < current) reason = 'All metrics below target';
      desired = this.normalize(hpa, key, current, desired, min, max);
      rescale = desired !== current;
    }

    if (rescale) {
      try {
        await scales.updateSubresource(ref.name, 'scale', { ...scale, spec: { ...scale.spec, replicas: desired } });
      } catch (err) {
        const msg = (err as Error).message;
        this.recorder.eventf(hpa, 'Warning', 'FailedRescale', 'New size: %d; reason: %s; error: %v', desired, reason, msg);
        this.cond(hpa, 'AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${msg}`);
        this.setCurrent(hpa, current, metricStatuses);
        await this.updateStatusIfNeeded(original, hpa).catch((e: unknown) => this.log.error(e, { hpa: key }, 'status update failed'));
        throw new Error(`failed to rescale ${reference}: ${msg}`, { cause: err });
      }
      this.cond(hpa, 'AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`);
      if (hpa.spec?.behavior) this.scaleEvents.store(key, current, desired, this.behaviorRules(hpa), this.ctx.clock.now());
      this.recorder.eventf(hpa, 'Normal', 'SuccessfulRescale', 'New size: %d; reason: %s', desired, reason);
      this.log.info({ hpa: key, currentReplicas: current, desiredReplicas: desired, reason }, 'Successfully rescaled');
    } else {
      desired = current;
    }
    hpa.status = {
      ...hpa.status,
      currentReplicas: current,
      desiredReplicas: desired,
      ...(metricStatuses.length ? { currentMetrics: metricStatuses } : {}),
      ...(rescale ? { lastScaleTime: rfc3339(this.ctx.clock.now()) } : {}),
    };
    if (!metricStatuses.length) delete hpa.status.currentMetrics;
    await this.updateStatusIfNeeded(original, hpa);
    if (retErr) throw retErr;
  }

  private setCurrent(hpa: HPA, current: number, statuses: MetricStatus[]): void {
    hpa.status = { ...hpa.status, currentReplicas: current, desiredReplicas: hpa.status?.desiredReplicas ?? 0 };
    if (statuses.length) hpa.status.currentMetrics = statuses;
    else delete hpa.status.currentMetrics;
  }

  /** The HPA's behavior with the API defaults filled in (and the controller's default scale-down window). */
  private behaviorRules(hpa: HPA): { up: HPAScalingRules; down: HPAScalingRules } {
    const b = hpa.spec?.behavior;
    return { up: scaleUpRules(b?.scaleUp), down: scaleDownRules(b?.scaleDown, Math.trunc(this.downscaleWindowMs / 1000)) };
  }

  private normalize(hpa: HPA, key: string, current: number, desired: number, min: number, max: number): number {
    const now = this.ctx.clock.now();
    if (!hpa.spec?.behavior) {
      // normalizeDesiredReplicas
      const stabilized = this.recommendations.stabilize(key, desired, now, this.downscaleWindowMs);
      if (stabilized !== desired) this.cond(hpa, 'AbleToScale', 'True', 'ScaleDownStabilized', 'recent recommendations were higher than current one, applying the highest recent recommendation');
      else this.cond(hpa, 'AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size');
      const r = convertDesiredReplicasWithRules(current, stabilized, min, max);
      this.cond(hpa, 'ScalingLimited', r.replicas === stabilized ? 'False' : 'True', r.reason, r.message);
      return r.replicas;
    }
    // normalizeDesiredReplicasWithBehaviors
    const rules = this.behaviorRules(hpa);
    const stabilized = this.recommendations.stabilize(key, desired, now, (rules.down.stabilizationWindowSeconds ?? 0) * 1000, (rules.up.stabilizationWindowSeconds ?? 0) * 1000, current);
    if (stabilized !== desired) {
      if (desired >= current) this.cond(hpa, 'AbleToScale', 'True', 'ScaleUpStabilized', 'recent recommendations were lower than current one, applying the lowest recent recommendation');
      else this.cond(hpa, 'AbleToScale', 'True', 'ScaleDownStabilized', 'recent recommendations were higher than current one, applying the highest recent recommendation');
    } else {
      this.cond(hpa, 'AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size');
    }
    const r = convertDesiredReplicasWithBehaviorRate({ key, current, desired: stabilized, min, max, up: rules.up, down: rules.down }, this.scaleEvents, now);
    this.cond(hpa, 'ScalingLimited', r.replicas === stabilized ? 'False' : 'True', r.reason, r.message);
    return r.replicas;
  }

  private timing(): ReadinessTiming {
    return { now: this.ctx.clock.now(), cpuInitializationPeriodMs: this.cpuInitializationPeriodMs, initialReadinessDelayMs: this.initialReadinessDelayMs };
  }

  private async computeReplicasForMetrics(hpa: HPA, scale: Scale): Promise<{ replicas: number; metric: string; statuses: MetricStatus[]; error?: string }> {
    const selectorText = scale.status?.selector ?? '';
    if (!selectorText) {
      const msg = 'selector is required';
      this.recorder.event(hpa, 'Warning', 'SelectorRequired', msg);
      this.cond(hpa, 'ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector");
      return { replicas: -1, metric: '', statuses: [], error: msg };
    }
    try {
      parseSelector(selectorText);
    } catch (err) {
      const msg = `couldn't convert selector into a corresponding internal selector object: ${(err as Error).message}`;
      this.recorder.event(hpa, 'Warning', 'InvalidSelector', msg);
      this.cond(hpa, 'ScalingActive', 'False', 'InvalidSelector', msg);
      return { replicas: -1, metric: '', statuses: [], error: msg };
    }
    const specs: MetricSpec[] = hpa.spec?.metrics?.length ? hpa.spec.metrics : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
    const current = scale.spec?.replicas ?? 0;
    const statuses: MetricStatus[] = [];
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let firstError: { reason: string; error: string; inner: string } | undefined;
    for (const spec of specs) {
      const r = await this.computeReplicasForMetric(hpa, spec, current, selectorText);
      if (!r.ok) {
        if (!firstError) firstError = r;
        invalid++;
        continue;
      }
      statuses.push(r.status);
      if (replicas === 0 || r.replicas > replicas) {
        replicas = r.replicas;
        metric = r.name;
      }
    }
    const error = firstError ? `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstError.error}` : undefined;
    if (invalid >= specs.length || (invalid > 0 && replicas < current)) {
      this.cond(hpa, 'ScalingActive', 'False', firstError!.reason, `the HPA was unable to compute the replica count: ${firstError!.inner}`);
      return { replicas: -1, metric: '', statuses, ...(error ? { error } : {}) };
    }
    this.cond(hpa, 'ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metric}`);
    return { replicas, metric, statuses, ...(error ? { error } : {}) };
  }

  private async computeReplicasForMetric(hpa: HPA, spec: MetricSpec, current: number, selectorText: string): Promise<MetricResult> {
    const fail = (reason: string, inner: string, prefix: string): MetricResult => {
      this.recorder.event(hpa, 'Warning', reason, inner);
      return { ok: false, reason, error: `${prefix}: ${inner}`, inner };
    };
    const ns = hpa.metadata?.namespace ?? '';
    switch (spec.type) {
      case 'Resource':
      case 'ContainerResource': {
        const src = spec.type === 'Resource' ? spec.resource : spec.containerResource;
        const resource = src?.name ?? '';
        const container = spec.type === 'ContainerResource' ? spec.containerResource?.container : undefined;
        // Upstream names the container (not the resource) in a ContainerResource failure.
        const prefix = spec.type === 'Resource' ? `failed to get ${resource} resource metric value` : `failed to get ${container ?? ''} container metric value`;
        const reason = spec.type === 'Resource' ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
        const targetUtil = src?.target.averageUtilization;
        const targetValue = src?.target.averageValue;
        if (targetUtil === undefined && targetValue === undefined) {
          return fail(reason, 'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set', prefix);
        }
        const what = targetValue !== undefined ? 'usage' : 'utilization';
        let usage: PodMetricsInfo;
        try {
          usage = await getResourceMetric(this.ctx.client, resource, ns, selectorText, container);
        } catch (err) {
          return fail(reason, `failed to get ${resource} ${what}: ${(err as Error).message}`, prefix);
        }
        const pods = this.pods.namespace(ns).list(parseSelector(selectorText));
        try {
          if (targetValue !== undefined) {
            const p = averageValueReplicas(current, milliValue(String(targetValue)), usage, pods, resource, this.tolerance, this.timing());
            const cur = { averageValue: quantityToString(newMilliQuantity(p.usage)) };
            // "<name> resource" for both Resource and ContainerResource average-value targets, as upstream.
            return { ok: true, replicas: p.replicas, name: `${resource} resource`, status: statusFor(spec, resource, container, cur) };
          }
          const p = utilizationReplicas(current, targetUtil!, usage, pods, resource, this.tolerance, container, this.timing());
          const cur = { averageUtilization: p.utilization, averageValue: quantityToString(newMilliQuantity(p.rawAverage)) };
          const kind = spec.type === 'Resource' ? 'resource' : 'container resource';
          return { ok: true, replicas: p.replicas, name: `${resource} ${kind} utilization (percentage of request)`, status: statusFor(spec, resource, container, cur) };
        } catch (err) {
          return fail(reason, `failed to get ${resource} ${what}: ${(err as Error).message}`, prefix);
        }
      }
      case 'Pods':
        return fail('FailedGetPodsMetric', `unable to get metric ${spec.pods?.metric.name}: unable to fetch metrics from custom metrics API: ${NO_CUSTOM_METRICS_API}`, 'failed to get pods metric value');
      case 'Object': {
        const o = spec.object;
        const prefix = 'failed to get object metric value';
        const t = o?.target;
        if (!((t?.type === 'Value' && t.value !== undefined) || (t?.type === 'AverageValue' && t.averageValue !== undefined))) {
          return fail('FailedGetObjectMetric', 'invalid object metric source: neither a value target nor an average value target was set', prefix);
        }
        // Upstream's format string puts the arguments out of order ("unable to get metric %s: %v on %s %s/%s"); kept verbatim.
        const inner = `unable to get metric ${o?.metric.name}: ${o?.describedObject.kind} on ${ns} ${o?.describedObject.name}/unable to fetch metrics from custom metrics API: ${NO_CUSTOM_METRICS_API}`;
        return fail('FailedGetObjectMetric', inner, t.type === 'Value' ? prefix : `${prefix}: failed to get ${o?.metric.name} object metric`);
      }
      case 'External': {
        const e = spec.external;
        const name = e?.metric.name ?? '';
        const prefix = `failed to get ${name} external metric value`;
        const inner = `unable to get external metric ${ns}/${name}/${goLabelSelectorString(e?.metric.selector)}: unable to fetch metrics from external metrics API: ${NO_EXTERNAL_METRICS_API}`;
        if (e?.target.averageValue !== undefined) return fail('FailedGetExternalMetric', inner, `${prefix}: failed to get ${name} external metric`);
        if (e?.target.value !== undefined) return fail('FailedGetExternalMetric', inner, `${prefix}: failed to get external metric ${name}`);
        const msg = 'invalid external metric source: neither a value target nor an average value target was set';
        return fail('FailedGetExternalMetric', msg, prefix);
      }
      default: {
        const inner = `unknown metric source type "${spec.type}"`;
        this.recorder.event(hpa, 'Warning', 'InvalidMetricSourceType', inner);
        return { ok: false, reason: 'InvalidMetricSourceType', error: inner, inner };
      }
    }
  }

  private async updateStatusIfNeeded(original: string, hpa: HPA): Promise<void> {
    if (JSON.stringify(hpa.status ?? {}) === original) return;
    try {
      await this.ctx.client.resource<HPA>(GVR.horizontalPodAutoscalers).namespace(hpa.metadata?.namespace ?? '').updateStatus(hpa);
    } catch (err) {
      this.recorder.event(hpa, 'Warning', 'FailedUpdateStatus', (err as Error).message);
      throw new Error(`failed to update status for ${hpa.metadata?.name}: ${(err as Error).message}`, { cause: err });
    }
  }
}

/** What kcm answers for the custom and external metrics APIs, which it does not read. */
const NO_CUSTOM_METRICS_API = 'no custom metrics API (custom.metrics.k8s.io) registered';
const NO_EXTERNAL_METRICS_API = 'no external metrics API (external.metrics.k8s.io) registered';

/**
 * A *metav1.LabelSelector as Go's %+v prints it (its generated String()):
 * `nil`, or `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{...},}`.
 */
export function goLabelSelectorString(sel: LabelSelector | undefined): string {
  if (!sel) return 'nil';
  const labels = Object.keys(sel.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${sel.matchLabels![k]},`)
    .join('');
  const exprs = (sel.matchExpressions ?? []).map((r) => `LabelSelectorRequirement{Key:${r.key},Operator:${r.operator},Values:[${(r.values ?? []).join(' ')}],},`).join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

function statusFor(spec: MetricSpec, name: string, container: string | undefined, current: { averageUtilization?: number; averageValue?: string }): MetricStatus {
  if (spec.type === 'ContainerResource') return { type: 'ContainerResource', containerResource: { name, container: container ?? '', current } };
  return { type: 'Resource', resource: { name, current } };
}

export function newHorizontalPodAutoscalerController(ctx: ControllerContext): HPAController {
  return new HorizontalController(ctx);
}

/** kube-controller-manager runs it with --concurrent-horizontal-pod-autoscaler-syncs=5. */
export const descriptor: ControllerDescriptor = {
  name: HPA_CONTROLLER_NAME,
  aliases: ['horizontalpodautoscaling'],
  requiredResources: [GVR.horizontalPodAutoscalers],
  defaultWorkers: 5,
  create: (ctx) => newHorizontalPodAutoscalerController(ctx),
};
