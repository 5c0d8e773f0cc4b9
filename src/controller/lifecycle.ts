/**
 * The start-up and shut-down every controller's run() shares: log the start,
 * wait for the informer caches, run the workers, log the stop; and the health
 * that follows from it (a controller whose run ended without being asked to
 * is unhealthy).
 *
 *   this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log,
 *     starting: 'Starting controller', stopping: 'Shutting down controller' });
 *   run(workers, signal) { return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal)); }
 *   healthy() { return this.lifecycle.healthy() && this.worker.healthy(); }
 */
import type { Clock } from '../util/clock/clock.js';
import type { LogFields, Logger } from '../util/log/logger.js';
import { waitForCacheSync } from './base-controller.js';

export interface ControllerLifecycleOptions {
  /** The name the cache-sync log lines carry (waitForCacheSync). */
  name: string;
  clock: Clock;
  log: Logger;
  /** The message logged when run() starts. */
  starting: string;
  /** The message logged when run() ends, however it ends. */
  stopping: string;
  /** Fields of the start and stop lines (default none). */
  fields?: LogFields;
}

export interface ControllerLifecycle {
  /**
   * Logs `starting`, waits until every `synced` is true (returns early when
   * the signal aborts first), then awaits `body`; logs `stopping` on the way
   * out whatever happened. A rejection of `body` propagates.
   */
  run(signal: AbortSignal, synced: (() => boolean) | ReadonlyArray<() => boolean>, body: () => Promise<unknown>): Promise<void>;
  /** False once run() ended while the signal had not aborted. */
  healthy(): boolean;
}

class Lifecycle implements ControllerLifecycle {
  private stopped = false;

  constructor(private readonly opts: ControllerLifecycleOptions) {}

  healthy(): boolean {
    return !this.stopped;
  }

  async run(signal: AbortSignal, synced: (() => boolean) | ReadonlyArray<() => boolean>, body: () => Promise<unknown>): Promise<void> {
    const { name, clock, log, starting, stopping, fields = {} } = this.opts;
    const hasSynced = typeof synced === 'function' ? [synced] : synced;
    log.info(fields, starting);
    try {
      if (!(await waitForCacheSync(name, signal, clock, ...hasSynced))) return;
      await body();
    } finally {
      if (!signal.aborted) this.stopped = true;
      log.info(fields, stopping);
    }
  }
}

export function newControllerLifecycle(opts: ControllerLifecycleOptions): ControllerLifecycle {
  return new Lifecycle(opts);
}
