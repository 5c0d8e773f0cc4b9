/**
 * The API server's Prometheus metrics, named as kube-apiserver's so existing
 * dashboards work: apiserver_request_total, apiserver_request_duration_seconds,
 * apiserver_longrunning_requests, apiserver_storage_objects and
 * etcd_request_duration_seconds. Each handler has its own registry.
 */
import { Registry } from 'prom-client';
import { LabeledCounter, LabeledGauge, LabeledHistogram } from '../util/metrics/labeled.js';
import type { Storage, StorageEvent } from './storage/storage.js';
import type { Logger } from '../util/log/logger.js';

export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
  code: string;
}

export interface ApiMetrics {
  readonly registry: Registry;
  observeRequest(labels: RequestLabels, seconds: number): void;
  /** Open long-running requests (watches) go up by 1 and down by 1. */
  longRunning(r: { group: string; version: string; resource: string }, subresource: string, delta: number): void;
  /** Wraps storage so every call is timed into etcd_request_duration_seconds. */
  instrument(storage: Storage): Storage;
  /** Keeps apiserver_storage_objects current from a storage watch. Returns a stop function. */
  trackObjects(storage: Storage, logger: Logger): Promise<() => void>;
  text(): Promise<string>;
}

/** `/registry/apps/deployments/ns/x` -> `deployments.apps`; `/registry/pods/ns/x` -> `pods`. */
export function resourceOfKey(key: string): string {
  // segments ['', 'registry', group-or-resource, resource?, ...], found without splitting the
  // whole key: this runs for every stored object when the server starts
  const segment = (from: number): [string, number] => {
    const end = key.indexOf('/', from);
    return end < 0 ? [key.slice(from), -1] : [key.slice(from, end), end];
  };
  const s1 = key.indexOf('/');
  const s2 = s1 < 0 ? -1 : key.indexOf('/', s1 + 1);
  if (s2 < 0) return '';
  const [a, s3] = segment(s2 + 1);
  if (!(a.includes('.') || a === 'apps' || a === 'batch' || a === 'autoscaling' || a === 'policy')) return a;
  return `${s3 < 0 ? '' : segment(s3 + 1)[0]}.${a}`;
}

const latencyBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

export function newApiMetrics(): ApiMetrics {
  const registry = new Registry();
  const requests = new LabeledCounter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
    registers: [registry],
  });
  const duration = new LabeledHistogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    buckets: latencyBuckets,
    registers: [registry],
  });
  const longrunning = new LabeledGauge({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    registers: [registry],
  });
  const objects = new LabeledGauge({
    name: 'apiserver_storage_objects',
    help: 'Number of stored objects at the time of last check split by kind.',
    labelNames: ['resource'],
    registers: [registry],
  });
  const etcd = new LabeledHistogram({
    name: 'etcd_request_duration_seconds',
    help: 'Etcd request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'type'],
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    registers: [registry],
  });

  // A request's two children by one key (each metric keeps its children too, but by its own label values).
  const requestChildren = new Map<string, { count: ReturnType<typeof requests.with>; time: ReturnType<typeof duration.with> }>();

  function timed<T>(operation: string, key: string, fn: () => Promise<T>): Promise<T> {
    const child = etcd.with(operation, resourceOfKey(key));
    const start = performance.now();
    return fn().finally(() => child.observe((performance.now() - start) / 1000));
  }

  return {
    registry,
    observeRequest(l, seconds) {
      const k = `${l.verb} ${l.group} ${l.version} ${l.resource} ${l.subresource} ${l.scope} ${l.component} ${l.code}`;
      let c = requestChildren.get(k);
      if (!c) {
        const { verb, group, version, resource, subresource, scope, component, code } = l;
        requestChildren.set(k, (c = { count: requests.with(verb, group, version, resource, subresource, scope, component, code), time: duration.with(verb, group, version, resource, subresource, scope, component) }));
      }
      c.count.inc();
      c.time.observe(seconds);
    },
    longRunning(r, subresource, delta) {
      longrunning.with('WATCH', r.group, r.version, r.resource, subresource, 'resource', 'apiserver').inc(delta);
    },
    instrument(storage) {
      return {
        currentRevision: () => storage.currentRevision(),
        compactedRevision: () => storage.compactedRevision(),
        get: (key) => timed('get', key, () => storage.get(key)),
        list: (prefix, opts) => timed('listWithCount', prefix, () => storage.list(prefix, opts)),
        create: (key, obj) => timed('create', key, () => storage.create(key, obj)),
        update: (key, obj, pre) => timed('update', key, () => storage.update(key, obj, pre)),
        delete: (key, pre) => timed('delete', key, () => storage.delete(key, pre)),
        watch: (prefix, from, onEvent, onError) => storage.watch(prefix, from, onEvent, onError),
        compact: (rev) => storage.compact(rev),
        close: () => storage.close(),
      };
    },
    async trackObjects(storage, logger) {
      const counts = new Map<string, number>();
      const list = await storage.list('/registry/');
      for (const it of list.items) {
        const r = resourceOfKey(it.key);
        counts.set(r, (counts.get(r) ?? 0) + 1);
      }
      for (const [r, n] of counts) objects.with(r).set(n);
      const h = storage.watch(
        '/registry/',
        list.revision,
        (e: StorageEvent) => {
          if (e.type === 'MODIFIED') return;
          const r = resourceOfKey(e.key);
          const n = (counts.get(r) ?? 0) + (e.type === 'ADDED' ? 1 : -1);
          counts.set(r, n);
          objects.with(r).set(n);
        },
        (err) => logger.error(err, 'apiserver_storage_objects tracking stopped'),
      );
      return () => h.stop();
    },
    text: () => registry.metrics(),
  };
}
