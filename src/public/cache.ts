/**
 * kcm/cache: client-go's tools/cache. Reflectors keep an indexed local copy
 * of a resource in step with the server (list, then watch, relisting when
 * the watch cannot continue); shared informers hand every change to any
 * number of handlers; listers read the copy. Objects from a cache are shared
 * state: treat them as read-only and copy before changing.
 *
 *   const factory = newSharedInformerFactory(client);
 *   factory.pods().addEventHandler({ onAdd: (p) => console.log('added', p.metadata?.name) });
 *   factory.start(signal);
 *   await factory.waitForCacheSync(signal);
 */
export {
  newSharedInformerFactory,
  stripManagedFields,
  type SharedInformerFactory,
  type SharedInformerFactoryOptions,
  type BuiltinObjects,
  type BuiltinInformers,
  type Kube,
} from '../tools/cache/factory.js';
export { newSharedIndexInformer, newSharedInformer, type SharedIndexInformerOptions } from '../tools/cache/shared-informer.js';
export {
  DeletedFinalStateUnknown,
  type SharedInformer,
  type SharedIndexInformer,
  type ResourceEventHandler,
  type ResourceEventHandlerRegistration,
  type Store,
  type Indexer,
  type Indexers,
  type IndexFunc,
  type KeyFunc,
  type ListerWatcher,
  type TransformFunc,
  type Lister,
  type NamespaceLister,
} from '../tools/cache/interfaces.js';
export { newLister, listAll, listAllByNamespace } from '../tools/cache/listers.js';
export { newIndexer, newStore, metaNamespaceKeyFunc, metaNamespaceIndexFunc, namespaceIndexers, NAMESPACE_INDEX, type IndexerOptions } from '../tools/cache/store.js';
export { listWatchFromClient, type ListWatchOptions } from '../tools/cache/list-watch.js';
export { newReflector, type Reflector, type ReflectorOptions, type ReflectorStore, type WatchStatus } from '../tools/cache/reflector.js';
export { waitForCacheSync, type InformerSynced, type WaitForCacheSyncOptions } from '../tools/cache/wait.js';
