/**
 * The contracts of the informer machinery (client-go tools/cache).
 * Objects returned from any Store are shared cache state: treat them as
 * read-only and copy (structuredClone) before changing.
 */
import type { KubeList, KubeObject } from '../../api/types.js';
import type { Selector } from '../../api/labels-selector.js';
import type { ListOptions, Watch, WatchOptions } from '../../client/interfaces.js';
import type { WatchStatus } from './reflector.js';

/** Maps an object to its store key (`namespace/name` by default). */
export type KeyFunc<T> = (obj: T | DeletedFinalStateUnknown<T>) => string;

/** Maps an object to the index values it is filed under. */
export type IndexFunc<T> = (obj: T) => string[];
export type Indexers<T> = Record<string, IndexFunc<T>>;

/**
 * The last known state of an object that was deleted while the watch was
 * down: the relist no longer contained it. `obj` may be stale.
 */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

export interface Store<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  list(): T[];
  listKeys(): string[];
  get(obj: T): T | undefined;
  getByKey(key: string): T | undefined;
  /** Replaces the whole content (after a list). */
  replace(items: T[], resourceVersion: string): void;
  /** Only meaningful for queues (DeltaFIFO): emits Sync for every known object. */
  resync(): void;
}

export interface Indexer<T> extends Store<T> {
  /** Objects sharing any index value with `obj` under `indexName`. */
  index(indexName: string, obj: T): T[];
  /** Keys of objects filed under `value`. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value the index currently holds. */
  listIndexFuncValues(indexName: string): string[];
  byIndex(indexName: string, value: string): T[];
  getIndexers(): Indexers<T>;
  /** Adds indexers; allowed before or after objects were added (the index is rebuilt). */
  addIndexers(indexers: Indexers<T>): void;
}

/** Lists and watches one resource: the reflector's source. */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(opts: ListOptions): Promise<KubeList<T>>;
  watch(opts: WatchOptions, signal: AbortSignal): Promise<Watch<T>>;
}

export interface ResourceEventHandler<T> {
  onAdd?(obj: T, isInInitialList: boolean): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** `obj` is a DeletedFinalStateUnknown when the deletion was inferred from a relist. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

export interface ResourceEventHandlerRegistration {
  /** True once this handler has been handed every object of the initial list. */
  hasSynced(): boolean;
}

export type TransformFunc = (obj: unknown) => unknown;

export interface SharedInformer<T extends KubeObject = KubeObject> {
  /**
   * Adds a handler. Added after start, it first receives a synthetic add for
   * every cached object. `resyncPeriodMs` 0 means no resync for this handler.
   */
  addEventHandler(handler: ResourceEventHandler<T>, resyncPeriodMs?: number): ResourceEventHandlerRegistration;
  removeEventHandler(reg: ResourceEventHandlerRegistration): void;
  getStore(): Store<T>;
  /** True once the initial list has been delivered to the store. */
  hasSynced(): boolean;
  /**
   * Resolves true as soon as hasSynced() is (without polling), false when
   * the signal aborts or the informer stops first.
   */
  whenSynced(signal?: AbortSignal): Promise<boolean>;
  lastSyncResourceVersion(): string;
  /** The reflector's watch state (undefined before run()): for readiness checks. */
  watchStatus(): WatchStatus | undefined;
  /** Must be called before run(): applied to every object before it is stored. */
  setTransform(fn: TransformFunc): void;
  /** Runs until the signal aborts; resolves once everything it started has stopped. */
  run(signal: AbortSignal): Promise<void>;
  isStopped(): boolean;
}

export interface SharedIndexInformer<T extends KubeObject = KubeObject> extends SharedInformer<T> {
  addIndexers(indexers: Indexers<T>): void;
  getIndexer(): Indexer<T>;
}

/** Read access to a namespaced slice of a cache. */
export interface NamespaceLister<T> {
  list(selector?: Selector): T[];
  get(name: string): T | undefined;
}

/** Read access to a cache: what controllers use instead of the server. */
export interface Lister<T> {
  /** All objects (all namespaces) matching the selector. */
  list(selector?: Selector): T[];
  /** A cluster-scoped object by name. */
  get(name: string): T | undefined;
  namespace(ns: string): NamespaceLister<T>;
}
