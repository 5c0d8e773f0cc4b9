/**
 * The shared processor and its listeners (client-go shared_informer.go:
 * sharedProcessor, processorListener). Each handler gets a listener with an
 * unbounded buffer and its own delivery loop, so a slow handler delays only
 * itself: never other handlers, never the informer's FIFO.
 *
 * A handler may return a promise; its listener waits for it before handing
 * over the next notification (deliveries to one handler are serial and in
 * order). Exceptions and rejections are logged and never stop delivery.
 */
import type { KubeObject } from '../../api/types.js';
import type { Logger } from '../../util/log/logger.js';
import type { DeletedFinalStateUnknown, ResourceEventHandler, ResourceEventHandlerRegistration } from './interfaces.js';
import { RingBuffer } from './ring-buffer.js';

export type Notification<T> =
  | { kind: 'add'; obj: T; isInInitialList: boolean }
  | { kind: 'update'; oldObj: T; newObj: T }
  | { kind: 'delete'; obj: T | DeletedFinalStateUnknown<T> };

/** Handlers shorter than this are raised to it (client-go's minimumResyncPeriod). */
export const MINIMUM_RESYNC_PERIOD_MS = 1000;

/**
 * The effective resync period of a handler: 0 stays 0, no resync check
 * (checkMs 0) means none, and a period below the check period is raised to it.
 */
export function determineResyncPeriod(desiredMs: number, checkMs: number, log?: Logger): number {
  if (desiredMs === 0) return 0;
  if (checkMs === 0) {
    log?.warn({ desiredMs }, 'the informer does not resync: the handler will not be resynced');
    return 0;
  }
  if (desiredMs < checkMs) {
    log?.warn({ desiredMs, checkMs }, 'resync period raised to the informer resync check period');
    return checkMs;
  }
  return desiredMs;
}

export class ProcessorListener<T extends KubeObject> implements ResourceEventHandlerRegistration {
  private readonly buffer = new RingBuffer<Notification<T>>();
  // invariant: pendingInitial counts initial-list adds queued or being handled.
  private pendingInitial = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private nextResync = 0;
  resyncPeriodMs: number;
  running: Promise<void> | undefined;

  constructor(
    readonly handler: ResourceEventHandler<T>,
    readonly requestedResyncPeriodMs: number,
    resyncPeriodMs: number,
    now: number,
    private readonly upstreamHasSynced: () => boolean,
    private readonly log: Logger,
  ) {
    this.resyncPeriodMs = resyncPeriodMs;
    this.determineNextResync(now);
  }

  /** True once the informer synced and this handler has handled every initial-list add. */
  hasSynced(): boolean {
    return this.pendingInitial === 0 && this.upstreamHasSynced();
  }

  add(n: Notification<T>): void {
    if (this.stopped) return;
    if (n.kind === 'add' && n.isInInitialList) this.pendingInitial++;
    this.buffer.push(n);
    const w = this.wake;
    if (w) {
      this.wake = undefined;
      w();
    }
  }

  /** Pending notifications (for tests and metrics). */
  pending(): number {
    return this.buffer.length;
  }

  /** Delivers notifications until stop(); resolves after the handler call in flight returns. */
  async run(): Promise<void> {
    while (!this.stopped) {
      const n = this.buffer.shift();
      if (n === undefined) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      try {
        const r = this.deliver(n);
        if (r !== undefined && typeof (r as Promise<unknown>).then === 'function') await r;
      } catch (err) {
        this.log.error(err, { notification: n.kind }, 'event handler failed');
      } finally {
        if (n.kind === 'add' && n.isInInitialList) this.pendingInitial--;
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.buffer.clear();
    const w = this.wake;
    if (w) {
      this.wake = undefined;
      w();
    }
  }

  shouldResync(now: number): boolean {
    return this.resyncPeriodMs !== 0 && now >= this.nextResync;
  }

  determineNextResync(now: number): void {
    this.nextResync = now + this.resyncPeriodMs;
  }

  private deliver(n: Notification<T>): unknown {
    const h = this.handler;
    switch (n.kind) {
      case 'add':
        return h.onAdd?.(n.obj, n.isInInitialList);
      case 'update':
        return h.onUpdate?.(n.oldObj, n.newObj);
      case 'delete':
        return h.onDelete?.(n.obj);
      default: {
        const never: never = n;
        return never;
      }
    }
  }
}

/** Fans notifications out to listeners; decides which listeners are due a resync. */
export class SharedProcessor<T extends KubeObject> {
  private readonly listeners = new Map<ProcessorListener<T>, boolean>(); // value: is syncing
  private started = false;
  private stopped = false;

  addListener(l: ProcessorListener<T>): void {
    this.listeners.set(l, false);
    if (this.started && !this.stopped) l.running = l.run();
  }

  removeListener(l: ProcessorListener<T>): void {
    if (!this.listeners.delete(l)) return;
    l.stop();
  }

  listenerCount(): number {
    return this.listeners.size;
  }

  /** Non-sync notifications go to every listener; sync ones only to listeners due a resync. */
  distribute(n: Notification<T>, sync: boolean): void {
    for (const [l, syncing] of this.listeners) {
      if (!sync || syncing) l.add(n);
    }
  }

  /** Marks the listeners due a resync at `now`; true when any is. */
  shouldResync(now: number): boolean {
    let needed = false;
    for (const l of this.listeners.keys()) {
      const due = l.shouldResync(now);
      this.listeners.set(l, due);
      if (due) {
        needed = true;
        l.determineNextResync(now);
      }
    }
    return needed;
  }

  resyncCheckPeriodChanged(checkMs: number, log?: Logger): void {
    for (const l of this.listeners.keys()) l.resyncPeriodMs = determineResyncPeriod(l.requestedResyncPeriodMs, checkMs, log);
  }

  /** Runs every listener until the signal aborts; resolves after all delivery loops ended. */
  async run(signal: AbortSignal): Promise<void> {
    this.started = true;
    for (const l of this.listeners.keys()) l.running = l.run();
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    this.stopped = true;
    const runs: Promise<void>[] = [];
    for (const l of this.listeners.keys()) {
      l.stop();
      if (l.running) runs.push(l.running);
    }
    await Promise.all(runs);
  }
}
