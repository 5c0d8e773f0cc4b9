/**
 * A controller of kcm/runtime (controller-runtime's internal controller):
 * watches feed a rate-limited queue of `namespace/name` keys, and workers
 * call the reconciler with each key.
 *
 * The reconcile contract:
 * - `reconcile(ctx, { namespace, name })` returns nothing (done),
 *   `{ requeueAfter: ms }` (again after that long, failures forgotten) or
 *   `{ requeue: true }` (again after the rate limiter's delay);
 * - a thrown error requeues the key through the rate limiter (per-item
 *   exponential backoff 5 ms .. 1000 s, and an overall 10 qps / 100 burst
 *   bucket, client-go's defaults); a TerminalError is logged and counted
 *   but not retried;
 * - one key is never reconciled twice at once, and a key added while queued
 *   is queued once;
 * - every object of the `for` kind is reconciled once at start, and again
 *   every sync period (the cache's resync);
 * - before a key's reconcile, the writes its previous reconcile made through
 *   the runtime client must show in the cache (bounded, 5 s by default).
 */
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { EventRecorder } from '../tools/record/interfaces.js';
import type { Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import type { RateLimiter, RateLimitingQueue } from '../util/workqueue/interfaces.js';
import { newRateLimitingQueue } from '../util/workqueue/rate-limiting-queue.js';
import { defaultControllerRateLimiter } from '../util/workqueue/rate-limiters.js';
import type { HandlerRegistration, ObjectKey, ObservedWrite, RuntimeCache } from './cache.js';
import type { RuntimeClient } from './client.js';
import { isTerminalError } from './errors.js';
import { kindString, type ResourceKind, type RuntimeObject } from './kinds.js';
import { initControllerMetrics, runtimeMetrics, type RuntimeMetrics } from './metrics.js';
import type { ObjectEvent, Predicate } from './predicates.js';
import { DEFAULT_READ_YOUR_WRITES_TIMEOUT_MS, recordingWrites, waitForObserved, type WriteLog } from './read-your-writes.js';

/** What to reconcile: the object's namespace ('' for cluster-scoped kinds) and name. */
export interface Request {
  namespace: string;
  name: string;
}

/** What a reconcile asks for next. Returning nothing means done until the next change. */
export interface Result {
  /** Reconcile again after this many milliseconds (the key's failure count is reset). */
  requeueAfter?: number;
  /** Reconcile again after the rate limiter's delay for this key. */
  requeue?: boolean;
}

export interface ReconcileContext<T extends RuntimeObject> {
  /** Aborts when the controller stops (shutdown or lost leadership): pass it to long waits. */
  readonly signal: AbortSignal;
  /** Carries controller, namespace, name and reconcileID. */
  readonly log: Logger;
  readonly reconcileID: string;
  readonly client: RuntimeClient;
  /** Records events as this controller (`component` = the controller name). */
  readonly recorder: EventRecorder;
  /** The kind the controller reconciles. */
  readonly kind: ResourceKind<T>;
  /** A copy of the requested object from the cache, or undefined when it is gone. */
  get(): Promise<T | undefined>;
}

export type ReconcileFunc<T extends RuntimeObject> = (ctx: ReconcileContext<T>, req: Request) => Promise<Result | void> | Result | void;

export interface Reconciler<T extends RuntimeObject> {
  reconcile: ReconcileFunc<T>;
}

export interface ControllerOptions {
  /** Workers, so distinct keys reconciled at once (default 1). */
  maxConcurrentReconciles?: number;
  /** Default: client-go's controller rate limiter. */
  rateLimiter?: RateLimiter<string>;
  /** Wait for the cache to show the previous reconcile's writes (default on, 5 s). */
  readYourWrites?: boolean | { timeoutMs: number };
  /** How long to wait for this controller's caches at start (default 2 min). */
  cacheSyncTimeoutMs?: number;
}

/** Maps one change to the requests it should enqueue. */
export type EventMapper = (event: ObjectEvent) => Request[];

export interface WatchSpec {
  kind: ResourceKind;
  toRequests: EventMapper;
  predicates: Predicate[];
}

export interface ControllerDeps {
  name: string;
  forKind: ResourceKind;
  watches: WatchSpec[];
  reconcile: ReconcileFunc<RuntimeObject>;
  cache: RuntimeCache;
  client: RuntimeClient;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  options: ControllerOptions;
  /** How long in-flight reconciles may run on after stop (default 30 s). */
  gracefulShutdownTimeoutMs: number;
}

/** A controller as the manager runs it. */
export interface RuntimeController {
  readonly name: string;
  /** Watches, waits for caches, runs workers until the signal aborts; resolves when every reconcile has finished. */
  start(signal: AbortSignal): Promise<void>;
  /** Enqueues a request by hand (also for external events). */
  enqueue(req: Request): void;
  /** Queued keys (waiting, not in progress). */
  queueLength(): number;
}

export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 2 * 60_000;
/** Pending read-your-writes records beyond which observed ones are swept. */
const PENDING_WRITES_SWEEP_AT = 1024;

export function requestKey(req: ObjectKey): string {
  return req.namespace ? `${req.namespace}/${req.name}` : req.name;
}

function keyRequest(key: string): Request {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

class Controller implements RuntimeController {
  readonly name: string;
  private queue: RateLimitingQueue<string> | undefined;
  private readonly metrics: RuntimeMetrics;
  private readonly pendingWrites = new Map<string, ObservedWrite[]>();
  private readonly active = new Set<Promise<void>>();
  private readonly workers: number;
  private readonly rywTimeoutMs: number | undefined;

  constructor(private readonly d: ControllerDeps) {
    this.name = d.name;
    this.metrics = runtimeMetrics(d.registry);
    this.workers = Math.max(1, d.options.maxConcurrentReconciles ?? 1);
    const ryw = d.options.readYourWrites ?? true;
    this.rywTimeoutMs = ryw === false ? undefined : ryw === true ? DEFAULT_READ_YOUR_WRITES_TIMEOUT_MS : ryw.timeoutMs;
  }

  queueLength(): number {
    return this.queue?.len() ?? 0;
  }

  enqueue(req: Request): void {
    this.queue?.add(requestKey(req));
  }

  async start(signal: AbortSignal): Promise<void> {
    const d = this.d;
    initControllerMetrics(this.metrics, this.name, this.workers);
    const queue = newRateLimitingQueue<string>(d.options.rateLimiter ?? defaultControllerRateLimiter<string>(d.clock), {
      name: this.name,
      clock: d.clock,
      metrics: this.metrics.workqueue,
    });
    this.queue = queue;
    const onAbort = () => queue.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    const regs: HandlerRegistration[] = [];
    try {
      d.logger.info({ source: d.watches.map((w) => kindString(w.kind)).join(', ') }, 'Starting EventSource');
      for (const w of d.watches) {
        regs.push(
          d.cache.addHandler(w.kind, (event) => {
            for (const p of w.predicates) if (!p(event)) return;
            for (const req of w.toRequests(event)) queue.add(requestKey(req));
          }),
        );
      }
      d.logger.info({}, 'Starting Controller');
      if (!(await this.waitForHandlers(regs, signal))) {
        if (signal.aborted) return;
        throw new Error(`controller ${this.name}: timed out waiting for caches to sync`);
      }
      d.logger.info({ 'worker count': this.workers }, 'Starting workers');
      await Promise.all(Array.from({ length: this.workers }, () => this.worker(queue, signal)));
      await this.drain();
      d.logger.info({}, 'All workers finished');
    } finally {
      signal.removeEventListener('abort', onAbort);
      queue.shutDown();
      for (const r of regs) r.remove();
    }
  }

  private async waitForHandlers(regs: HandlerRegistration[], signal: AbortSignal): Promise<boolean> {
    const timeout = new AbortController();
    const timer = this.d.clock.setTimer(() => timeout.abort(new Error('cache sync timeout')), this.d.options.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS);
    try {
      const both = AbortSignal.any([signal, timeout.signal]);
      return (await Promise.all(regs.map((r) => r.whenSynced(both)))).every(Boolean);
    } finally {
      timer.stop();
    }
  }

  /** After stop: lets in-flight reconciles finish, up to the graceful shutdown timeout. */
  private async drain(): Promise<void> {
    if (this.active.size === 0) return;
    let timer: { stop(): boolean } | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = this.d.clock.setTimer(() => resolve(true), this.d.gracefulShutdownTimeoutMs);
    });
    const finished = Promise.all(this.active).then(() => false);
    if (await Promise.race([finished, timedOut])) {
      this.d.logger.warn({ inFlight: this.active.size, timeoutMs: this.d.gracefulShutdownTimeoutMs }, 'reconciles still running after the graceful shutdown timeout');
    }
    timer?.stop();
  }

  private async worker(queue: RateLimitingQueue<string>, signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      if (signal.aborted) {
        queue.done(key);
        continue;
      }
      this.metrics.activeWorkers.labels(this.name).inc();
      const run = this.reconcileHandler(queue, key, signal);
      this.active.add(run);
      try {
        await run;
      } finally {
        this.active.delete(run);
        queue.done(key);
        this.metrics.activeWorkers.labels(this.name).dec();
      }
    }
  }

  private async reconcileHandler(queue: RateLimitingQueue<string>, key: string, signal: AbortSignal): Promise<void> {
    const d = this.d;
    const req = keyRequest(key);
    const pending = this.pendingWrites.get(key);
    if (pending && this.rywTimeoutMs !== undefined) {
      const t0 = d.clock.now();
      const outcome = await waitForObserved(d.cache, pending, this.rywTimeoutMs, d.clock, signal);
      if (outcome === 'aborted') return;
      this.metrics.readYourWritesWaits.labels(this.name, outcome).inc();
      this.metrics.readYourWritesWaitSeconds.labels(this.name).observe(d.clock.since(t0) / 1000);
      if (outcome === 'timeout') d.logger.v(1).info({ key, timeoutMs: this.rywTimeoutMs }, 'cache did not show our previous writes in time; reconciling anyway');
    }
    this.pendingWrites.delete(key);
    const reconcileID = randomUUID();
    const log = d.logger.child({ namespace: req.namespace, name: req.name, reconcileID });
    const ctx: ReconcileContext<RuntimeObject> = {
      signal,
      log,
      reconcileID,
      client: d.client,
      recorder: d.recorder,
      kind: d.forKind,
      get: () => d.client.get(d.forKind, req),
    };
    const start = d.clock.now();
    const writeLog: WriteLog = { writes: [] };
    try {
      log.v(5).info({}, 'Reconciling');
      const result = (await recordingWrites(writeLog, async () => d.reconcile(ctx, req))) ?? {};
      if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
        queue.forget(key);
        queue.addAfter(key, result.requeueAfter);
        this.metrics.reconcileTotal.labels(this.name, 'requeue_after').inc();
        log.v(5).info({ requeueAfterMs: result.requeueAfter }, 'Reconcile done, requeueing after');
      } else if (result.requeue) {
        queue.addRateLimited(key);
        this.metrics.reconcileTotal.labels(this.name, 'requeue').inc();
        log.v(5).info({}, 'Reconcile done, requeueing');
      } else {
        queue.forget(key);
        this.metrics.reconcileTotal.labels(this.name, 'success').inc();
        log.v(5).info({}, 'Reconcile successful');
      }
    } catch (err) {
      if (isTerminalError(err)) {
        this.metrics.terminalReconcileErrors.labels(this.name).inc();
        queue.forget(key);
      } else if (!signal.aborted) {
        queue.addRateLimited(key);
      }
      this.metrics.reconcileErrors.labels(this.name).inc();
      this.metrics.reconcileTotal.labels(this.name, 'error').inc();
      log.error(err, { terminal: isTerminalError(err) }, 'Reconciler error');
    } finally {
      if (writeLog.writes.length > 0) {
        this.pendingWrites.set(key, writeLog.writes);
        if (this.pendingWrites.size > PENDING_WRITES_SWEEP_AT) this.sweepObservedWrites();
      }
      this.metrics.reconcileTime.labels(this.name).observe(d.clock.since(start) / 1000);
    }
  }

  /** Forgets writes the cache already shows, so keys reconciled once in a long while hold no memory. */
  private sweepObservedWrites(): void {
    for (const [key, writes] of this.pendingWrites) {
      if (writes.every((w) => this.d.cache.hasObserved(w))) this.pendingWrites.delete(key);
    }
  }
}

export function newController(deps: ControllerDeps): RuntimeController {
  return new Controller(deps);
}
