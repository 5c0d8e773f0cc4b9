export type { Queue, DelayingQueue, RateLimiter, RateLimitingQueue } from './interfaces.js';
export { newQueue, DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD_MS, type QueueOptions } from './queue.js';
export { newDelayingQueue, type DelayingQueueOptions } from './delaying-queue.js';
export { newRateLimitingQueue, newDefaultRateLimitingQueue, type RateLimitingQueueOptions } from './rate-limiting-queue.js';
export {
  newItemExponentialFailureRateLimiter,
  defaultItemBasedRateLimiter,
  newItemFastSlowRateLimiter,
  newBucketRateLimiter,
  newMaxOfRateLimiter,
  newWithMaxWaitRateLimiter,
  defaultControllerRateLimiter,
} from './rate-limiters.js';
export { TokenBucket } from './token-bucket.js';
export {
  newPrometheusWorkqueueMetrics,
  noopWorkqueueMetricsProvider,
  setDefaultWorkqueueMetricsProvider,
  getDefaultWorkqueueMetricsProvider,
  WORKQUEUE_DURATION_BUCKETS,
  type WorkqueueMetricsProvider,
  type GaugeMetric,
  type SettableGaugeMetric,
  type CounterMetric,
  type HistogramMetric,
} from './metrics.js';
export {
  recordSync,
  debugQueueStates,
  debugRecentSyncs,
  debugQueueOf,
  debugQueueMark,
  claimDebugQueues,
  MAX_DEBUG_QUEUES,
  type QueueDebug,
  type SyncRecord,
} from './debug.js';
