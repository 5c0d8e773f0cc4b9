/**
 * client-go's REST client metrics, under the names users already graph.
 * Metrics are registered once per Registry and shared by every client using it.
 */
import { register as defaultRegistry, type Registry } from 'prom-client';
import { LabeledCounter, LabeledHistogram, registeredIn } from '../util/metrics/labeled.js';

/** client-go's request latency buckets (seconds). */
export const REQUEST_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export interface RestClientMetrics {
  /** `code` is the HTTP status, or `<error>` when no response came back. */
  requestResult(code: string, method: string, host: string): void;
  requestLatency(verb: string, host: string, seconds: number): void;
  rateLimiterLatency(verb: string, host: string, seconds: number): void;
}

const cache = new WeakMap<Registry, RestClientMetrics>();

export function restClientMetrics(registry: Registry = defaultRegistry): RestClientMetrics {
  const hit = cache.get(registry);
  if (hit) return hit;
  const requests = registeredIn(registry, LabeledCounter, { name: 'rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'method', 'host'] });
  const latency = registeredIn(registry, LabeledHistogram, {
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: REQUEST_LATENCY_BUCKETS,
  });
  const limiter = registeredIn(registry, LabeledHistogram, {
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'Client side rate limiter latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: REQUEST_LATENCY_BUCKETS,
  });
  const m: RestClientMetrics = {
    requestResult: (code, method, host) => requests.with(code, method, host).inc(),
    requestLatency: (verb, host, s) => latency.with(verb, host).observe(s),
    rateLimiterLatency: (verb, host, s) => limiter.with(verb, host).observe(s),
  };
  cache.set(registry, m);
  return m;
}
