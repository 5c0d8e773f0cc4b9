/**
 * The thread-safe store of client-go (thread_safe_store.go, index.go,
 * store.go): a key -> object map with secondary indices. In Node.js there is
 * one thread, so "thread-safe" reduces to "every method leaves the indices
 * consistent before it returns".
 *
 * Objects returned are shared cache state; treat them as read-only.
 */
import type { KubeObject } from '../../api/types.js';
import { namespacedKey } from '../../api/types.js';
import { DeletedFinalStateUnknown } from './interfaces.js';
import type { IndexFunc, Indexer, Indexers, KeyFunc, Store } from './interfaces.js';

/** The name of the built-in index filing objects by namespace. */
export const NAMESPACE_INDEX = 'namespace';

/** `namespace/name` (or `name` when cluster-scoped); tombstones yield their recorded key. */
export function metaNamespaceKeyFunc<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  return namespacedKey(obj);
}

/** client-go's DeletionHandlingMetaNamespaceKeyFunc: the same as metaNamespaceKeyFunc here. */
export const deletionHandlingMetaNamespaceKeyFunc = metaNamespaceKeyFunc;

/** Files an object under its namespace ('' for cluster-scoped objects). */
export function metaNamespaceIndexFunc(obj: KubeObject): string[] {
  return [obj.metadata?.namespace ?? ''];
}

/** Indexers every informer of the factory gets: the namespace index. */
export function namespaceIndexers<T extends KubeObject>(): Indexers<T> {
  return { [NAMESPACE_INDEX]: metaNamespaceIndexFunc };
}

type Index = Map<string, Set<string>>;

class ThreadSafeIndexer<T> implements Indexer<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers: Record<string, IndexFunc<T>> = {};
  private readonly indices = new Map<string, Index>();

  constructor(
    private readonly keyFunc: KeyFunc<T>,
    indexers: Indexers<T>,
  ) {
    this.addIndexers(indexers);
  }

  add(obj: T): void {
    this.put(this.keyFunc(obj), obj);
  }

  update(obj: T): void {
    this.put(this.keyFunc(obj), obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyFunc(obj);
    const old = this.items.get(key);
    if (old === undefined) return;
    this.updateIndices(old, undefined, key);
    this.items.delete(key);
  }

  list(): T[] {
    return Array.from(this.items.values());
  }

  listKeys(): string[] {
    return Array.from(this.items.keys());
  }

  get(obj: T): T | undefined {
    return this.items.get(this.keyFunc(obj));
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  replace(items: T[], _resourceVersion: string): void {
    this.items.clear();
    for (const obj of items) this.items.set(this.keyFunc(obj), obj);
    this.rebuildIndices();
  }

  /** A plain store has nothing queued: resync is a no-op (as in client-go). */
  resync(): void {}

  index(indexName: string, obj: T): T[] {
    const fn = this.indexFunc(indexName);
    const index = this.indices.get(indexName)!;
    const values = fn(obj);
    if (values.length === 1) return this.objectsOf(index.get(values[0]!));
    const keys = new Set<string>();
    for (const v of values) {
      const set = index.get(v);
      if (set) for (const k of set) keys.add(k);
    }
    return this.objectsOf(keys);
  }

  indexKeys(indexName: string, value: string): string[] {
    this.indexFunc(indexName);
    const set = this.indices.get(indexName)!.get(value);
    return set ? Array.from(set) : [];
  }

  listIndexFuncValues(indexName: string): string[] {
    const index = this.indices.get(indexName);
    return index ? Array.from(index.keys()) : [];
  }

  byIndex(indexName: string, value: string): T[] {
    this.indexFunc(indexName);
    return this.objectsOf(this.indices.get(indexName)!.get(value));
  }

  getIndexers(): Indexers<T> {
    return { ...this.indexers };
  }

  addIndexers(indexers: Indexers<T>): void {
    for (const name of Object.keys(indexers)) {
      if (name in this.indexers) throw new Error(`indexer conflict: ${name}`);
    }
    for (const [name, fn] of Object.entries(indexers)) {
      this.indexers[name] = fn;
      const index: Index = new Map();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) this.addToIndex(index, fn(obj), key);
    }
  }

  private indexFunc(indexName: string): IndexFunc<T> {
    const fn = this.indexers[indexName];
    if (!fn) throw new Error(`index with name ${indexName} does not exist`);
    return fn;
  }

  private objectsOf(keys: Set<string> | undefined): T[] {
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const obj = this.items.get(k);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  private put(key: string, obj: T): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.updateIndices(old, obj, key);
  }

  private rebuildIndices(): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index: Index = new Map();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) this.addToIndex(index, fn(obj), key);
    }
  }

  // invariant: key is in index[name][v] iff v is in indexers[name](items[key]);
  // empty value sets are removed, so listIndexFuncValues lists live values only.
  private updateIndices(oldObj: T | undefined, newObj: T | undefined, key: string): void {
    for (const name in this.indexers) {
      const fn = this.indexers[name]!;
      const index = this.indices.get(name)!;
      const oldValues = oldObj === undefined ? EMPTY : fn(oldObj);
      const newValues = newObj === undefined ? EMPTY : fn(newObj);
      if (oldValues.length === 1 && newValues.length === 1 && oldValues[0] === newValues[0]) continue;
      for (const v of oldValues) {
        if (newValues.includes(v)) continue;
        const set = index.get(v);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) index.delete(v);
      }
      this.addToIndex(index, newValues, key);
    }
  }

  private addToIndex(index: Index, values: readonly string[], key: string): void {
    for (const v of values) {
      let set = index.get(v);
      if (!set) {
        set = new Set();
        index.set(v, set);
      }
      set.add(key);
    }
  }
}

const EMPTY: readonly string[] = Object.freeze([]);

export interface IndexerOptions<T> {
  /** Defaults to metaNamespaceKeyFunc. */
  keyFunc?: KeyFunc<T>;
  indexers?: Indexers<T>;
}

/** A store with indices. Without `indexers` it has none (add them later with addIndexers). */
export function newIndexer<T extends KubeObject = KubeObject>(opts: IndexerOptions<T> = {}): Indexer<T> {
  return new ThreadSafeIndexer<T>(opts.keyFunc ?? metaNamespaceKeyFunc, opts.indexers ?? {});
}

/** A store without indices. */
export function newStore<T extends KubeObject = KubeObject>(keyFunc: KeyFunc<T> = metaNamespaceKeyFunc): Store<T> {
  return new ThreadSafeIndexer<T>(keyFunc, {});
}
