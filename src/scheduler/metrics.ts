/**
 * The scheduler's metrics, with kube-scheduler's names, labels and buckets
 * (pkg/scheduler/metrics): attempts by result and profile, attempt latency,
 * pending pods per queue, preemption attempts and victims, attempts per
 * scheduled pod.
 */
import { Counter, Gauge, Histogram, register as defaultRegistry, type Registry } from 'prom-client';
import type { QueueCounts } from './scheduling-queue.js';

export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

export interface SchedulerMetrics {
  /** One finished scheduling attempt (algorithm and, when scheduled, up to the binding). */
  attempt(profile: string, result: AttemptResult, seconds: number): void;
  preemptionAttempt(): void;
  preemptionVictims(n: number): void;
  /** A pod bound after `attempts` attempts. */
  podScheduled(attempts: number): void;
}

/** prometheus.ExponentialBuckets. */
function exponential(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

function once<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/**
 * Registers the metrics in `registry` (default: prom-client's global one).
 * `pending` is read at each scrape for scheduler_pending_pods.
 */
export function newSchedulerMetrics(pending: () => QueueCounts & { gated: number }, registry: Registry = defaultRegistry): SchedulerMetrics {
  const registers = [registry];
  const attempts = once(registry, 'scheduler_schedule_attempts_total', () => new Counter({
    name: 'scheduler_schedule_attempts_total',
    help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
    labelNames: ['profile', 'result'] as const,
    registers,
  }));
  const duration = once(registry, 'scheduler_scheduling_attempt_duration_seconds', () => new Histogram({
    name: 'scheduler_scheduling_attempt_duration_seconds',
    help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)',
    labelNames: ['profile', 'result'] as const,
    buckets: exponential(0.001, 2, 15),
    registers,
  }));
  once(registry, 'scheduler_pending_pods', () => new Gauge({
    name: 'scheduler_pending_pods',
    help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
    labelNames: ['queue'] as const,
    registers,
    collect() {
      const c = pending();
      this.set({ queue: 'active' }, c.active);
      this.set({ queue: 'backoff' }, c.backoff);
      this.set({ queue: 'unschedulable' }, c.unschedulable);
      this.set({ queue: 'gated' }, c.gated);
    },
  }));
  const preemptionAttempts = once(registry, 'scheduler_preemption_attempts_total', () => new Counter({
    name: 'scheduler_preemption_attempts_total',
    help: 'Total preemption attempts in the cluster till now',
    registers,
  }));
  const victims = once(registry, 'scheduler_preemption_victims', () => new Histogram({
    name: 'scheduler_preemption_victims',
    help: 'Number of selected preemption victims',
    buckets: exponential(1, 2, 7),
    registers,
  }));
  const podAttempts = once(registry, 'scheduler_pod_scheduling_attempts', () => new Histogram({
    name: 'scheduler_pod_scheduling_attempts',
    help: 'Number of attempts to successfully schedule a pod.',
    buckets: exponential(1, 2, 5),
    registers,
  }));
  return {
    attempt(profile, result, seconds) {
      attempts.inc({ profile, result });
      duration.observe({ profile, result }, seconds);
    },
    preemptionAttempt: () => preemptionAttempts.inc(),
    preemptionVictims: (n) => victims.observe(n),
    podScheduled: (n) => podAttempts.observe(n),
  };
}
