/**
 * Metadata helpers on plain API objects: owner references, finalizers,
 * deletion state, object references, copies.
 *
 * Nothing here mutates its input: helpers that "change" a list return a new
 * array (or the same array when nothing changed), so cache objects stay intact.
 */
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import type { GroupVersionKind, KubeObject, OwnerReference } from './types.js';
import { apiVersionOf } from './types.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** The owner reference with `controller: true`, if any (metav1.GetControllerOf). */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** Whether `owner` (compared by UID) is the controller of `obj` (metav1.IsControlledBy). */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const ref = getControllerOf(obj);
  return ref !== undefined && owner.metadata?.uid !== undefined && ref.uid === owner.metadata.uid;
}

/**
 * A controller owner reference to `owner` (metav1.NewControllerRef):
 * controller and blockOwnerDeletion set. `owner` must have a name and uid.
 */
export function newControllerRef(owner: KubeObject, gvk: GroupVersionKind): OwnerReference {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!name || !uid) throw new Error(`newControllerRef: owner ${gvk.kind} needs metadata.name and metadata.uid`);
  return {
    apiVersion: apiVersionOf(gvk.group, gvk.version),
    kind: gvk.kind,
    name,
    uid,
    blockOwnerDeletion: true,
    controller: true,
  };
}

/** Whether the object lists `finalizer`. */
export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** The finalizers with `finalizer` appended (a new array; unchanged copy if already present). */
export function addFinalizer(obj: KubeObject, finalizer: string): string[] {
  const current = obj.metadata?.finalizers ?? [];
  return current.includes(finalizer) ? [...current] : [...current, finalizer];
}

/** The finalizers without any `finalizer` entry (a new array). */
export function removeFinalizer(obj: KubeObject, finalizer: string): string[] {
  return (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
}

/** True once deletion was requested (metadata.deletionTimestamp set). */
export function isBeingDeleted(obj: KubeObject): boolean {
  return obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}

/**
 * An ObjectReference to `obj` (client-go reference.GetReference): kind,
 * apiVersion, name, namespace, uid, resourceVersion; fields absent on the
 * object are left out. `gvk` fills kind/apiVersion when the object lacks them.
 */
export function objectReference(obj: KubeObject, gvk?: GroupVersionKind): ObjectReference {
  const ref: ObjectReference = {};
  const kind = obj.kind || gvk?.kind;
  const apiVersion = obj.apiVersion || (gvk ? apiVersionOf(gvk.group, gvk.version) : undefined);
  if (kind) ref.kind = kind;
  if (obj.metadata?.namespace) ref.namespace = obj.metadata.namespace;
  if (obj.metadata?.name) ref.name = obj.metadata.name;
  if (obj.metadata?.uid) ref.uid = obj.metadata.uid;
  if (apiVersion) ref.apiVersion = apiVersion;
  if (obj.metadata?.resourceVersion) ref.resourceVersion = obj.metadata.resourceVersion;
  return ref;
}

/** A deep copy: safe to modify without touching cache state. */
export function copy<T>(obj: T): T {
  return deepCopy(obj);
}
