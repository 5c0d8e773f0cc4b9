import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Registry } from 'prom-client';
import { FakeClock } from '../clock/clock.js';
import {
  getDefaultWorkqueueMetricsProvider,
  newPrometheusWorkqueueMetrics,
  noopWorkqueueMetricsProvider,
  setDefaultWorkqueueMetricsProvider,
  WORKQUEUE_DURATION_BUCKETS,
} from './metrics.js';
import { newQueue } from './queue.js';
import { newDelayingQueue } from './delaying-queue.js';

async function value(registry: Registry, metric: string, queue: string, suffix = ''): Promise<number | undefined> {
  const m = registry.getSingleMetric(metric);
  assert.ok(m, `${metric} is registered`);
  const data = await m.get();
  const want = metric + suffix;
  const values = data.values as { labels: Record<string, string | number>; value: number; metricName?: string }[];
  const v = values.find((x) => x.labels.name === queue && (x.metricName ?? metric) === want && x.labels.le === undefined);
  return v?.value;
}

describe('workqueue metrics', () => {
  it('registers client-go names with the duration buckets 1e-6 .. 1e3 s', () => {
    const registry = new Registry();
    newPrometheusWorkqueueMetrics(registry);
    const names = registry.getMetricsAsArray().map((m) => m.name).sort();
    assert.deepEqual(names, [
      'workqueue_adds_total',
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_queue_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_work_duration_seconds',
    ]);
    assert.deepEqual(WORKQUEUE_DURATION_BUCKETS, [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000]);
    // A second provider on the same registry reuses the metrics instead of throwing.
    newPrometheusWorkqueueMetrics(registry);
  });

  it('tracks depth, adds, queue and work durations of a named queue', async () => {
    const registry = new Registry();
    const clock = new FakeClock(0);
    const q = newQueue<string>({ name: 'rs', clock, metrics: newPrometheusWorkqueueMetrics(registry) });
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(await value(registry, 'workqueue_depth', 'rs'), 2);
    assert.equal(await value(registry, 'workqueue_adds_total', 'rs'), 2);
    await clock.advance(1500);
    assert.equal(await q.get(), 'a');
    assert.equal(await value(registry, 'workqueue_depth', 'rs'), 1);
    assert.equal(await value(registry, 'workqueue_queue_duration_seconds', 'rs', '_sum'), 1.5);
    assert.equal(await value(registry, 'workqueue_queue_duration_seconds', 'rs', '_count'), 1);
    await clock.advance(250);
    q.done('a');
    assert.equal(await value(registry, 'workqueue_work_duration_seconds', 'rs', '_sum'), 0.25);
    assert.equal(await value(registry, 'workqueue_work_duration_seconds', 'rs', '_count'), 1);
    q.shutDown();
  });

  it('updates unfinished work every 500 ms while items are processing and holds no timer when idle or shut down', async () => {
    const registry = new Registry();
    const clock = new FakeClock(0);
    const q = newQueue<string>({ name: 'dep', clock, metrics: newPrometheusWorkqueueMetrics(registry) });
    assert.equal(clock.pendingTimers(), 0, 'an idle queue holds no timer');
    q.add('a');
    q.add('b');
    await q.get();
    await clock.advance(1000);
    await q.get();
    await clock.advance(500);
    // a has run 1.5 s and b 0.5 s at the update at t=1500.
    assert.equal(await value(registry, 'workqueue_unfinished_work_seconds', 'dep'), 2);
    assert.equal(await value(registry, 'workqueue_longest_running_processor_seconds', 'dep'), 1.5);
    q.done('a');
    await clock.advance(500);
    assert.equal(await value(registry, 'workqueue_unfinished_work_seconds', 'dep'), 1);
    q.done('b');
    assert.equal(await value(registry, 'workqueue_unfinished_work_seconds', 'dep'), 0);
    assert.equal(await value(registry, 'workqueue_longest_running_processor_seconds', 'dep'), 0);
    assert.equal(clock.pendingTimers(), 0, 'no timer once nothing is processing');
    q.add('c');
    await q.get();
    assert.equal(clock.pendingTimers(), 1);
    q.shutDown();
    assert.equal(clock.pendingTimers(), 0, 'shutdown stops the update timer');
  });

  it('counts retries of a named delaying queue', async () => {
    const registry = new Registry();
    const clock = new FakeClock(0);
    const q = newDelayingQueue<string>({ name: 'job', clock, metrics: newPrometheusWorkqueueMetrics(registry) });
    q.addAfter('a', 10);
    q.addAfter('b', 0);
    assert.equal(await value(registry, 'workqueue_retries_total', 'job'), 2);
    q.shutDown();
  });

  it('records nothing for an unnamed queue', async () => {
    const registry = new Registry();
    const clock = new FakeClock(0);
    const q = newQueue<string>({ clock, metrics: newPrometheusWorkqueueMetrics(registry) });
    q.add('a');
    await q.get();
    assert.equal(await value(registry, 'workqueue_adds_total', ''), undefined);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('uses the process-wide default provider for queues created after it is set', async () => {
    const registry = new Registry();
    const prev = setDefaultWorkqueueMetricsProvider(newPrometheusWorkqueueMetrics(registry));
    try {
      assert.equal(prev, noopWorkqueueMetricsProvider);
      const q = newQueue<string>({ name: 'ns', clock: new FakeClock(0) });
      q.add('a');
      assert.equal(await value(registry, 'workqueue_adds_total', 'ns'), 1);
      q.shutDown();
    } finally {
      setDefaultWorkqueueMetricsProvider(prev);
    }
    assert.equal(getDefaultWorkqueueMetricsProvider(), noopWorkqueueMetricsProvider);
  });

  it('lets the process exit on the real clock once a named queue is idle, without shutDown', async () => {
    const queueUrl = new URL('./queue.js', import.meta.url).href;
    const metricsUrl = new URL('./metrics.js', import.meta.url).href;
    const script = `
      const { newQueue } = await import(${JSON.stringify(queueUrl)});
      const { newPrometheusWorkqueueMetrics } = await import(${JSON.stringify(metricsUrl)});
      const q = newQueue({ name: 'exit', metrics: newPrometheusWorkqueueMetrics() });
      q.add('a');
      const item = await q.get();
      q.done(item);
      q.add('b');
      console.log('idle');
    `;
    const started = Date.now();
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      );
    });
    assert.equal(out.trim(), 'idle');
    assert.ok(Date.now() - started < 5000, 'exited promptly');
  });
});
