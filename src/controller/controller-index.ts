/**
 * An index of an informer's objects by the UID of their controller (the
 * ownerReference with controller: true), orphans filed under
 * `orphan/<namespace>`. A controller's claim needs only what it owns and the
 * orphans of its namespace, not every object there: with one namespace of
 * 1,000 pods and 100 ReplicaSets, each sync reads its 10 pods instead of
 * 1,000 (upstream lists the namespace; Go can afford it more than we can).
 */
import type { KubeObject } from '../api/types.js';
import { getControllerOf } from '../api/meta.js';
import type { Indexer } from '../tools/cache/interfaces.js';

export const CONTROLLER_UID_INDEX = 'kcm.dev/controller-uid';

function orphanKey(namespace: string): string {
  return `orphan/${namespace}`;
}

/** Adds the index to a (shared) informer's indexer once; later calls from other controllers are no-ops. */
export function ensureControllerIndex<T extends KubeObject>(informer: { getIndexer(): Indexer<T>; addIndexers(i: Record<string, (obj: T) => string[]>): void }): void {
  if (CONTROLLER_UID_INDEX in informer.getIndexer().getIndexers()) return;
  informer.addIndexers({
    [CONTROLLER_UID_INDEX]: (obj: T) => {
      const ref = getControllerOf(obj);
      return [ref ? ref.uid : orphanKey(obj.metadata?.namespace ?? '')];
    },
  });
}

/** Objects in `namespace` whose controller has `uid`. */
export function ownedBy<T extends KubeObject>(indexer: Indexer<T>, namespace: string, uid: string): T[] {
  return indexer.byIndex(CONTROLLER_UID_INDEX, uid).filter((o) => (o.metadata?.namespace ?? '') === namespace);
}

/** What a controller with `uid` may claim in `namespace`: its own objects and the orphans. */
export function ownedOrOrphaned<T extends KubeObject>(indexer: Indexer<T>, namespace: string, uid: string): T[] {
  return [...ownedBy(indexer, namespace, uid), ...indexer.byIndex(CONTROLLER_UID_INDEX, orphanKey(namespace))];
}
