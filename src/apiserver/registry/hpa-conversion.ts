/**
 * autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler conversion, on the
 * JSON form of the objects, as kube-apiserver does it through its internal
 * version (which has the v2 shape field for field):
 *
 * - pkg/apis/autoscaling/v1/conversion.go (Convert_autoscaling_*_To_v1_* and
 *   Convert_v1_*_To_autoscaling_*) with the generated field copies of
 *   zz_generated.conversion.go;
 * - pkg/apis/autoscaling/helpers.go (DropRoundTripHorizontalPodAutoscalerAnnotations);
 * - pkg/apis/autoscaling/annotations.go (the annotation names, DefaultCPUUtilization).
 *
 * v1 can say only "scale on CPU utilization". Everything else a v2 object
 * holds travels in annotations of the v1 object, written with Go's
 * encoding/json (json.Marshal): the metrics other than the CPU utilization
 * target and all current metrics in v1's alpha MetricSpec / MetricStatus
 * shape, the conditions, and the behavior as the *internal* Go struct (it has
 * no json tags, so its keys are the Go field names and nil pointers are
 * `null`; upstream keeps a TODO about it). A v1 client that reads an object
 * and writes it back so loses nothing, except where noted below.
 *
 * Behaviour is that of Kubernetes 1.33, from the 1.20 source plus these
 * later changes:
 * - #101370 (1.22): targetCPUUtilizationPercentage comes from the first CPU
 *   metric *with a utilization target* (1.20 stopped at the first CPU metric);
 * - KEP-4951 (1.33): HPAScalingRules.Tolerance. It is a field of the internal
 *   struct, so the behavior annotation carries `"Tolerance"` (null when
 *   unset). Its own round-trip annotations (`.../scale-up-tolerance`,
 *   `.../scale-down-tolerance`, written only by the v2beta2 conversion) are
 *   dropped with the others. Not read from the 1.33 tree itself (the stored
 *   copies available were older or newer); the field order and the dropped
 *   names are what the v2 Go type and the v2beta2 conversion show.
 * Not followed: #137856 (1.36), which stops v1 -> v2 from setting `value: "0"`
 * on an Object metric with an AverageValue target.
 *
 * Defaulting is not done here (the strategy does it), with one exception that
 * upstream does in the conversion itself, not in defaulting, and still does
 * in current releases: v1 -> v2 sets the cpu Utilization 80 metric when the
 * object ends up with no metric at all (v1 carries its metrics partly in an
 * annotation, so v1 defaulting cannot see them). v2's own
 * SetDefaults_HorizontalPodAutoscaler would add the same metric on read.
 */
import { canonicalQuantity } from '../../api/quantity.js';
import { stringifyAsGo } from '../go-json.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Obj = Record<string, unknown>;

const METRIC_SPECS = 'autoscaling.alpha.kubernetes.io/metrics';
const METRIC_STATUSES = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const TOLERANCE_SCALE_DOWN = 'autoscaling.alpha.kubernetes.io/scale-down-tolerance';
const TOLERANCE_SCALE_UP = 'autoscaling.alpha.kubernetes.io/scale-up-tolerance';
const ROUND_TRIP = [METRIC_SPECS, BEHAVIOR, TOLERANCE_SCALE_DOWN, TOLERANCE_SCALE_UP, METRIC_STATUSES, CONDITIONS];
const DEFAULT_CPU_UTILIZATION = 80;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `o` without its undefined properties (Go's omitempty, as the callers decide it). */
function compact(o: Obj): Obj {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

// ---------------------------------------------------------------------------
// Reading values. Objects (the stored v2 one, a v1 request body) were type
// checked before they get here and are read leniently. Annotations are read
// as json.Unmarshal would: keys match case-insensitively, and a value of the
// wrong type is an error, which makes upstream ignore the whole annotation.
// ---------------------------------------------------------------------------

class NotDecodable extends Error {}

interface Reader {
  get(o: Obj, name: string): unknown;
  /** A string field: "" when absent. */
  str(v: unknown): string;
  /** A *string field: undefined when absent. */
  optStr(v: unknown): string | undefined;
  /** An int32 (or int64 with `wide`) field or pointer: undefined when absent. */
  int(v: unknown, wide?: boolean): number | undefined;
  /** A Quantity, in canonical form (what Quantity.MarshalJSON writes): undefined when absent. */
  qty(v: unknown): string | undefined;
  /** A metav1.Time, as MarshalJSON writes it (RFC 3339, seconds, UTC): null when absent or zero. */
  time(v: unknown): string | null;
  obj(v: unknown): Obj | undefined;
  arr(v: unknown): unknown[] | undefined;
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function goTime(s: string): string | undefined {
  if (!rfc3339.test(s)) return undefined;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return undefined;
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

function goQuantity(v: string | number): string | undefined {
  try {
    return canonicalQuantity(String(v).trim());
  } catch {
    return undefined;
  }
}

const lenient: Reader = {
  get: (o, name) => o[name],
  str: (v) => (typeof v === 'string' ? v : ''),
  optStr: (v) => (typeof v === 'string' ? v : undefined),
  int: (v) => (typeof v === 'number' ? v : undefined),
  qty: (v) => (typeof v === 'string' || typeof v === 'number' ? (goQuantity(v) ?? String(v)) : undefined),
  time: (v) => (typeof v === 'string' ? (goTime(v) ?? v) : null),
  obj: (v) => (isObj(v) ? v : undefined),
  arr: (v) => (Array.isArray(v) ? v : undefined),
};

const absent = (v: unknown): v is null | undefined => v === null || v === undefined;
function fail(): never {
  throw new NotDecodable();
}

const strict: Reader = {
  get(o, name) {
    // encoding/json: a key matches a field exactly or case-insensitively; the last one in the text wins.
    const want = name.toLowerCase();
    let v: unknown;
    for (const [k, x] of Object.entries(o)) if (k === name || k.toLowerCase() === want) v = x;
    return v;
  },
  str: (v) => (absent(v) ? '' : typeof v === 'string' ? v : fail()),
  optStr: (v) => (absent(v) ? undefined : typeof v === 'string' ? v : fail()),
  int(v, wide) {
    if (absent(v)) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) fail();
    if (wide ? !Number.isSafeInteger(v) : v < -(2 ** 31) || v >= 2 ** 31) fail();
    return v;
  },
  qty: (v) => (absent(v) ? undefined : typeof v === 'string' || typeof v === 'number' ? (goQuantity(v) ?? fail()) : fail()),
  time: (v) => (absent(v) ? null : typeof v === 'string' ? (goTime(v) ?? fail()) : fail()),
  obj: (v) => (absent(v) ? undefined : isObj(v) ? v : fail()),
  arr: (v) => (absent(v) ? undefined : Array.isArray(v) ? v : fail()),
};

/** The same cross-version reference in both versions: kind, name, apiVersion (omitempty). */
function crossVersionRef(r: Reader, v: unknown): Obj {
  const o = r.obj(v) ?? {};
  const apiVersion = r.str(r.get(o, 'apiVersion'));
  return compact({ kind: r.str(r.get(o, 'kind')), name: r.str(r.get(o, 'name')), apiVersion: apiVersion || undefined });
}

/** A metav1.LabelSelector pointer, as Go writes it (map keys sorted, empty fields omitted). */
function labelSelector(r: Reader, v: unknown): Obj | undefined {
  const o = r.obj(v);
  if (!o) return undefined;
  const labels = r.obj(r.get(o, 'matchLabels'));
  const exprs = r.arr(r.get(o, 'matchExpressions'));
  let matchLabels: Obj | undefined;
  if (labels && Object.keys(labels).length > 0) {
    matchLabels = {};
    for (const k of Object.keys(labels).sort()) matchLabels[k] = r.str(labels[k]);
  }
  const matchExpressions = exprs?.map((e) => {
    const x = r.obj(e) ?? {};
    const values = r.arr(r.get(x, 'values'))?.map((s) => r.str(s));
    return compact({
      key: r.str(r.get(x, 'key')),
      operator: r.str(r.get(x, 'operator')),
      values: values && values.length > 0 ? values : undefined,
    });
  });
  return compact({ matchLabels, matchExpressions: matchExpressions && matchExpressions.length > 0 ? matchExpressions : undefined });
}

// ---------------------------------------------------------------------------
// Metric sources: v2 (internal) -> v1 alpha shape, for the metrics annotation.
// ---------------------------------------------------------------------------

function metricSpecToV1(m: Obj): Obj {
  const r = lenient;
  const out: Obj = { type: r.str(m.type) };
  const object = r.obj(m.object);
  if (object) {
    const t = r.obj(object.target) ?? {};
    const id = r.obj(object.metric) ?? {};
    out.object = compact({
      target: crossVersionRef(r, object.describedObject),
      metricName: r.str(id.name),
      targetValue: r.qty(t.value) ?? '0',
      selector: labelSelector(r, id.selector),
      averageValue: r.qty(t.averageValue),
    });
  }
  const pods = r.obj(m.pods);
  if (pods) {
    const t = r.obj(pods.target) ?? {};
    const id = r.obj(pods.metric) ?? {};
    out.pods = compact({
      metricName: r.str(id.name),
      targetAverageValue: r.qty(t.averageValue) ?? '0',
      selector: labelSelector(r, id.selector),
    });
  }
  const resource = r.obj(m.resource);
  if (resource) {
    const t = r.obj(resource.target) ?? {};
    out.resource = compact({
      name: r.str(resource.name),
      targetAverageUtilization: r.int(t.averageUtilization),
      targetAverageValue: r.qty(t.averageValue),
    });
  }
  const container = r.obj(m.containerResource);
  if (container) {
    const t = r.obj(container.target) ?? {};
    out.containerResource = compact({
      name: r.str(container.name),
      targetAverageUtilization: r.int(t.averageUtilization),
      targetAverageValue: r.qty(t.averageValue),
      container: r.str(container.container),
    });
  }
  const external = r.obj(m.external);
  if (external) {
    const t = r.obj(external.target) ?? {};
    const id = r.obj(external.metric) ?? {};
    out.external = compact({
      metricName: r.str(id.name),
      metricSelector: labelSelector(r, id.selector),
      targetValue: r.qty(t.value),
      targetAverageValue: r.qty(t.averageValue),
    });
  }
  return out;
}

function metricStatusToV1(m: Obj): Obj {
  const r = lenient;
  const out: Obj = { type: r.str(m.type) };
  const object = r.obj(m.object);
  if (object) {
    const c = r.obj(object.current) ?? {};
    const id = r.obj(object.metric) ?? {};
    out.object = compact({
      target: crossVersionRef(r, object.describedObject),
      metricName: r.str(id.name),
      currentValue: r.qty(c.value) ?? '0',
      selector: labelSelector(r, id.selector),
      averageValue: r.qty(c.averageValue),
    });
  }
  const pods = r.obj(m.pods);
  if (pods) {
    const c = r.obj(pods.current) ?? {};
    const id = r.obj(pods.metric) ?? {};
    out.pods = compact({
      metricName: r.str(id.name),
      currentAverageValue: r.qty(c.averageValue) ?? '0',
      selector: labelSelector(r, id.selector),
    });
  }
  const resource = r.obj(m.resource);
  if (resource) {
    const c = r.obj(resource.current) ?? {};
    out.resource = compact({
      name: r.str(resource.name),
      currentAverageUtilization: r.int(c.averageUtilization),
      currentAverageValue: r.qty(c.averageValue) ?? '0',
    });
  }
  const container = r.obj(m.containerResource);
  if (container) {
    const c = r.obj(container.current) ?? {};
    out.containerResource = compact({
      name: r.str(container.name),
      currentAverageUtilization: r.int(c.averageUtilization),
      currentAverageValue: r.qty(c.averageValue) ?? '0',
      container: r.str(container.container),
    });
  }
  const external = r.obj(m.external);
  if (external) {
    const c = r.obj(external.current) ?? {};
    const id = r.obj(external.metric) ?? {};
    out.external = compact({
      metricName: r.str(id.name),
      metricSelector: labelSelector(r, id.selector),
      currentValue: r.qty(c.value) ?? '0',
      currentAverageValue: r.qty(c.averageValue),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Metric sources: v1 alpha shape (from an annotation) -> v2 (internal).
// ---------------------------------------------------------------------------

function metricIdentifier(r: Reader, name: unknown, selector: unknown): Obj {
  return compact({ name: r.str(name), selector: labelSelector(r, selector) });
}

/** Resource and ContainerResource targets: Utilization when a utilization is given, else AverageValue. */
function resourceTarget(r: Reader, utilization: unknown, averageValue: unknown): Obj {
  const u = r.int(utilization);
  return compact({ type: u === undefined ? 'AverageValue' : 'Utilization', averageValue: r.qty(averageValue), averageUtilization: u });
}

function metricSpecToV2(m: Obj): Obj {
  const r = strict;
  const out: Obj = { type: r.str(r.get(m, 'type')) };
  const object = r.obj(r.get(m, 'object'));
  if (object) {
    const averageValue = r.qty(r.get(object, 'averageValue'));
    out.object = {
      describedObject: crossVersionRef(r, r.get(object, 'target')),
      // Value is &in.TargetValue: always set, "0" when the client gave none.
      target: compact({
        type: averageValue === undefined ? 'Value' : 'AverageValue',
        value: r.qty(r.get(object, 'targetValue')) ?? '0',
        averageValue,
      }),
      metric: metricIdentifier(r, r.get(object, 'metricName'), r.get(object, 'selector')),
    };
  }
  const pods = r.obj(r.get(m, 'pods'));
  if (pods) {
    out.pods = {
      metric: metricIdentifier(r, r.get(pods, 'metricName'), r.get(pods, 'selector')),
      target: { type: 'AverageValue', averageValue: r.qty(r.get(pods, 'targetAverageValue')) ?? '0' },
    };
  }
  const resource = r.obj(r.get(m, 'resource'));
  if (resource) {
    out.resource = {
      name: r.str(r.get(resource, 'name')),
      target: resourceTarget(r, r.get(resource, 'targetAverageUtilization'), r.get(resource, 'targetAverageValue')),
    };
  }
  const container = r.obj(r.get(m, 'containerResource'));
  if (container) {
    out.containerResource = {
      name: r.str(r.get(container, 'name')),
      target: resourceTarget(r, r.get(container, 'targetAverageUtilization'), r.get(container, 'targetAverageValue')),
      container: r.str(r.get(container, 'container')),
    };
  }
  const external = r.obj(r.get(m, 'external'));
  if (external) {
    const value = r.qty(r.get(external, 'targetValue'));
    out.external = {
      metric: metricIdentifier(r, r.get(external, 'metricName'), r.get(external, 'metricSelector')),
      target: compact({
        type: value === undefined ? 'AverageValue' : 'Value',
        value,
        averageValue: r.qty(r.get(external, 'targetAverageValue')),
      }),
    };
  }
  return out;
}

function metricStatusToV2(m: Obj): Obj {
  const r = strict;
  const out: Obj = { type: r.str(r.get(m, 'type')) };
  // The v1 status fields that are plain Quantities (not pointers) always come back set.
  const object = r.obj(r.get(m, 'object'));
  if (object) {
    out.object = {
      metric: metricIdentifier(r, r.get(object, 'metricName'), r.get(object, 'selector')),
      current: compact({ value: r.qty(r.get(object, 'currentValue')) ?? '0', averageValue: r.qty(r.get(object, 'averageValue')) }),
      describedObject: crossVersionRef(r, r.get(object, 'target')),
    };
  }
  const pods = r.obj(r.get(m, 'pods'));
  if (pods) {
    out.pods = {
      metric: metricIdentifier(r, r.get(pods, 'metricName'), r.get(pods, 'selector')),
      current: { averageValue: r.qty(r.get(pods, 'currentAverageValue')) ?? '0' },
    };
  }
  const resource = r.obj(r.get(m, 'resource'));
  if (resource) {
    out.resource = {
      name: r.str(r.get(resource, 'name')),
      current: compact({
        averageValue: r.qty(r.get(resource, 'currentAverageValue')) ?? '0',
        averageUtilization: r.int(r.get(resource, 'currentAverageUtilization')),
      }),
    };
  }
  const container = r.obj(r.get(m, 'containerResource'));
  if (container) {
    out.containerResource = {
      name: r.str(r.get(container, 'name')),
      current: compact({
        averageValue: r.qty(r.get(container, 'currentAverageValue')) ?? '0',
        averageUtilization: r.int(r.get(container, 'currentAverageUtilization')),
      }),
      container: r.str(r.get(container, 'container')),
    };
  }
  const external = r.obj(r.get(m, 'external'));
  if (external) {
    out.external = {
      metric: metricIdentifier(r, r.get(external, 'metricName'), r.get(external, 'metricSelector')),
      current: compact({
        value: r.qty(r.get(external, 'currentValue')) ?? '0',
        averageValue: r.qty(r.get(external, 'currentAverageValue')),
      }),
    };
  }
  return out;
}

// ---------------------------------------------------------------------------
// Conditions (same fields in both versions) and behavior.
// ---------------------------------------------------------------------------

/**
 * A HorizontalPodAutoscalerCondition. lastTransitionTime is a struct, so
 * omitempty keeps it (`null` when zero). observedGeneration is carried when
 * present: newer releases than 1.33 have it in both versions.
 */
function condition(r: Reader, v: unknown): Obj {
  const c = r.obj(v) ?? {};
  return compact({
    type: r.str(r.get(c, 'type')),
    status: r.str(r.get(c, 'status')),
    lastTransitionTime: r.time(r.get(c, 'lastTransitionTime')),
    reason: r.str(r.get(c, 'reason')) || undefined,
    message: r.str(r.get(c, 'message')) || undefined,
    observedGeneration: r.int(r.get(c, 'observedGeneration'), true),
  });
}

/** v2 behavior -> the internal HorizontalPodAutoscalerBehavior as json.Marshal writes it. */
function behaviorToInternal(b: Obj): Obj {
  const r = lenient;
  const rules = (v: unknown): Obj | null => {
    const x = r.obj(v);
    if (!x) return null;
    // Kept as protobuf in storage, an empty list reads back as a nil one.
    const policies = r.arr(x.policies);
    return {
      StabilizationWindowSeconds: r.int(x.stabilizationWindowSeconds) ?? null,
      SelectPolicy: r.optStr(x.selectPolicy) ?? null,
      Policies:
        policies && policies.length > 0
          ? policies.map((p) => {
              const o = r.obj(p) ?? {};
              return { Type: r.str(o.type), Value: r.int(o.value) ?? 0, PeriodSeconds: r.int(o.periodSeconds) ?? 0 };
            })
          : null,
      Tolerance: r.qty(x.tolerance) ?? null,
    };
  };
  return { ScaleUp: rules(b.scaleUp), ScaleDown: rules(b.scaleDown) };
}

/** The behavior annotation -> v2 behavior; undefined for the zero behavior (upstream then sets none). */
function behaviorFromInternal(v: unknown): Obj | undefined {
  const r = strict;
  const b = r.obj(v);
  if (!b) return undefined;
  const rules = (v: unknown): Obj | undefined => {
    const x = r.obj(v);
    if (!x) return undefined;
    const policies = r.arr(r.get(x, 'Policies'))?.map((p) => {
      const o = r.obj(p) ?? {};
      return { type: r.str(r.get(o, 'Type')), value: r.int(r.get(o, 'Value')) ?? 0, periodSeconds: r.int(r.get(o, 'PeriodSeconds')) ?? 0 };
    });
    return compact({
      stabilizationWindowSeconds: r.int(r.get(x, 'StabilizationWindowSeconds')),
      selectPolicy: r.optStr(r.get(x, 'SelectPolicy')),
      policies: policies && policies.length > 0 ? policies : undefined,
      tolerance: r.qty(r.get(x, 'Tolerance')),
    });
  };
  const scaleUp = rules(r.get(b, 'ScaleUp'));
  const scaleDown = rules(r.get(b, 'ScaleDown'));
  if (!scaleUp && !scaleDown) return undefined;
  return compact({ scaleUp, scaleDown });
}

// ---------------------------------------------------------------------------
// Objects.
// ---------------------------------------------------------------------------

/** metadata, copied, with the round-trip annotations removed (DropRoundTripHorizontalPodAutoscalerAnnotations). */
function metadataWithoutRoundTrip(obj: Obj): { metadata: Obj; annotations: Obj } {
  const metadata: Obj = isObj(obj.metadata) ? deepCopy(obj.metadata) : {};
  const annotations: Obj = isObj(metadata.annotations) ? metadata.annotations : {};
  for (const k of ROUND_TRIP) delete annotations[k];
  return { metadata, annotations };
}

/** Sets metadata.annotations, or removes it when empty (omitempty). */
function setAnnotations(metadata: Obj, annotations: Obj): void {
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
}

const isCpuUtilizationTarget = (m: Obj): boolean => {
  const res = lenient.obj(m.resource);
  return m.type === 'Resource' && res !== undefined && res.name === 'cpu' && typeof lenient.obj(res.target)?.averageUtilization === 'number';
};

/** autoscaling/v2 (storage) -> autoscaling/v1, as served to a v1 client. Returns a new object; `obj` is not changed. */
export function hpaV2ToV1(obj: Record<string, unknown>): Record<string, unknown> {
  const r = lenient;
  const spec = r.obj(obj.spec) ?? {};
  const status = r.obj(obj.status) ?? {};
  const metrics = (r.arr(spec.metrics) ?? []).map((m) => r.obj(m) ?? {});
  const currentMetrics = (r.arr(status.currentMetrics) ?? []).map((m) => r.obj(m) ?? {});
  const conditions = r.arr(status.conditions) ?? [];

  // The first CPU metric with a utilization target is v1's target; the others go to the annotation.
  const cpu = metrics.find(isCpuUtilizationTarget);
  const v1Spec = compact({
    scaleTargetRef: crossVersionRef(r, spec.scaleTargetRef),
    minReplicas: r.int(spec.minReplicas),
    maxReplicas: r.int(spec.maxReplicas) ?? 0,
    targetCPUUtilizationPercentage: cpu ? r.int(r.obj(r.obj(cpu.resource)?.target)?.averageUtilization) : undefined,
  });

  // The last CPU current metric with a utilization is v1's current utilization (the loop has no break).
  let currentCPU: number | undefined;
  for (const m of currentMetrics) {
    const res = r.obj(m.resource);
    const u = r.int(r.obj(res?.current)?.averageUtilization);
    if (m.type === 'Resource' && res?.name === 'cpu' && u !== undefined) currentCPU = u;
  }
  const v1Status = compact({
    observedGeneration: r.int(status.observedGeneration),
    lastScaleTime: status.lastScaleTime === undefined || status.lastScaleTime === null ? undefined : r.time(status.lastScaleTime),
    currentReplicas: r.int(status.currentReplicas) ?? 0,
    desiredReplicas: r.int(status.desiredReplicas) ?? 0,
    currentCPUUtilizationPercentage: currentCPU,
  });

  // Client-set round-trip annotations go first, so that the only ones left are those written here.
  const { metadata, annotations } = metadataWithoutRoundTrip(obj);
  const otherMetrics = metrics.filter((m) => !isCpuUtilizationTarget(m)).map(metricSpecToV1);
  if (otherMetrics.length > 0) annotations[METRIC_SPECS] = stringifyAsGo(otherMetrics);
  // All current metrics, the CPU one too: its raw value has no v1 field.
  if (currentMetrics.length > 0) annotations[METRIC_STATUSES] = stringifyAsGo(currentMetrics.map(metricStatusToV1));
  const behavior = r.obj(spec.behavior);
  if (behavior) annotations[BEHAVIOR] = stringifyAsGo(behaviorToInternal(behavior));
  if (conditions.length > 0) annotations[CONDITIONS] = stringifyAsGo(conditions.map((c) => condition(r, c)));
  setAnnotations(metadata, annotations);

  return { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata, spec: v1Spec, status: v1Status };
}

/** An annotation decoded by `fn`; undefined when absent or when json.Unmarshal would fail on it (upstream then ignores it). */
function fromAnnotation<T>(annotations: Obj, key: string, fn: (v: unknown) => T): T | undefined {
  const text = annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return fn(JSON.parse(text));
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof NotDecodable) return undefined;
    throw err;
  }
}

const listOf =
  <T>(fn: (o: Obj) => T) =>
  (v: unknown): T[] =>
    (strict.arr(v) ?? []).map((x) => fn(strict.obj(x) ?? {}));

const cpuUtilizationMetric = (utilization: number): Obj => ({
  type: 'Resource',
  resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: utilization } },
});

/** autoscaling/v1 (as a client wrote it) -> autoscaling/v2 for storage. Returns a new object; `obj` is not changed. */
export function hpaV1ToV2(obj: Record<string, unknown>): Record<string, unknown> {
  const r = lenient;
  const spec = r.obj(obj.spec) ?? {};
  const status = r.obj(obj.status) ?? {};
  const given: Obj = isObj(obj.metadata) && isObj(obj.metadata.annotations) ? obj.metadata.annotations : {};

  const targetCPU = r.int(spec.targetCPUUtilizationPercentage);
  let metrics: Obj[] = targetCPU === undefined ? [] : [cpuUtilizationMetric(targetCPU)];
  const others = fromAnnotation(given, METRIC_SPECS, listOf(metricSpecToV2));
  // The metric from targetCPUUtilizationPercentage comes after those of the annotation.
  if (others) metrics = [...others, ...metrics];
  const behavior = fromAnnotation(given, BEHAVIOR, behaviorFromInternal);

  const currentCPU = r.int(status.currentCPUUtilizationPercentage);
  let currentMetrics: Obj[] =
    currentCPU === undefined ? [] : [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: currentCPU } } }];
  // "ignore any existing status values -- the ones here have more information"
  currentMetrics = fromAnnotation(given, METRIC_STATUSES, listOf(metricStatusToV2)) ?? currentMetrics;

  // Formerly the v1 controller's implicit default, applied by the conversion, which sees the annotation.
  if (metrics.length === 0) metrics = [cpuUtilizationMetric(DEFAULT_CPU_UTILIZATION)];

  const conditions = fromAnnotation(given, CONDITIONS, (v) => (strict.arr(v) ?? []).map((c) => condition(strict, c)));

  const currentReplicas = r.int(status.currentReplicas) ?? 0;
  const v2Spec = compact({
    scaleTargetRef: crossVersionRef(r, spec.scaleTargetRef),
    minReplicas: r.int(spec.minReplicas),
    maxReplicas: r.int(spec.maxReplicas) ?? 0,
    metrics,
    behavior,
  });
  const v2Status = compact({
    observedGeneration: r.int(status.observedGeneration),
    lastScaleTime: status.lastScaleTime === undefined || status.lastScaleTime === null ? undefined : r.time(status.lastScaleTime),
    // In v2 currentReplicas is omitempty; desiredReplicas and currentMetrics are not.
    currentReplicas: currentReplicas === 0 ? undefined : currentReplicas,
    desiredReplicas: r.int(status.desiredReplicas) ?? 0,
    // Kept as protobuf in storage, an empty list reads back as a nil one.
    currentMetrics: currentMetrics.length > 0 ? currentMetrics : null,
    conditions: conditions && conditions.length > 0 ? conditions : undefined,
  });

  // "drop round-tripping annotations after converting to internal"
  const { metadata, annotations } = metadataWithoutRoundTrip(obj);
  setAnnotations(metadata, annotations);

  return { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata, spec: v2Spec, status: v2Status };
}
