/**
 * Reflector (client-go tools/cache/reflector.go): keeps a store in step with
 * the server by listing once and then watching from the list's
 * resourceVersion, relisting whenever the watch cannot continue.
 *
 * Contract, as client-go:
 * - The list is paginated (500 per page) when it starts from "0" or "" (the
 *   initial list, or after the last resourceVersion became unavailable) or the
 *   server paginated before; a relist from a known resourceVersion asks for
 *   everything in one page so the watch cache can serve it. A continue token
 *   that expires part-way falls back to one full list.
 * - A list failing with 410/Expired (or "too large resource version") marks
 *   the last resourceVersion unavailable and is retried at once with "",
 *   a consistent read; the next successful list clears the mark.
 * - Watches ask for bookmarks and a server timeout drawn from [5, 10) minutes;
 *   each event and bookmark advances the last resourceVersion.
 * - A watch that ends (server timeout, closed stream) is reopened at once from
 *   the last resourceVersion; a stream silent for longer than its timeout
 *   plus a margin is taken as broken and reopened the same way.
 * - An ERROR event (410 included), a failing watch() call (other than
 *   connection errors and 429, which back off and retry the watch) and a
 *   watch closed within a second without events end the cycle: the reflector
 *   backs off (800 ms doubling to 30 s, full jitter, reset after 2 quiet
 *   minutes) and relists.
 * - While watching, every resyncPeriodMs the store's resync() is called if
 *   shouldResync (when given) says so.
 */
import type { KubeObject, Status } from '../../api/types.js';
import type { ListOptions, Watch, WatchOptions } from '../../client/interfaces.js';
import { StatusError, isNetworkError, isResourceExpired, isTooManyRequests } from '../../client/errors.js';
import type { Clock, Timer } from '../../util/clock/clock.js';
import { realClock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { newLogger } from '../../util/log/logger.js';
import { Backoff } from '../../util/wait/backoff.js';
import type { KubeList } from '../../api/types.js';
import type { DeletedFinalStateUnknown, ListerWatcher } from './interfaces.js';

/** What a reflector writes to: a DeltaFIFO or any Store. */
export interface ReflectorStore<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T | DeletedFinalStateUnknown<T>): void;
  replace(items: T[], resourceVersion: string): void;
  resync(): void;
}

export interface Reflector {
  /** Lists and watches until the signal aborts; resolves once the open watch is closed. */
  run(signal: AbortSignal): Promise<void>;
  /** The resourceVersion of the last list, event or bookmark seen; "" before the first list. */
  lastSyncResourceVersion(): string;
  /** Whether a watch is open now, since when, and the last error of a list or watch. */
  watchStatus(): WatchStatus;
}

/** The state of a reflector's watch, for health checks. */
export interface WatchStatus {
  /** True while a watch stream is open (between lists, backoffs and reconnects it is false). */
  watching: boolean;
  /** Clock time (ms) at which `watching` last changed (the reflector's start before the first watch). */
  sinceMs: number;
  /** The message of the last failed list or watch, cleared when a watch opens. */
  lastError?: string;
}

export interface ReflectorOptions<T extends KubeObject> {
  /** For logs: usually the resource (`pods/v1`). */
  name?: string;
  lw: ListerWatcher<T>;
  store: ReflectorStore<T>;
  clock?: Clock;
  /** 0 (default): no resync. */
  resyncPeriodMs?: number;
  shouldResync?: () => boolean;
  /** Page size of paginated lists (default 500). */
  pageSize?: number;
  /** Watch timeouts are drawn from [min, 2*min) (default 5 min). */
  minWatchTimeoutMs?: number;
  /** A watch without events for its timeout plus this is restarted (default 30 s). */
  watchSilenceMarginMs?: number;
  /** Defaults to client-go's 800 ms .. 30 s, jitter 1, reset after 2 min. */
  backoff?: Backoff;
  random?: () => number;
  logger?: Logger;
}

const DEFAULT_PAGE_SIZE = 500;
const SHORT_WATCH_MS = 1000;

/** An ERROR event of a watch stream, as an error. */
class WatchErrorEvent extends StatusError {
  constructor(status: Status) {
    super(status);
    this.name = 'WatchErrorEvent';
  }
}

function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof StatusError)) return false;
  return (err.status.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge');
}

class ReflectorImpl<T extends KubeObject> implements Reflector {
  private lastRV = '';
  private rvUnavailable = false;
  private paginatedResult = false;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private readonly name: string;
  private status: WatchStatus;

  constructor(private readonly opts: ReflectorOptions<T>) {
    this.clock = opts.clock ?? realClock;
    this.name = opts.name ?? 'reflector';
    this.log = opts.logger ?? newLogger('reflector', { reflector: this.name });
    this.random = opts.random ?? Math.random;
    this.backoff =
      opts.backoff ??
      new Backoff({ initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 120_000, clock: this.clock, random: this.random });
    this.status = { watching: false, sinceMs: this.clock.now() };
  }

  watchStatus(): WatchStatus {
    return { ...this.status };
  }

  private setWatching(watching: boolean, err?: unknown): void {
    const lastError = err === undefined ? (watching ? undefined : this.status.lastError) : String((err as Error)?.message ?? err);
    const sinceMs = watching === this.status.watching ? this.status.sinceMs : this.clock.now();
    this.status = lastError === undefined ? { watching, sinceMs } : { watching, sinceMs, lastError };
  }

  lastSyncResourceVersion(): string {
    return this.lastRV;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.log.v(3).info('starting reflector');
    while (!signal.aborted) {
      try {
        await this.listAndWatch(signal);
      } catch (err) {
        if (signal.aborted) break;
        this.setWatching(false, err);
        this.handleCycleError(err);
      }
      this.setWatching(false);
      if (signal.aborted) break;
      try {
        await this.clock.sleep(this.backoff.next(), signal);
      } catch {
        break;
      }
    }
    this.log.v(3).info('stopping reflector');
  }

  private handleCycleError(err: unknown): void {
    if (isResourceExpired(err)) this.log.v(1).info({ err: String(err) }, 'watch closed');
    else this.log.error(err, 'failed to list and watch');
  }

  private relistResourceVersion(): string {
    if (this.rvUnavailable) return '';
    return this.lastRV === '' ? '0' : this.lastRV;
  }

  private async listAndWatch(signal: AbortSignal): Promise<void> {
    await this.list(signal);
    if (signal.aborted) return;
    const resync = this.startResync();
    try {
      await this.watchLoop(signal);
    } finally {
      resync?.stop();
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const rv = this.relistResourceVersion();
    let list: KubeList<T>;
    try {
      list = await this.pagedList(rv);
    } catch (err) {
      if (signal.aborted) return;
      if (!isResourceExpired(err) && !isTooLargeResourceVersion(err)) {
        throw new Error(`failed to list ${this.name}: ${String((err as Error)?.message ?? err)}`, { cause: err });
      }
      this.log.v(2).info({ resourceVersion: rv }, 'resourceVersion unavailable, listing from the latest');
      this.rvUnavailable = true;
      try {
        list = await this.pagedList(this.relistResourceVersion());
      } catch (err2) {
        throw new Error(`failed to list ${this.name}: ${String((err2 as Error)?.message ?? err2)}`, { cause: err2 });
      }
    }
    if (signal.aborted) return;
    this.rvUnavailable = false;
    const listRV = list.metadata?.resourceVersion ?? '';
    this.opts.store.replace(list.items ?? [], listRV);
    this.lastRV = listRV;
    this.log.v(4).info({ items: list.items?.length ?? 0, resourceVersion: listRV }, 'listed');
  }

  private async pagedList(resourceVersion: string): Promise<KubeList<T>> {
    const configured = this.opts.pageSize ?? DEFAULT_PAGE_SIZE;
    const paginate = this.paginatedResult || resourceVersion === '' || resourceVersion === '0';
    let options: ListOptions = { resourceVersion };
    if (paginate && configured > 0) options.limit = configured;
    const items: T[] = [];
    for (let page = 0; ; page++) {
      let result: KubeList<T>;
      try {
        result = await this.opts.lw.list(options);
      } catch (err) {
        if (!options.continue || !isResourceExpired(err)) throw err;
        this.log.v(2).info('continue token expired, falling back to a full list');
        // As client-go's pager: the retry drops limit, continue and resourceVersion.
        return await this.opts.lw.list({});
      }
      const cont = result.metadata?.continue;
      if (page === 0) {
        if (!cont) return result;
        if (resourceVersion === '0') this.paginatedResult = true;
      }
      for (const item of result.items ?? []) items.push(item);
      if (!cont) return { ...result, items };
      options = { continue: cont };
      if (configured > 0) options.limit = configured;
    }
  }

  private startResync(): Timer | undefined {
    const period = this.opts.resyncPeriodMs ?? 0;
    if (period <= 0) return undefined;
    let timer: Timer;
    const handle: Timer = { stop: () => timer.stop() };
    const tick = () => {
      try {
        if (!this.opts.shouldResync || this.opts.shouldResync()) {
          this.log.v(4).info('forcing resync');
          this.opts.store.resync();
        }
      } catch (err) {
        this.log.error(err, 'resync failed');
      }
      timer = this.clock.setTimer(tick, period);
    };
    timer = this.clock.setTimer(tick, period);
    return handle;
  }

  private async watchLoop(signal: AbortSignal): Promise<void> {
    const minTimeout = this.opts.minWatchTimeoutMs ?? 5 * 60_000;
    while (!signal.aborted) {
      const timeoutSeconds = Math.floor((minTimeout / 1000) * (this.random() + 1));
      const opts: WatchOptions = { resourceVersion: this.lastRV, allowWatchBookmarks: true, timeoutSeconds };
      const ac = new AbortController();
      const onAbort = () => ac.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        let w: Watch<T>;
        try {
          w = await this.opts.lw.watch(opts, ac.signal);
        } catch (err) {
          if (signal.aborted) return;
          this.setWatching(false, err);
          if (isNetworkError(err) || isTooManyRequests(err)) {
            this.log.v(4).info({ err: String(err) }, 'watch failed, backing off');
            try {
              await this.clock.sleep(this.backoff.next(), signal);
            } catch {
              return;
            }
            continue;
          }
          throw err;
        }
        if (signal.aborted) {
          w.stop();
          return;
        }
        this.setWatching(true);
        const end = await this.consume(w, ac, timeoutSeconds, signal);
        if (signal.aborted) return;
        if (end.error) {
          const err = end.error;
          if (isResourceExpired(err)) {
            this.log.v(4).info({ err: err.message }, 'watch closed with an expired resourceVersion');
            return;
          }
          if (isTooManyRequests(err)) {
            this.log.v(2).info('watch returned 429, backing off');
            try {
              await this.clock.sleep(this.backoff.next(), signal);
            } catch {
              return;
            }
            continue;
          }
          this.log.warn({ err: err.message }, 'watch ended with an error');
          return;
        }
        if (!end.silent && end.events === 0 && end.durationMs < SHORT_WATCH_MS) {
          throw new Error(`very short watch of ${this.name}: the watch lasted less than a second and no items were received`);
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    }
  }

  /** Applies a watch's events until it ends; the stream is stopped on return. */
  private async consume(
    w: Watch<T>,
    ac: AbortController,
    timeoutSeconds: number,
    signal: AbortSignal,
  ): Promise<{ events: number; durationMs: number; silent: boolean; error?: WatchErrorEvent }> {
    const clock = this.clock;
    const store = this.opts.store;
    const start = clock.now();
    let lastEventAt = start;
    let events = 0;
    let silent = false;
    const limit = timeoutSeconds * 1000 + (this.opts.watchSilenceMarginMs ?? 30_000);
    const check = () => {
      const idle = clock.since(lastEventAt);
      if (idle < limit) {
        timer = clock.setTimer(check, limit - idle);
        return;
      }
      silent = true;
      this.log.warn({ idleMs: idle }, 'watch stream silent past its deadline, restarting it');
      w.stop();
      ac.abort(new Error('watch silent past its deadline'));
    };
    let timer = clock.setTimer(check, limit);
    try {
      for await (const ev of w) {
        if (signal.aborted || silent) break;
        lastEventAt = clock.now();
        switch (ev.type) {
          case 'ADDED':
          case 'MODIFIED':
          case 'DELETED': {
            const obj = ev.object;
            try {
              if (ev.type === 'ADDED') store.add(obj);
              else if (ev.type === 'MODIFIED') store.update(obj);
              else store.delete(obj);
            } catch (err) {
              this.log.error(err, { event: ev.type }, 'unable to apply watch event to the store');
            }
            const rv = obj?.metadata?.resourceVersion;
            if (rv) this.lastRV = rv;
            break;
          }
          case 'BOOKMARK': {
            const rv = ev.object?.metadata?.resourceVersion;
            if (rv) this.lastRV = rv;
            break;
          }
          case 'ERROR':
            return { events, durationMs: clock.since(start), silent, error: new WatchErrorEvent(ev.object) };
          default: {
            const unknown: never = ev;
            this.log.warn({ event: (unknown as { type?: string }).type }, 'unknown watch event type');
          }
        }
        events++;
      }
    } catch (err) {
      if (!signal.aborted && !silent) this.log.v(2).info({ err: String(err) }, 'watch stream broke');
    } finally {
      timer.stop();
      w.stop();
    }
    return { events, durationMs: clock.since(start), silent };
  }
}

export function newReflector<T extends KubeObject>(opts: ReflectorOptions<T>): Reflector {
  return new ReflectorImpl<T>(opts);
}
