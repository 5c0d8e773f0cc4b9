/**
 * kcm/workqueue: client-go's util/workqueue. Queues of keys where a key
 * waiting is queued once and a key being processed is never handed to two
 * workers; delaying and rate-limited variants; the rate limiters
 * controllers use (per-item exponential backoff, token bucket, max-of).
 *
 *   const q = newRateLimitingQueue<string>(defaultControllerRateLimiter(), { name: 'widgets' });
 *   const key = await q.get(); try { await sync(key); q.forget(key); } catch { q.addRateLimited(key); } finally { q.done(key); }
 */
export type { Queue, DelayingQueue, RateLimiter, RateLimitingQueue } from '../util/workqueue/interfaces.js';
export { newQueue, type QueueOptions } from '../util/workqueue/queue.js';
export { newDelayingQueue, type DelayingQueueOptions } from '../util/workqueue/delaying-queue.js';
export { newRateLimitingQueue, newDefaultRateLimitingQueue, type RateLimitingQueueOptions } from '../util/workqueue/rate-limiting-queue.js';
export {
  newItemExponentialFailureRateLimiter,
  defaultItemBasedRateLimiter,
  newItemFastSlowRateLimiter,
  newBucketRateLimiter,
  newMaxOfRateLimiter,
  newWithMaxWaitRateLimiter,
  defaultControllerRateLimiter,
} from '../util/workqueue/rate-limiters.js';
export {
  newPrometheusWorkqueueMetrics,
  setDefaultWorkqueueMetricsProvider,
  type WorkqueueMetricsProvider,
  type GaugeMetric,
  type SettableGaugeMetric,
  type CounterMetric,
  type HistogramMetric,
} from '../util/workqueue/metrics.js';
