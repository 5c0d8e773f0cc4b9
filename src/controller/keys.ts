/**
 * Queue keys for controllers (client-go DeletionHandlingMetaNamespaceKeyFunc).
 */
import { namespacedKey, type KubeObject } from '../api/types.js';
import { DeletedFinalStateUnknown } from '../tools/cache/interfaces.js';

/**
 * `namespace/name` (or `name` when cluster-scoped) of an object; for a
 * DeletedFinalStateUnknown tombstone, the key it was filed under.
 */
export function keyFunc(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  return namespacedKey(obj);
}

/**
 * The object inside a delete notification: the object itself, or the last
 * known state carried by a tombstone. Undefined when the tombstone holds
 * something that is not an object.
 */
export function objectFromDeleted<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): T | undefined {
  if (obj instanceof DeletedFinalStateUnknown) {
    const inner = obj.obj as unknown;
    return inner && typeof inner === 'object' ? (inner as T) : undefined;
  }
  return obj;
}
