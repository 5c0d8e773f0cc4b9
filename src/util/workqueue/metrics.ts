/**
 * Work queue metrics (client-go util/workqueue metrics.go and
 * component-base/metrics/prometheus/workqueue). A queue records metrics only
 * when it has a name and its provider is not the no-op provider.
 */

import { register as defaultRegistry, type Registry } from 'prom-client';
import { LabeledCounter, LabeledGauge, LabeledHistogram, registeredIn } from '../metrics/labeled.js';
import type { Clock } from '../clock/clock.js';

export interface GaugeMetric {
  inc(): void;
  dec(): void;
}

export interface SettableGaugeMetric {
  set(value: number): void;
}

export interface CounterMetric {
  inc(): void;
}

export interface HistogramMetric {
  observe(value: number): void;
}

/** Makes one metric of each kind per queue name. Called once per queue at construction. */
export interface WorkqueueMetricsProvider {
  newDepthMetric(name: string): GaugeMetric;
  newAddsMetric(name: string): CounterMetric;
  /** Seconds an item waited in the queue before get(). */
  newLatencyMetric(name: string): HistogramMetric;
  /** Seconds between get() and done(). */
  newWorkDurationMetric(name: string): HistogramMetric;
  newUnfinishedWorkSecondsMetric(name: string): SettableGaugeMetric;
  newLongestRunningProcessorSecondsMetric(name: string): SettableGaugeMetric;
  newRetriesMetric(name: string): CounterMetric;
}

const noopMetric: GaugeMetric & SettableGaugeMetric & CounterMetric & HistogramMetric = {
  inc() {},
  dec() {},
  set() {},
  observe() {},
};

/** Records nothing; queues using it skip metrics bookkeeping entirely. */
export const noopWorkqueueMetricsProvider: WorkqueueMetricsProvider = {
  newDepthMetric: () => noopMetric,
  newAddsMetric: () => noopMetric,
  newLatencyMetric: () => noopMetric,
  newWorkDurationMetric: () => noopMetric,
  newUnfinishedWorkSecondsMetric: () => noopMetric,
  newLongestRunningProcessorSecondsMetric: () => noopMetric,
  newRetriesMetric: () => noopMetric,
};

let defaultProvider: WorkqueueMetricsProvider = noopWorkqueueMetricsProvider;

/**
 * Sets the provider used by queues created afterwards without an explicit
 * `metrics` option (client-go's workqueue.SetProvider). Returns the previous one.
 */
export function setDefaultWorkqueueMetricsProvider(provider: WorkqueueMetricsProvider): WorkqueueMetricsProvider {
  const prev = defaultProvider;
  defaultProvider = provider;
  return prev;
}

export function getDefaultWorkqueueMetricsProvider(): WorkqueueMetricsProvider {
  return defaultProvider;
}

/** Per-queue bookkeeping behind the metrics; undefined means "no metrics". */
export interface QueueMetrics<T> {
  add(item: T): void;
  get(item: T): void;
  done(item: T): void;
  /** Sets the unfinished-work and longest-running gauges from the items being processed now. */
  updateUnfinishedWork(): void;
}

class DefaultQueueMetrics<T> implements QueueMetrics<T> {
  private readonly addTimes = new Map<T, number>();
  private readonly processingStartTimes = new Map<T, number>();
  private readonly depth: GaugeMetric;
  private readonly adds: CounterMetric;
  private readonly latency: HistogramMetric;
  private readonly workDuration: HistogramMetric;
  private readonly unfinished: SettableGaugeMetric;
  private readonly longest: SettableGaugeMetric;

  constructor(
    provider: WorkqueueMetricsProvider,
    name: string,
    private readonly clock: Clock,
  ) {
    this.depth = provider.newDepthMetric(name);
    this.adds = provider.newAddsMetric(name);
    this.latency = provider.newLatencyMetric(name);
    this.workDuration = provider.newWorkDurationMetric(name);
    this.unfinished = provider.newUnfinishedWorkSecondsMetric(name);
    this.longest = provider.newLongestRunningProcessorSecondsMetric(name);
  }

  add(item: T): void {
    this.adds.inc();
    this.depth.inc();
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.clock.now());
  }

  get(item: T): void {
    this.depth.dec();
    this.processingStartTimes.set(item, this.clock.now());
    const start = this.addTimes.get(item);
    if (start !== undefined) {
      this.latency.observe(this.clock.since(start) / 1000);
      this.addTimes.delete(item);
    }
  }

  done(item: T): void {
    const start = this.processingStartTimes.get(item);
    if (start !== undefined) {
      this.workDuration.observe(this.clock.since(start) / 1000);
      this.processingStartTimes.delete(item);
    }
  }

  updateUnfinishedWork(): void {
    let total = 0;
    let oldest = 0;
    for (const start of this.processingStartTimes.values()) {
      const age = this.clock.since(start) / 1000;
      total += age;
      if (age > oldest) oldest = age;
    }
    this.unfinished.set(total);
    this.longest.set(oldest);
  }
}

/** Queue metrics for `name`, or undefined when the queue is unnamed or the provider is the no-op one. */
export function newQueueMetrics<T>(
  provider: WorkqueueMetricsProvider,
  name: string | undefined,
  clock: Clock,
): QueueMetrics<T> | undefined {
  if (!name || provider === noopWorkqueueMetricsProvider) return undefined;
  return new DefaultQueueMetrics<T>(provider, name, clock);
}

/** The retries counter of a named queue, or undefined. */
export function newRetryMetric(provider: WorkqueueMetricsProvider, name: string | undefined): CounterMetric | undefined {
  if (!name || provider === noopWorkqueueMetricsProvider) return undefined;
  return provider.newRetriesMetric(name);
}

/** client-go's ExponentialBuckets(10e-7, 10, 10): 1e-6 s .. 1e3 s. */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Array.from({ length: 10 }, (_, i) => Number((1e-6 * 10 ** i).toPrecision(1)));

function gauge(registry: Registry, name: string, help: string): LabeledGauge {
  return registeredIn(registry, LabeledGauge, { name, help, labelNames: ['name'] });
}

function counter(registry: Registry, name: string, help: string): LabeledCounter {
  return registeredIn(registry, LabeledCounter, { name, help, labelNames: ['name'] });
}

function histogram(registry: Registry, name: string, help: string): LabeledHistogram {
  return registeredIn(registry, LabeledHistogram, { name, help, labelNames: ['name'], buckets: WORKQUEUE_DURATION_BUCKETS });
}

/**
 * A provider registering in a prom-client Registry (through bound metrics: util/metrics/labeled.ts), with the metric names, help texts, `name`
 * label and buckets of Kubernetes' workqueue metrics. Metrics are registered
 * in `registry` (default: prom-client's global registry); calling this twice
 * with one registry reuses the registered metrics.
 */
export function newPrometheusWorkqueueMetrics(registry: Registry = defaultRegistry): WorkqueueMetricsProvider {
  const depth = gauge(registry, 'workqueue_depth', 'Current depth of workqueue');
  const adds = counter(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue');
  const latency = histogram(
    registry,
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested.',
  );
  const workDuration = histogram(
    registry,
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes.',
  );
  const unfinished = gauge(
    registry,
    'workqueue_unfinished_work_seconds',
    'How many seconds of work has done that is in progress and hasn\'t been observed by work_duration. ' +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
  );
  const longest = gauge(
    registry,
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
  );
  const retries = counter(registry, 'workqueue_retries_total', 'Total number of retries handled by workqueue');
  return {
    newDepthMetric: (name) => depth.with(name),
    newAddsMetric: (name) => adds.with(name),
    newLatencyMetric: (name) => latency.with(name),
    newWorkDurationMetric: (name) => workDuration.with(name),
    newUnfinishedWorkSecondsMetric: (name) => unfinished.with(name),
    newLongestRunningProcessorSecondsMetric: (name) => longest.with(name),
    newRetriesMetric: (name) => retries.with(name),
  };
}
