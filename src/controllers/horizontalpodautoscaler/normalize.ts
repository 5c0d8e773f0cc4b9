/**
 * Turning a metric recommendation into the replica count to apply
 * (pkg/controller/podautoscaler/horizontal.go normalizeDesiredReplicas,
 * convertDesiredReplicasWithRules, stabilizeRecommendation) and the
 * condition bookkeeping of autoscaling/v2 status.
 */
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition } from 'kubernetes-types/autoscaling/v2.js';

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
      if (now - r.at <= downWindowMs) downLimit = Math.max(downLimit, r.replicas);
      if (now - r.at <= upWindowMs) upLimit = Math.min(upLimit, r.replicas);
    }
    if (current === undefined) return downLimit; // no behavior: only scale-down is stabilized
    // With behavior: never move past current in the stabilized direction.
    let out = current;
    if (out < upLimit) out = upLimit;
    if (out > downLimit) out = downLimit;
    return out;
  }
}
