/**
 * Listers (client-go tools/cache/listers.go): read access to an informer's
 * indexer. Objects returned are shared cache state; treat them as read-only.
 */
import type { KubeObject } from '../../api/types.js';
import type { Selector } from '../../api/labels-selector.js';
import type { Indexer, Lister, NamespaceLister } from './interfaces.js';
import { NAMESPACE_INDEX } from './store.js';

function matches(selector: Selector | undefined, obj: KubeObject): boolean {
  return selector === undefined || selector.empty() || selector.matches(obj.metadata?.labels);
}

function filter<T extends KubeObject>(objs: T[], selector: Selector | undefined): T[] {
  if (selector === undefined || selector.empty()) return objs;
  return objs.filter((o) => matches(selector, o));
}

/** Objects of `indexer` matching `selector` (all when undefined or empty). */
export function listAll<T extends KubeObject>(indexer: Pick<Indexer<T>, 'list'>, selector?: Selector): T[] {
  return filter(indexer.list(), selector);
}

/**
 * Objects in `namespace` matching `selector`: through the namespace index when
 * the indexer has one, else by scanning. Namespace "" means all namespaces.
 */
export function listAllByNamespace<T extends KubeObject>(indexer: Indexer<T>, namespace: string, selector?: Selector): T[] {
  if (namespace === '') return listAll(indexer, selector);
  if (NAMESPACE_INDEX in indexer.getIndexers()) return filter(indexer.byIndex(NAMESPACE_INDEX, namespace), selector);
  return indexer.list().filter((o) => (o.metadata?.namespace ?? '') === namespace && matches(selector, o));
}

/** A Lister over an informer's indexer (keys `namespace/name`, or `name` when cluster-scoped). */
export function newLister<T extends KubeObject = KubeObject>(indexer: Indexer<T>): Lister<T> {
  return {
    list: (selector?: Selector) => listAll(indexer, selector),
    get: (name: string) => indexer.getByKey(name),
    namespace: (ns: string): NamespaceLister<T> => ({
      list: (selector?: Selector) => listAllByNamespace(indexer, ns, selector),
      get: (name: string) => indexer.getByKey(ns === '' ? name : `${ns}/${name}`),
    }),
  };
}
