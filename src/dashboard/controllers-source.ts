/**
 * The controllers view's data: kcm controller-manager's `/debug/controllers`
 * (queues with their keys, errors and recent syncs), or, from a controller
 * manager without it (the real kube-controller-manager), its `/metrics`:
 * client-go's workqueue_* series give depth, adds, retries, the longest
 * running item's age and sync duration percentiles, but no keys.
 *
 * Both are read with the dashboard's own credentials (the kubeconfig's
 * token or client certificate): the controller manager authenticates and
 * authorizes them through the API server as it does for /metrics.
 */
import { newKubeClient, type KubeClient } from '../client/client.js';
import { isNotFound } from '../client/errors.js';
import type { RestConfig } from '../client/rest-config.js';
import type { Logger } from '../util/log/logger.js';
import type { ControllersState, DebugControllers, QueueState } from './protocol.js';

export interface ControllersSourceOptions {
  /** `https://127.0.0.1:10257`. */
  url: string;
  /** The dashboard's API credentials; TLS to the controller manager is verified with caFile, else not at all (it serves a self-signed certificate by default). */
  restConfig: RestConfig;
  caFile?: string;
  logger: Logger;
  now?: () => number;
}

type Sample = { name: string; labels: Record<string, string>; value: number };

/** Prometheus text format, the parts needed here: `name{a="b",...} value`. */
export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** A quantile from cumulative histogram buckets (Prometheus' histogram_quantile, linear within a bucket). */
export function bucketQuantile(q: number, buckets: readonly { le: number; count: number }[]): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of sorted) {
    if (b.count >= rank) {
      if (!Number.isFinite(b.le)) return prevLe;
      const inBucket = b.count - prevCount;
      return inBucket === 0 ? b.le : prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/** The workqueue_* series as queue states; adds/s from the previous reading. */
export function queuesFromMetrics(samples: readonly Sample[], previous: ReadonlyMap<string, { adds: number; at: number }>, now: number): QueueState[] {
  const queues = new Map<string, QueueState & { buckets: { le: number; count: number }[] }>();
  const q = (name: string) => {
    let s = queues.get(name);
    if (!s) queues.set(name, (s = { name, depth: 0, adds: 0, addsPerSecond: 0, retries: 0, processing: [], longestRunningSeconds: 0, duration: { count: 0, p50: null, p90: null, p99: null }, buckets: [] }));
    return s;
  };
  for (const s of samples) {
    const name = s.labels.name;
    if (name === undefined || !s.name.startsWith('workqueue_')) continue;
    switch (s.name) {
      case 'workqueue_depth':
        q(name).depth = s.value;
        break;
      case 'workqueue_adds_total':
        q(name).adds = s.value;
        break;
      case 'workqueue_retries_total':
        q(name).retries = s.value;
        break;
      case 'workqueue_longest_running_processor_seconds':
        q(name).longestRunningSeconds = s.value;
        break;
      case 'workqueue_work_duration_seconds_bucket':
        q(name).buckets.push({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), count: s.value });
        break;
      case 'workqueue_work_duration_seconds_count':
        q(name).duration.count = s.value;
        break;
    }
  }
  return [...queues.values()].map(({ buckets, ...s }) => {
    const prev = previous.get(s.name);
    const secs = prev ? (now - prev.at) / 1000 : 0;
    return {
      ...s,
      addsPerSecond: prev && secs > 0 ? Math.max(0, (s.adds - prev.adds) / secs) : 0,
      duration: { count: s.duration.count, p50: bucketQuantile(0.5, buckets), p90: bucketQuantile(0.9, buckets), p99: bucketQuantile(0.99, buckets) },
    };
  });
}

export class ControllersSource {
  private readonly client: KubeClient;
  private readonly now: () => number;
  private mode: 'debug' | 'metrics' = 'debug';
  private previous = new Map<string, { adds: number; at: number }>();
  private last: ControllersState | null = null;
  /** The newest sync start read, so each read asks only for later ones. */
  private since: number | undefined;

  constructor(private readonly opts: ControllersSourceOptions) {
    this.now = opts.now ?? Date.now;
    const tls = { ...opts.restConfig.tls, caData: undefined, caFile: opts.caFile, insecureSkipTLSVerify: !opts.caFile, serverName: undefined };
    const { socketPath: _socket, ...rest } = opts.restConfig;
    this.client = newKubeClient({ ...rest, host: opts.url, tls, qps: 0, timeoutMs: 5_000 }, { logger: opts.logger });
  }

  /** Reads the controller manager once. The recent syncs (debug mode) go to onRecent. */
  async read(onRecent?: (d: DebugControllers) => void): Promise<ControllersState> {
    const base = this.opts.url.replace(/\/+$/, '');
    const now = this.now();
    try {
      if (this.mode === 'debug') {
        try {
          const d = await this.client.request<DebugControllers>('GET', '/debug/controllers', this.since !== undefined ? { query: { since: this.since } } : {});
          for (const r of d.recent) if (this.since === undefined || r.start > this.since) this.since = r.start;
          onRecent?.(d);
          this.last = { source: `${base}/debug/controllers`, mode: 'debug', ok: true, fetchedAt: now, controllers: d.controllers, queues: d.queues, ...(d.leaderElection ? { leaderElection: d.leaderElection } : {}) };
          return this.last;
        } catch (err) {
          // A controller manager without kcm's endpoint (kube-controller-manager answers 404): its metrics, from now on.
          if (!isNotFound(err)) throw err;
          this.mode = 'metrics';
        }
      }
      const text = await this.client.request<string>('GET', '/metrics', { accept: 'text/plain', responseType: 'text' });
      const queues = queuesFromMetrics(parsePrometheusText(text), this.previous, now);
      this.previous = new Map(queues.map((q) => [q.name, { adds: q.adds, at: now }]));
      this.last = { source: `${base}/metrics`, mode: 'metrics', ok: true, fetchedAt: now, controllers: [], queues };
      return this.last;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.last = { ...(this.last ?? { source: base, mode: this.mode, controllers: [], queues: [] }), ok: false, error: message, fetchedAt: now };
      return this.last;
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
