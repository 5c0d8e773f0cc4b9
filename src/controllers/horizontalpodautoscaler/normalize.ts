/**
 * Turning a metric recommendation into the replica count to apply
 * (pkg/controller/podautoscaler/horizontal.go normalizeDesiredReplicas,
 * convertDesiredReplicasWithRules, stabilizeRecommendation; with
 * spec.behavior stabilizeRecommendationWithBehaviors,
 * convertDesiredReplicasWithBehaviorRate and the scale events the rate
 * policies count) and the condition bookkeeping of autoscaling/v2 status.
 */
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, HPAScalingRules } from 'kubernetes-types/autoscaling/v2.js';

/** Sets (or adds) condition `type`; lastTransitionTime changes only with the status. */
export function setCondition(hpa: HorizontalPodAutoscaler, type: string, status: 'True' | 'False', reason: string, message: string, now: string): void {
  const list: HorizontalPodAutoscalerCondition[] = hpa.status?.conditions ? [...hpa.status.conditions] : [];
  let i = list.findIndex((c) => c.type === type);
  if (i < 0) {
    list.push({ type, status });
    i = list.length - 1;
  }
  const cur = { ...list[i]! };
  if (cur.status !== status || !cur.lastTransitionTime) cur.lastTransitionTime = now;
  cur.status = status;
  cur.reason = reason;
  cur.message = message;
  list[i] = cur;
  hpa.status = { ...(hpa.status ?? { desiredReplicas: 0 }), conditions: list };
}

/** Scale-up cap without behavior: max(2 * current, 4). */
export function scaleUpLimit(current: number): number {
  return Math.max(2 * current, 4);
}

/** Clamps `desired` into [min, min(max, scale-up limit)], naming the limiting condition. */
export function convertDesiredReplicasWithRules(current: number, desired: number, min: number, max: number): { replicas: number; reason: string; message: string } {
  let maxAllowed: number;
  let reason: string;
  let message: string;
  const limit = scaleUpLimit(current);
  if (max > limit) {
    maxAllowed = limit;
    reason = 'ScaleUpLimit';
    message = 'the desired replica count is increasing faster than the maximum scale rate';
  } else {
    maxAllowed = max;
    reason = 'TooManyReplicas';
    message = 'the desired replica count is more than the maximum replica count';
  }
  if (desired < min) return { replicas: min, reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
  if (desired > maxAllowed) return { replicas: maxAllowed, reason, message };
  return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

interface Recommendation {
  at: number;
  replicas: number;
}

/**
 * Recent recommendations per HPA key. Scale-down is limited to the highest
 * recommendation within the down window; scale-up (with behavior) to the
 * lowest within the up window.
 */
export class Recommendations {
  private readonly byKey = new Map<string, Recommendation[]>();

  record(key: string, replicas: number, now: number): void {
    const list = this.byKey.get(key) ?? [];
    list.push({ at: now, replicas });
    this.byKey.set(key, list);
  }

  /** Seeds the key with the current count when it has no history (recordInitialRecommendation). */
  recordInitial(key: string, replicas: number, now: number): void {
    if (!this.byKey.has(key)) this.record(key, replicas, now);
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }

  /** The stabilized recommendation, after recording `desired`; drops entries older than the longest window. */
  stabilize(key: string, desired: number, now: number, downWindowMs: number, upWindowMs = 0, current?: number): number {
    this.record(key, desired, now);
    const keep = Math.max(downWindowMs, upWindowMs);
    const list = (this.byKey.get(key) ?? []).filter((r) => now - r.at <= keep);
    this.byKey.set(key, list);
    let downLimit = desired;
    let upLimit = desired;
    for (const r of list) {
      // Upstream: !rec.timestamp.Before(cutoff) without behavior, rec.timestamp.After(cutoff) with it.
      if (current === undefined ? now - r.at <= downWindowMs : now - r.at < downWindowMs) downLimit = Math.max(downLimit, r.replicas);
      if (now - r.at < upWindowMs) upLimit = Math.min(upLimit, r.replicas);
    }
    if (current === undefined) return downLimit; // no behavior: only scale-down is stabilized
    // With behavior: never move past current in the stabilized direction.
    let out = current;
    if (out < upLimit) out = upLimit;
    if (out > downLimit) out = downLimit;
    return out;
  }
}

/** GenerateHPAScaleUpRules: the API defaults of behavior.scaleUp, filling what `r` leaves out. */
export function scaleUpRules(r: HPAScalingRules | undefined): HPAScalingRules {
  return {
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? 0,
    selectPolicy: r?.selectPolicy ?? 'Max',
    policies: r?.policies?.length ? r.policies : [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }],
  };
}

/** GenerateHPAScaleDownRules; a missing stabilization window is the controller's --horizontal-pod-autoscaler-downscale-stabilization (maybeInitScaleDownStabilizationWindow). */
export function scaleDownRules(r: HPAScalingRules | undefined, defaultWindowSeconds: number): HPAScalingRules {
  return {
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? defaultWindowSeconds,
    selectPolicy: r?.selectPolicy ?? 'Max',
    policies: r?.policies?.length ? r.policies : [{ type: 'Percent', value: 100, periodSeconds: 15 }],
  };
}

interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

/**
 * Recent scale changes per HPA key (scaleUpEvents / scaleDownEvents), which
 * the behavior rate policies count per period.
 */
export class ScaleEvents {
  private readonly up = new Map<string, ScaleEvent[]>();
  private readonly down = new Map<string, ScaleEvent[]>();

  forget(key: string): void {
    this.up.delete(key);
    this.down.delete(key);
  }

  /** storeScaleEvent: records a rescale from `prev` to `next` (only with behavior), reusing an outdated slot. */
  store(key: string, prev: number, next: number, rules: { up: HPAScalingRules; down: HPAScalingRules }, now: number): void {
    const upward = next > prev;
    const map = upward ? this.up : this.down;
    const longest = Math.max(0, ...(upward ? rules.up : rules.down).policies!.map((p) => p.periodSeconds)) * 1000;
    const list = map.get(key) ?? [];
    for (const e of list) if (now - e.at > longest) e.outdated = true;
    const ev = { change: Math.abs(next - prev), at: now, outdated: false };
    let idx = -1;
    list.forEach((e, i) => {
      if (e.outdated) idx = i;
    });
    if (idx >= 0) list[idx] = ev;
    else list.push(ev);
    map.set(key, list);
  }

  /** getReplicasChangePerPeriod over scale-ups and scale-downs. */
  changes(key: string, periodSeconds: number, now: number): { added: number; deleted: number } {
    const within = (list: ScaleEvent[] | undefined) => (list ?? []).filter((e) => e.at > now - periodSeconds * 1000).reduce((n, e) => n + e.change, 0);
    return { added: within(this.up.get(key)), deleted: within(this.down.get(key)) };
  }
}

/** calculateScaleUpLimitWithScalingRules. */
export function scaleUpLimitWithRules(current: number, key: string, events: ScaleEvents, rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const minChange = rules.selectPolicy === 'Min';
  let result = minChange ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  for (const p of rules.policies ?? []) {
    const { added, deleted } = events.changes(key, p.periodSeconds, now);
    const start = current - added + deleted;
    const proposed = p.type === 'Pods' ? start + p.value : p.type === 'Percent' ? Math.ceil(start * (1 + p.value / 100)) : start;
    result = minChange ? Math.min(result, proposed) : Math.max(result, proposed);
  }
  return result;
}

/** calculateScaleDownLimitWithBehaviors. */
export function scaleDownLimitWithRules(current: number, key: string, events: ScaleEvents, rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const minChange = rules.selectPolicy === 'Min';
  let result = minChange ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  for (const p of rules.policies ?? []) {
    const { added, deleted } = events.changes(key, p.periodSeconds, now);
    const start = current - added + deleted;
    const proposed = p.type === 'Pods' ? start - p.value : p.type === 'Percent' ? Math.trunc(start * (1 - p.value / 100)) : start;
    result = minChange ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

/** convertDesiredReplicasWithBehaviorRate: clamps by min/max and the rate policies, naming the limit. */
export function convertDesiredReplicasWithBehaviorRate(
  a: { key: string; current: number; desired: number; min: number; max: number; up: HPAScalingRules; down: HPAScalingRules },
  events: ScaleEvents,
  now: number,
): { replicas: number; reason: string; message: string } {
  if (a.desired > a.current) {
    let limit = scaleUpLimitWithRules(a.current, a.key, events, a.up, now);
    if (limit < a.current) limit = a.current;
    let maxAllowed = a.max;
    let reason: string;
    let message: string;
    if (maxAllowed > limit) {
      maxAllowed = limit;
      reason = 'ScaleUpLimit';
      message = 'the desired replica count is increasing faster than the maximum scale rate';
    } else {
      reason = 'TooManyReplicas';
      message = 'the desired replica count is more than the maximum replica count';
    }
    if (a.desired > maxAllowed) return { replicas: maxAllowed, reason, message };
  } else if (a.desired < a.current) {
    let limit = scaleDownLimitWithRules(a.current, a.key, events, a.down, now);
    if (limit > a.current) limit = a.current;
    let minAllowed = a.min;
    let reason: string;
    let message: string;
    if (minAllowed < limit) {
      minAllowed = limit;
      reason = 'ScaleDownLimit';
      message = 'the desired replica count is decreasing faster than the maximum scale rate';
    } else {
      reason = 'TooFewReplicas';
      message = 'the desired replica count is less than the minimum replica count';
    }
    if (a.desired < minAllowed) return { replicas: minAllowed, reason, message };
  }
  return { replicas: a.desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}
