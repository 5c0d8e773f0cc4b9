/**
 * Metrics with controller-runtime's names, labels and buckets, so existing
 * dashboards and alerts for Go operators work unchanged:
 * controller_runtime_reconcile_total{controller,result},
 * controller_runtime_reconcile_errors_total, ..._terminal_reconcile_errors_total,
 * ..._reconcile_time_seconds, ..._max_concurrent_reconciles,
 * ..._active_workers, and the workqueue_* family labelled name and controller.
 *
 * One set per prom-client Registry (each manager has its own registry).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LabeledCounter, LabeledGauge, LabeledHistogram } from '../util/metrics/labeled.js';
import type { WorkqueueMetricsProvider } from '../util/workqueue/metrics.js';

export interface RuntimeMetrics {
  reconcileTotal: Counter<'controller' | 'result'>;
  reconcileErrors: Counter<'controller'>;
  terminalReconcileErrors: Counter<'controller'>;
  reconcileTime: Histogram<'controller'>;
  maxConcurrentReconciles: Gauge<'controller'>;
  activeWorkers: Gauge<'controller'>;
  /** kcm's own: waits before a reconcile for the cache to show the previous reconcile's writes, by outcome (observed, timeout). */
  readYourWritesWaits: Counter<'controller' | 'outcome'>;
  readYourWritesWaitSeconds: Histogram<'controller'>;
  workqueue: WorkqueueMetricsProvider;
}

const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10,
  15, 20, 25, 30, 40, 50, 60,
];
/** prometheus.ExponentialBuckets(10e-9, 10, 12): 1e-8 s .. 1e3 s. */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

const byRegistry = new WeakMap<Registry, RuntimeMetrics>();

export function runtimeMetrics(registry: Registry): RuntimeMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  // The work queue's, updated on every item, with their label values bound once (util/metrics/labeled.ts).
  const wq = (name: string, help: string) => new LabeledCounter({ name, help, labelNames: ['name', 'controller'], registers });
  const wqGauge = (name: string, help: string) => new LabeledGauge({ name, help, labelNames: ['name', 'controller'], registers });
  const wqHist = (name: string, help: string) => new LabeledHistogram({ name, help, labelNames: ['name', 'controller'], buckets: WORKQUEUE_BUCKETS, registers });
  const depth = new LabeledGauge({ name: 'workqueue_depth', help: 'Current depth of workqueue by workqueue and priority', labelNames: ['name', 'controller', 'priority'], registers });
  const adds = wq('workqueue_adds_total', 'Total number of adds handled by workqueue');
  const latency = wqHist('workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested');
  const work = wqHist('workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.');
  const unfinished = wqGauge(
    'workqueue_unfinished_work_seconds',
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
  );
  const longest = wqGauge('workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.');
  const retries = wq('workqueue_retries_total', 'Total number of retries handled by workqueue');
  const m: RuntimeMetrics = {
    reconcileTotal: new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'] as const, registers }),
    reconcileErrors: new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'] as const, registers }),
    terminalReconcileErrors: new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'] as const,
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'] as const,
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    maxConcurrentReconciles: new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'] as const, registers }),
    activeWorkers: new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', labelNames: ['controller'] as const, registers }),
    readYourWritesWaits: new Counter({
      name: 'kcm_runtime_read_your_writes_waits_total',
      help: "Reconciles that first waited for the cache to show the previous reconcile's writes, by outcome",
      labelNames: ['controller', 'outcome'] as const,
      registers,
    }),
    readYourWritesWaitSeconds: new Histogram({
      name: 'kcm_runtime_read_your_writes_wait_seconds',
      help: "How long reconciles waited for the cache to show the previous reconcile's writes",
      labelNames: ['controller'] as const,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    workqueue: {
      newDepthMetric: (name) => depth.with(name, name, ''),
      newAddsMetric: (name) => adds.with(name, name),
      newLatencyMetric: (name) => latency.with(name, name),
      newWorkDurationMetric: (name) => work.with(name, name),
      newUnfinishedWorkSecondsMetric: (name) => unfinished.with(name, name),
      newLongestRunningProcessorSecondsMetric: (name) => longest.with(name, name),
      newRetriesMetric: (name) => retries.with(name, name),
    },
  };
  byRegistry.set(registry, m);
  return m;
}

/** controller-runtime's initMetrics: every series of a controller exists (at 0) from its start. */
export function initControllerMetrics(m: RuntimeMetrics, controller: string, maxConcurrentReconciles: number): void {
  for (const result of ['error', 'requeue_after', 'requeue', 'success']) m.reconcileTotal.labels(controller, result).inc(0);
  m.reconcileErrors.labels(controller).inc(0);
  m.terminalReconcileErrors.labels(controller).inc(0);
  m.maxConcurrentReconciles.labels(controller).set(maxConcurrentReconciles);
  m.activeWorkers.labels(controller).set(0);
}
