/**
 * The manager's cache: one set of shared informers per kind, created when a
 * controller, an index or `cache.kinds` first asks for the kind and started
 * with the manager (or at once, when asked for after start).
 *
 * - Objects are stored without metadata.managedFields and with apiVersion
 *   and kind set (list items from the API server lack them).
 * - Per kind: label and field selectors, and the namespaces to cache (one
 *   informer per namespace, or one for all); the manager's `namespaces`
 *   apply to kinds without their own.
 * - Field indexes (`indexField`) answer `matchingFields` lists, per
 *   namespace or across all, as controller-runtime's field indexers.
 * - Reads hand out copies; the stored objects are never exposed.
 * - Every informer resyncs on the sync period (default 10 h), jittered to
 *   [0.9, 1.1) of it per informer as controller-runtime does.
 * - Read-your-own-writes: `hasObserved(write)` says whether the cache holds
 *   a written resourceVersion (or newer), and `onChange` wakes waiters.
 */
import type { KubeObject } from '../api/types.js';
import { parseSelector, selectorFromSet } from '../api/labels.js';
import type { Selector } from '../api/labels-selector.js';
import type { Client } from '../client/interfaces.js';
import type { SharedIndexInformer, ResourceEventHandlerRegistration } from '../tools/cache/interfaces.js';
import { DeletedFinalStateUnknown } from '../tools/cache/interfaces.js';
import { listWatchFromClient } from '../tools/cache/list-watch.js';
import { newSharedIndexInformer } from '../tools/cache/shared-informer.js';
import { namespaceIndexers } from '../tools/cache/store.js';
import { realClock, type Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { UncachedKindError } from './errors.js';
import { gvrOf, kindString, type ResourceKind, type RuntimeObject } from './kinds.js';
import type { ObjectEvent } from './predicates.js';
import { deepCopy } from '../util/json/deep-copy.js';

export const DEFAULT_SYNC_PERIOD_MS = 10 * 60 * 60 * 1000;
/** How long an informer's watch may stay down before readiness fails. */
export const DEFAULT_WATCH_GRACE_MS = 30_000;

/** How one kind is cached. */
export interface KindCacheOptions {
  kind: ResourceKind;
  /** Only objects matching this label selector are cached (and seen by watches). */
  labelSelector?: string;
  /** Only objects matching this field selector are cached. */
  fieldSelector?: string;
  /** Namespaces to cache this kind in (default: the manager's `namespaces`, else all). */
  namespaces?: string[];
}

export interface CacheOptions {
  client: Client;
  clock?: Clock;
  logger?: Logger;
  /** Namespaces to cache namespaced kinds in (default all). */
  namespaces?: string[];
  byKind?: KindCacheOptions[];
  /** Resync period (default 10 h), jittered per informer. */
  syncPeriodMs?: number;
  random?: () => number;
  watchGraceMs?: number;
}

/** Names an object: `{ namespace, name }` (no namespace for cluster-scoped kinds), as a reconcile request does. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

export interface CacheListOptions {
  namespace?: string;
  /** A label selector string (`app=web,tier!=db`) or a set of labels to match exactly. */
  labelSelector?: string | Record<string, string>;
  /** Exact values of fields indexed with `indexField` (controller-runtime's MatchingFields). */
  matchingFields?: Record<string, string>;
}

/** A write the cache should reflect before the next reconcile of the key that made it. */
export interface ObservedWrite {
  kind: ResourceKind;
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion: string;
  labels?: Record<string, string>;
  deleted: boolean;
}

export interface HandlerRegistration {
  /** True once the handler has been handed every object of the initial list. */
  hasSynced(): boolean;
  /** Resolves true once hasSynced() is, false when the signal aborts first. */
  whenSynced(signal?: AbortSignal): Promise<boolean>;
  /** Stops delivering changes to the handler. */
  remove(): void;
}

export interface RuntimeCache {
  /** Whether `kind` is cached. */
  has(kind: ResourceKind): boolean;
  /** Every cached kind. */
  kinds(): ResourceKind[];
  /** Caches `kind` (idempotent); started now if the cache runs. */
  watch(kind: ResourceKind): void;
  /** Calls `handler` for every change of `kind` (caching it). */
  addHandler<T extends RuntimeObject>(kind: ResourceKind<T>, handler: (event: ObjectEvent<T>) => void): HandlerRegistration;
  /** Indexes `kind` by the values `extract` returns for `field`, for `matchingFields` lists. */
  indexField<T extends RuntimeObject>(kind: ResourceKind<T>, field: string, extract: (obj: T) => string[]): void;
  /** A copy of the cached object, or undefined. Throws UncachedKindError for kinds not cached. */
  get<T extends RuntimeObject>(kind: ResourceKind<T>, key: ObjectKey): Promise<T | undefined>;
  /** Copies of the cached objects matching the options. */
  list<T extends RuntimeObject>(kind: ResourceKind<T>, opts?: CacheListOptions): Promise<T[]>;
  start(signal: AbortSignal): void;
  /** Resolves true once every informer started so far has synced (false when aborted). */
  waitForSync(signal: AbortSignal): Promise<boolean>;
  /** Readiness: an Error naming the first informer that is not synced or whose watch is down. */
  readyCheck(): Error | undefined;
  hasObserved(write: ObservedWrite): boolean;
  /** `fn` runs after every change the cache applies; returns an unsubscribe function. */
  onChange(fn: () => void): () => void;
  /** Stops every informer; resolves once they stopped. */
  stop(): Promise<void>;
}

const ALL_NAMESPACES = '__all_namespaces';

interface Entry {
  kind: ResourceKind;
  /** Keyed by namespace; '' is the one informer of a cluster-scoped kind or of all namespaces. */
  informers: Map<string, SharedIndexInformer<KubeObject>>;
  labelSelector?: Selector;
}

function kindMatches(a: ResourceKind, b: ResourceKind): boolean {
  return a.group === b.group && a.kind === b.kind;
}

/** resourceVersions as etcd and kcm issue them are integers; anything else compares equal-only. */
export function resourceVersionAtLeast(have: string | undefined, want: string): boolean {
  if (have === undefined || have === '') return false;
  if (/^\d+$/.test(have) && /^\d+$/.test(want)) return BigInt(have) >= BigInt(want);
  return have === want;
}

class Cache implements RuntimeCache {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly listeners = new Set<() => void>();
  private readonly runs: Promise<void>[] = [];
  private readonly stopAll = new AbortController();
  private signal: AbortSignal | undefined;

  constructor(private readonly opts: CacheOptions) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? newLogger('cache');
    this.random = opts.random ?? Math.random;
  }

  has(kind: ResourceKind): boolean {
    return this.entries.has(kindString(kind));
  }

  kinds(): ResourceKind[] {
    return [...this.entries.values()].map((e) => e.kind);
  }

  watch(kind: ResourceKind): void {
    this.entry(kind);
  }

  addHandler<T extends RuntimeObject>(kind: ResourceKind<T>, handler: (event: ObjectEvent<T>) => void): HandlerRegistration {
    const entry = this.entry(kind);
    const regs: Array<[SharedIndexInformer<KubeObject>, ResourceEventHandlerRegistration]> = [];
    let waiters: Array<(synced: boolean) => void> = [];
    const allSynced = () => regs.every(([, r]) => r.hasSynced());
    // A listener counts an initial add as handled only after the call returns: check on the next microtask.
    const check = () => {
      if (waiters.length === 0 || !allSynced()) return;
      const ws = waiters;
      waiters = [];
      for (const w of ws) w(true);
    };
    const deliver = (event: ObjectEvent<T>) => {
      try {
        handler(event);
      } finally {
        if (waiters.length > 0) queueMicrotask(check);
      }
    };
    const typed = (o: KubeObject) => o as unknown as T;
    for (const inf of entry.informers.values()) {
      const reg = inf.addEventHandler({
        onAdd: (obj) => deliver({ type: 'create', object: typed(obj) }),
        onUpdate: (oldObj, obj) => deliver({ type: 'update', oldObject: typed(oldObj), object: typed(obj) }),
        onDelete: (obj) =>
          obj instanceof DeletedFinalStateUnknown
            ? deliver({ type: 'delete', object: typed(obj.obj), stateUnknown: true })
            : deliver({ type: 'delete', object: typed(obj), stateUnknown: false }),
      });
      regs.push([inf, reg]);
    }
    return {
      hasSynced: allSynced,
      whenSynced: async (signal?: AbortSignal) => {
        const informersSynced = await Promise.all(regs.map(([inf]) => inf.whenSynced(signal)));
        if (!informersSynced.every(Boolean)) return false;
        if (allSynced()) return true;
        if (signal?.aborted) return false;
        return new Promise<boolean>((resolve) => {
          const onAbort = () => {
            waiters = waiters.filter((w) => w !== waiter);
            resolve(false);
          };
          const waiter = (synced: boolean) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(synced);
          };
          waiters.push(waiter);
          signal?.addEventListener('abort', onAbort, { once: true });
          queueMicrotask(check);
        });
      },
      remove: () => {
        for (const [inf, reg] of regs) inf.removeEventHandler(reg);
        for (const w of waiters.splice(0)) w(false);
      },
    };
  }

  indexField<T extends RuntimeObject>(kind: ResourceKind<T>, field: string, extract: (obj: T) => string[]): void {
    const entry = this.entry(kind);
    const name = `field:${field}`;
    for (const inf of entry.informers.values()) {
      if (inf.getIndexer().getIndexers()[name]) throw new Error(`indexField: ${kindString(kind)} already has an index for ${field}`);
      inf.addIndexers({
        [name]: (obj) => {
          const ns = obj.metadata?.namespace;
          const out: string[] = [];
          for (const v of extract(obj as unknown as T)) {
            out.push(`${ALL_NAMESPACES}/${v}`);
            if (ns) out.push(`${ns}/${v}`);
          }
          return out;
        },
      });
    }
  }

  async get<T extends RuntimeObject>(kind: ResourceKind<T>, key: ObjectKey): Promise<T | undefined> {
    const entry = this.readable(kind);
    await this.synced(entry);
    const name = key.name;
    const ns = kind.namespaced ? (key.namespace ?? '') : '';
    if (kind.namespaced && ns === '') throw new TypeError(`get ${kindString(kind)} ${name}: a namespace is required`);
    const inf = this.informerFor(entry, ns);
    const obj = inf.getIndexer().getByKey(ns ? `${ns}/${name}` : name);
    return obj === undefined ? undefined : (deepCopy(obj) as unknown as T);
  }

  async list<T extends RuntimeObject>(kind: ResourceKind<T>, opts: CacheListOptions = {}): Promise<T[]> {
    const entry = this.readable(kind);
    await this.synced(entry);
    const ns = kind.namespaced ? (opts.namespace ?? '') : '';
    const informers = ns === '' ? [...entry.informers.values()] : [this.informerFor(entry, ns)];
    const selector =
      opts.labelSelector === undefined ? undefined : typeof opts.labelSelector === 'string' ? parseSelector(opts.labelSelector) : selectorFromSet(opts.labelSelector);
    const fields = Object.entries(opts.matchingFields ?? {});
    const out: T[] = [];
    for (const inf of informers) {
      const indexer = inf.getIndexer();
      let items: KubeObject[];
      if (fields.length > 0) {
        const sets = fields.map(([field, value]) => {
          const index = `field:${field}`;
          if (!indexer.getIndexers()[index]) throw new Error(`list ${kindString(kind)}: no index for field ${field} (declare it with indexField)`);
          return new Set(indexer.indexKeys(index, `${ns || ALL_NAMESPACES}/${value}`));
        });
        const [first, ...rest] = sets;
        items = [...first!].filter((k) => rest.every((s) => s.has(k))).flatMap((k): KubeObject[] => { const o = indexer.getByKey(k); return o ? [o] : []; });
      } else if (ns !== '' && indexer.getIndexers().namespace) {
        items = indexer.byIndex('namespace', ns);
      } else {
        items = indexer.list();
      }
      for (const obj of items) {
        if (ns !== '' && obj.metadata?.namespace !== ns) continue;
        if (selector && !selector.matches(obj.metadata?.labels ?? {})) continue;
        out.push(deepCopy(obj) as unknown as T);
      }
    }
    return out;
  }

  start(signal: AbortSignal): void {
    if (this.signal) return;
    this.signal = AbortSignal.any([signal, this.stopAll.signal]);
    for (const entry of this.entries.values()) for (const inf of entry.informers.values()) this.run(entry, inf);
  }

  async waitForSync(signal: AbortSignal): Promise<boolean> {
    const all = [...this.entries.values()].flatMap((e) => [...e.informers.values()]);
    const results = await Promise.all(all.map((inf) => inf.whenSynced(signal)));
    return results.every(Boolean);
  }

  readyCheck(): Error | undefined {
    const grace = this.opts.watchGraceMs ?? DEFAULT_WATCH_GRACE_MS;
    for (const entry of this.entries.values()) {
      for (const [ns, inf] of entry.informers) {
        const what = ns ? `${kindString(entry.kind)} in ${ns}` : kindString(entry.kind);
        if (!inf.hasSynced()) return new Error(`informer for ${what} has not synced`);
        const st = inf.watchStatus();
        if (st && !st.watching && this.clock.since(st.sinceMs) > grace) {
          return new Error(`watch of ${what} down for ${Math.round(this.clock.since(st.sinceMs) / 1000)} s${st.lastError ? `: ${st.lastError}` : ''}`);
        }
      }
    }
    return undefined;
  }

  hasObserved(w: ObservedWrite): boolean {
    for (const entry of this.entries.values()) {
      if (!kindMatches(entry.kind, w.kind)) continue;
      const inf = entry.informers.get('') ?? entry.informers.get(w.namespace);
      if (!inf) continue;
      // Objects outside a label selector never reach this cache: nothing to wait for.
      if (entry.labelSelector && !entry.labelSelector.matches(w.labels ?? {})) continue;
      const obj = inf.getIndexer().getByKey(w.namespace ? `${w.namespace}/${w.name}` : w.name);
      if (w.deleted) {
        if (obj && !obj.metadata?.deletionTimestamp && (w.uid === undefined || obj.metadata?.uid === w.uid)) return false;
        continue;
      }
      if (!obj || !resourceVersionAtLeast(obj.metadata?.resourceVersion, w.resourceVersion)) return false;
    }
    return true;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async stop(): Promise<void> {
    this.stopAll.abort();
    await Promise.all(this.runs);
  }

  private readable(kind: ResourceKind): Entry {
    const entry = this.entries.get(kindString(kind));
    if (!entry) throw new UncachedKindError(kind);
    if (!this.signal) throw new Error(`cannot read ${kindString(kind)} from the cache before it is started (manager.start())`);
    return entry;
  }

  private async synced(entry: Entry): Promise<void> {
    for (const inf of entry.informers.values()) {
      if (inf.hasSynced()) continue;
      if (!(await inf.whenSynced(this.signal))) throw new Error(`cache for ${kindString(entry.kind)} stopped before it synced`);
    }
  }

  private informerFor(entry: Entry, ns: string): SharedIndexInformer<KubeObject> {
    const inf = entry.informers.get('') ?? entry.informers.get(ns);
    if (!inf) throw new Error(`namespace ${ns} is not cached for ${kindString(entry.kind)} (cached: ${[...entry.informers.keys()].join(', ')})`);
    return inf;
  }

  private entry(kind: ResourceKind): Entry {
    const key = kindString(kind);
    let entry = this.entries.get(key);
    if (entry) return entry;
    const own = this.opts.byKind?.find((o) => kindMatches(o.kind, kind) && o.kind.metadataOnly === kind.metadataOnly);
    const namespaces = kind.namespaced ? (own?.namespaces ?? this.opts.namespaces) : undefined;
    entry = { kind, informers: new Map() };
    if (own?.labelSelector) entry.labelSelector = parseSelector(own.labelSelector);
    const period = (this.opts.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS) * (0.9 + this.random() / 5);
    for (const ns of namespaces && namespaces.length > 0 ? namespaces : ['']) {
      entry.informers.set(ns, this.newInformer(kind, ns, own, period));
    }
    this.entries.set(key, entry);
    this.log.v(2).info({ kind: key, namespaces: namespaces ?? 'all' }, 'caching kind');
    if (this.signal) for (const inf of entry.informers.values()) this.run(entry, inf);
    return entry;
  }

  private newInformer(kind: ResourceKind, ns: string, own: KindCacheOptions | undefined, resyncPeriodMs: number): SharedIndexInformer<KubeObject> {
    const gvr = gvrOf(kind);
    let ri = kind.metadataOnly ? this.opts.client.metadata(gvr) : this.opts.client.resource(gvr);
    if (ns) ri = ri.namespace(ns);
    const lw = listWatchFromClient<KubeObject>(ri, { labelSelector: own?.labelSelector, fieldSelector: own?.fieldSelector });
    const name = ns ? `${kindString(kind)} in ${ns}` : kindString(kind);
    const inf = newSharedIndexInformer<KubeObject>(lw, {
      name,
      resyncPeriodMs,
      indexers: namespaceIndexers<KubeObject>(),
      clock: this.clock,
      logger: this.log.child({ informer: name }),
    });
    const { apiVersion, kind: kindName } = kind;
    inf.setTransform((obj) => {
      const o = obj as KubeObject;
      const meta = o.metadata;
      if (meta?.managedFields === undefined && o.apiVersion === apiVersion && o.kind === kindName) return o;
      const out: KubeObject = { ...o, apiVersion, kind: kindName };
      if (meta && meta.managedFields !== undefined) {
        const { managedFields: _drop, ...rest } = meta;
        out.metadata = rest;
      }
      return out;
    });
    inf.addEventHandler({
      onAdd: () => this.changed(),
      onUpdate: () => this.changed(),
      onDelete: () => this.changed(),
    });
    return inf;
  }

  private run(entry: Entry, inf: SharedIndexInformer<KubeObject>): void {
    const signal = this.signal!;
    this.runs.push(inf.run(signal).catch((err: unknown) => this.log.error(err, { kind: kindString(entry.kind) }, 'informer failed')));
  }

  private changed(): void {
    for (const fn of this.listeners) {
      try {
        fn();
      } catch (err) {
        this.log.error(err, 'cache change listener failed');
      }
    }
  }
}

export function newRuntimeCache(opts: CacheOptions): RuntimeCache {
  return new Cache(opts);
}
