/**
 * SharedIndexInformer (client-go shared_informer.go + controller.go): one
 * reflector and one indexer per resource, shared by any number of handlers.
 *
 * Flow: reflector -> DeltaFIFO (transform applied on entry) -> pop ->
 * indexer updated -> notification to every handler's listener.
 *
 * - An update whose old and new resourceVersion are equal (a resync or a
 *   relist of an unchanged object) is a sync: only handlers due a resync get it.
 * - A handler added after start first receives an add (isInInitialList true)
 *   for every cached object; its registration's hasSynced() turns true once
 *   it has handled them and the informer itself has synced.
 * - Handler resync periods are raised to at least 1 s; before start, a shorter
 *   period than the informer's lowers the informer's check period; after
 *   start it is raised to the informer's (client-go addEventHandlerWithResyncPeriod).
 */
import type { KubeObject } from '../../api/types.js';
import type { Clock } from '../../util/clock/clock.js';
import { realClock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { newLogger } from '../../util/log/logger.js';
import type { Backoff } from '../../util/wait/backoff.js';
import type { DeltaFIFO, Deltas } from './delta-fifo.js';
import { FIFOClosedError, newDeltaFIFO } from './delta-fifo.js';
import type {
  DeletedFinalStateUnknown,
  Indexer,
  Indexers,
  KeyFunc,
  ListerWatcher,
  ResourceEventHandler,
  ResourceEventHandlerRegistration,
  SharedIndexInformer,
  Store,
  TransformFunc,
} from './interfaces.js';
import { MINIMUM_RESYNC_PERIOD_MS, ProcessorListener, SharedProcessor, determineResyncPeriod } from './processor.js';
import type { Reflector, WatchStatus } from './reflector.js';
import { newReflector } from './reflector.js';
import { metaNamespaceKeyFunc, newIndexer } from './store.js';

export interface SharedIndexInformerOptions<T extends KubeObject> {
  /** Default resync period of handlers and the informer's resync check period; 0 = none. */
  resyncPeriodMs?: number;
  indexers?: Indexers<T>;
  clock?: Clock;
  /** For logs (e.g. `pods/v1`). */
  name?: string;
  keyFunc?: KeyFunc<T>;
  logger?: Logger;
  /** Passed to the reflector. */
  pageSize?: number;
  minWatchTimeoutMs?: number;
  backoff?: Backoff;
}

function resourceVersionOf(obj: unknown): string | undefined {
  return (obj as KubeObject | undefined)?.metadata?.resourceVersion;
}

class SharedIndexInformerImpl<T extends KubeObject> implements SharedIndexInformer<T> {
  private readonly indexer: Indexer<T>;
  private readonly processor = new SharedProcessor<T>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly keyFunc: KeyFunc<T>;
  private readonly defaultHandlerResyncMs: number;
  private resyncCheckPeriodMs: number;
  private transform: TransformFunc | undefined;
  private started = false;
  private stopped = false;
  private fifo: DeltaFIFO<T> | undefined;
  private reflector: Reflector | undefined;
  private syncWaiters: Array<(synced: boolean) => void> = [];

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly opts: SharedIndexInformerOptions<T>,
  ) {
    this.clock = opts.clock ?? realClock;
    this.keyFunc = opts.keyFunc ?? metaNamespaceKeyFunc;
    this.indexer = newIndexer<T>({ keyFunc: this.keyFunc, indexers: opts.indexers ?? {} });
    this.log = opts.logger ?? newLogger('informer', { informer: opts.name ?? 'informer' });
    this.defaultHandlerResyncMs = opts.resyncPeriodMs ?? 0;
    this.resyncCheckPeriodMs = opts.resyncPeriodMs ?? 0;
  }

  addEventHandler(handler: ResourceEventHandler<T>, resyncPeriodMs?: number): ResourceEventHandlerRegistration {
    if (this.stopped) throw new Error(`handler was not added to informer ${this.opts.name ?? ''}: it has stopped`);
    let period = resyncPeriodMs ?? this.defaultHandlerResyncMs;
    if (period > 0) {
      if (period < MINIMUM_RESYNC_PERIOD_MS) {
        this.log.warn({ requestedMs: period }, 'resync period too small, raised to the minimum');
        period = MINIMUM_RESYNC_PERIOD_MS;
      }
      if (period < this.resyncCheckPeriodMs) {
        if (this.started) {
          this.log.warn({ requestedMs: period, checkMs: this.resyncCheckPeriodMs }, 'informer already started: resync period raised to its check period');
          period = this.resyncCheckPeriodMs;
        } else {
          this.resyncCheckPeriodMs = period;
          this.processor.resyncCheckPeriodChanged(period, this.log);
        }
      }
    }
    const listener = new ProcessorListener<T>(
      handler,
      period,
      determineResyncPeriod(period, this.resyncCheckPeriodMs, this.log),
      this.clock.now(),
      () => this.hasSynced(),
      this.log,
    );
    this.processor.addListener(listener);
    if (this.started) {
      // Synchronous with delta handling, so no notification can slip between
      // the snapshot and the registration.
      for (const obj of this.indexer.list()) listener.add({ kind: 'add', obj, isInInitialList: true });
    }
    return listener;
  }

  removeEventHandler(reg: ResourceEventHandlerRegistration): void {
    if (reg instanceof ProcessorListener) this.processor.removeListener(reg as ProcessorListener<T>);
  }

  getStore(): Store<T> {
    return this.indexer;
  }

  getIndexer(): Indexer<T> {
    return this.indexer;
  }

  addIndexers(indexers: Indexers<T>): void {
    this.indexer.addIndexers(indexers);
  }

  hasSynced(): boolean {
    return this.fifo?.hasSynced() ?? false;
  }

  whenSynced(signal?: AbortSignal): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    if (this.stopped || signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== waiter);
        resolve(false);
      };
      const waiter = (synced: boolean) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(synced);
      };
      this.syncWaiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Wakes whenSynced() waiters once synced (or with false once stopped). */
  private settleSyncWaiters(): void {
    if (this.syncWaiters.length === 0) return;
    const synced = this.hasSynced();
    if (!synced && !this.stopped) return;
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w(synced);
  }

  lastSyncResourceVersion(): string {
    return this.reflector?.lastSyncResourceVersion() ?? '';
  }

  watchStatus(): WatchStatus | undefined {
    return this.reflector?.watchStatus();
  }

  setTransform(fn: TransformFunc): void {
    if (this.started) throw new Error('setTransform: the informer has already started');
    this.transform = fn;
  }

  isStopped(): boolean {
    return this.stopped;
  }

  async run(signal: AbortSignal): Promise<void> {
    if (this.started) {
      this.log.warn('the informer has already been started');
      return;
    }
    if (this.stopped) return;
    this.started = true;
    const fifo = newDeltaFIFO<T>({ keyFunc: this.keyFunc, knownObjects: this.indexer, transform: this.transform });
    this.fifo = fifo;
    // An empty initial list syncs the FIFO without a pop: check after replace too.
    const store = {
      add: (obj: T) => fifo.add(obj),
      update: (obj: T) => fifo.update(obj),
      delete: (obj: T | DeletedFinalStateUnknown<T>) => fifo.delete(obj),
      replace: (items: T[], rv: string) => {
        fifo.replace(items, rv);
        this.settleSyncWaiters();
      },
      resync: () => fifo.resync(),
    };
    this.reflector = newReflector<T>({
      name: this.opts.name,
      lw: this.lw,
      store,
      clock: this.clock,
      resyncPeriodMs: this.resyncCheckPeriodMs,
      shouldResync: () => this.processor.shouldResync(this.clock.now()),
      pageSize: this.opts.pageSize,
      minWatchTimeoutMs: this.opts.minWatchTimeoutMs,
      backoff: this.opts.backoff,
      logger: this.log.child({}, 'reflector'),
    });
    const processorStop = new AbortController();
    const processorRun = this.processor.run(processorStop.signal);
    const processLoop = this.processLoop(fifo);
    try {
      await this.reflector.run(signal);
    } finally {
      fifo.close();
      await processLoop;
      processorStop.abort();
      await processorRun;
      this.stopped = true;
      this.settleSyncWaiters();
    }
  }

  private async processLoop(fifo: DeltaFIFO<T>): Promise<void> {
    const handle = (deltas: Deltas<T>, isInInitialList: boolean) => this.handleDeltas(deltas, isInInitialList);
    while (!fifo.isClosed()) {
      try {
        await fifo.pop(handle);
        this.settleSyncWaiters();
      } catch (err) {
        if (err instanceof FIFOClosedError) return;
        this.log.error(err, 'processing deltas failed');
      }
    }
  }

  // client-go processDeltas: oldest first, store first, then notify.
  private handleDeltas(deltas: Deltas<T>, isInInitialList: boolean): void {
    for (const d of deltas) {
      switch (d.type) {
        case 'Sync':
        case 'Replaced':
        case 'Added':
        case 'Updated': {
          const obj = d.object as T;
          const old = this.indexer.get(obj);
          if (old !== undefined) {
            this.indexer.update(obj);
            // As client-go: an unchanged resourceVersion (both unset included) marks a sync.
            const isSync = resourceVersionOf(obj) === resourceVersionOf(old);
            this.processor.distribute({ kind: 'update', oldObj: old, newObj: obj }, isSync);
          } else {
            this.indexer.add(obj);
            this.processor.distribute({ kind: 'add', obj, isInInitialList }, false);
          }
          break;
        }
        case 'Deleted': {
          const obj = d.object as T | DeletedFinalStateUnknown<T>;
          this.indexer.delete(obj as T);
          this.processor.distribute({ kind: 'delete', obj }, false);
          break;
        }
        default: {
          const never: never = d.type;
          this.log.warn({ type: never }, 'unknown delta type');
        }
      }
    }
  }
}

/** An informer over `lw`. Add the namespace index with `indexers: namespaceIndexers()`. */
export function newSharedIndexInformer<T extends KubeObject = KubeObject>(
  lw: ListerWatcher<T>,
  opts: SharedIndexInformerOptions<T> = {},
): SharedIndexInformer<T> {
  return new SharedIndexInformerImpl<T>(lw, opts);
}

/** client-go NewSharedInformer: the same without indices. */
export const newSharedInformer = newSharedIndexInformer;
