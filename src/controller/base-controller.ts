/**
 * The worker loop every controller shares: a rate-limited queue of keys and
 * N workers calling `sync(key)` (client-go's processNextWorkItem/handleErr).
 *
 *   const worker = newQueueWorker({ name: 'replicaset', clock, sync: (key) => this.syncReplicaSet(key), logger });
 *   informer.addEventHandler({ onAdd: (rs) => worker.enqueue(keyFunc(rs)) });
 *   await worker.run(workers, signal);
 */
import type { Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import type { RateLimiter, RateLimitingQueue } from '../util/workqueue/interfaces.js';
import { newRateLimitingQueue } from '../util/workqueue/rate-limiting-queue.js';
import { defaultControllerRateLimiter } from '../util/workqueue/rate-limiters.js';
import type { WorkqueueMetricsProvider } from '../util/workqueue/metrics.js';
import { recordSync } from '../util/workqueue/debug.js';

export const DEFAULT_MAX_RETRIES = 15;
/** How long run() waits for in-flight syncs after the signal aborted. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export interface QueueWorkerOptions {
  /** Names the queue (metrics, /debug/controllers) and the log lines. */
  name: string;
  clock: Clock;
  /**
   * Brings `key` to its desired state. A rejection requeues the key
   * rate-limited (up to maxRetries); success forgets its failures. The
   * signal aborts when the controller stops.
   */
  sync: (key: string, signal: AbortSignal) => Promise<void>;
  /** Failures of one key before it is dropped (default 15; Infinity retries forever). */
  maxRetries?: number;
  logger?: Logger;
  /** Default: client-go's controller limiter (per-item exponential 5 ms..1000 s, overall 10 qps burst 100). */
  rateLimiter?: RateLimiter<string>;
  metrics?: WorkqueueMetricsProvider;
  shutdownTimeoutMs?: number;
}

export interface QueueWorker {
  /** The queue (metrics, tests). */
  readonly queue: RateLimitingQueue<string>;
  enqueue(key: string): void;
  enqueueAfter(key: string, delayMs: number): void;
  enqueueRateLimited(key: string): void;
  /**
   * Starts `workers` loops and runs until `signal` aborts. Then the queue is
   * shut down, keys still waiting are dropped, and run waits for syncs in
   * progress (at most shutdownTimeoutMs). Resolves when the workers stopped.
   */
  run(workers: number, signal: AbortSignal): Promise<void>;
  /** False once the workers stopped without being asked to. */
  healthy(): boolean;
}

class Worker implements QueueWorker {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly maxRetries: number;
  private readonly shutdownTimeoutMs: number;
  private stoppedUnexpectedly = false;
  /**
   * What to do for each sync in flight when the run's signal aborts (start its shutdown timer): one listener on
   * the signal for all of them, as an AbortSignal walks its list of listeners on every add and remove, and
   * thousands of syncs a second share it.
   */
  private readonly inFlight = new Set<() => void>();

  constructor(private readonly opts: QueueWorkerOptions) {
    this.log = opts.logger ?? newLogger(opts.name);
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.shutdownTimeoutMs = opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const limiter = opts.rateLimiter ?? defaultControllerRateLimiter<string>(opts.clock);
    this.queue = newRateLimitingQueue<string>(limiter, {
      name: opts.name,
      clock: opts.clock,
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }
  enqueueAfter(key: string, delayMs: number): void {
    this.queue.addAfter(key, delayMs);
  }
  enqueueRateLimited(key: string): void {
    this.queue.addRateLimited(key);
  }

  healthy(): boolean {
    return !this.stoppedUnexpectedly;
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({ workers }, 'starting workers');
    const onAbort = () => {
      this.queue.shutDown();
      for (const f of this.inFlight) f();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const loops = Array.from({ length: Math.max(1, workers) }, () => this.workerLoop(signal));
    const all = Promise.all(loops);
    try {
      await all;
      if (!signal.aborted) {
        this.stoppedUnexpectedly = true;
        this.log.error({}, 'workers stopped without being asked to (queue shut down)');
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.queue.shutDown();
    }
    this.log.info({}, 'workers stopped');
  }

  /** Takes keys until the queue is shut down and empty. */
  private async workerLoop(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      if (signal.aborted) {
        // Stopping: keys still waiting are dropped, not synced.
        this.queue.done(key);
        continue;
      }
      await this.processItem(key, signal);
    }
  }

  private async processItem(key: string, signal: AbortSignal): Promise<void> {
    const start = this.opts.clock.now();
    try {
      await this.syncBounded(key, signal);
      recordSync(this.queue, key, start, this.opts.clock.since(start));
      this.queue.forget(key);
      this.log.v(4).info({ key, duration: this.opts.clock.since(start) }, 'synced');
    } catch (err) {
      // Recorded before the retry is queued, so /debug/controllers shows the error with the retry.
      recordSync(this.queue, key, start, this.opts.clock.since(start), err ?? new Error('sync failed'));
      this.handleError(err, key, signal);
    } finally {
      this.queue.done(key);
    }
  }

  /** Runs sync; after the signal aborted, gives it at most shutdownTimeoutMs more. */
  private syncBounded(key: string, signal: AbortSignal): Promise<void> {
    const running = this.opts.sync(key, signal);
    return new Promise<void>((resolve, reject) => {
      let timer: { stop(): boolean } | undefined;
      const onAbort = () => {
        timer = this.opts.clock.setTimer(() => {
          reject(new Error(`sync of ${key} did not finish within ${this.shutdownTimeoutMs} ms of shutdown`));
        }, this.shutdownTimeoutMs);
      };
      if (signal.aborted) onAbort();
      else this.inFlight.add(onAbort);
      running.then(
        () => {
          timer?.stop();
          this.inFlight.delete(onAbort);
          resolve();
        },
        (err: unknown) => {
          timer?.stop();
          this.inFlight.delete(onAbort);
          reject(err);
        },
      );
    });
  }

  private handleError(err: unknown, key: string, signal: AbortSignal): void {
    if (signal.aborted) {
      this.log.error(err, { key }, 'sync failed while stopping; not retrying');
      this.queue.forget(key);
      return;
    }
    const requeues = this.queue.numRequeues(key);
    if (requeues < this.maxRetries) {
      this.log.v(2).info({ key, err: err instanceof Error ? err.message : String(err), requeues }, 'error syncing; requeuing');
      this.queue.addRateLimited(key);
      return;
    }
    this.log.error(err, { key, requeues }, 'dropping key out of the queue');
    this.queue.forget(key);
  }
}

export function newQueueWorker(opts: QueueWorkerOptions): QueueWorker {
  return new Worker(opts);
}

/**
 * Polls the `hasSynced` functions every 100 ms until all are true (true) or
 * the signal aborts (false), logging like WaitForNamedCacheSync.
 */
export async function waitForCacheSync(
  name: string,
  signal: AbortSignal,
  clock: Clock,
  ...hasSynced: Array<() => boolean>
): Promise<boolean> {
  const log = newLogger(name);
  log.info({}, 'waiting for caches to sync');
  for (;;) {
    if (hasSynced.every((f) => f())) {
      log.info({}, 'caches are synced');
      return true;
    }
    if (signal.aborted) {
      log.error({}, 'unable to sync caches');
      return false;
    }
    try {
      await clock.sleep(100, signal);
    } catch {
      log.error({}, 'unable to sync caches');
      return false;
    }
  }
}
