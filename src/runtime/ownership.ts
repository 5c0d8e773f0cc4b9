/**
 * Owner references and finalizers on objects you hold (controller-runtime's
 * controllerutil). These change the object in place: call them on your own
 * copy (what the runtime client returns), then write it.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { parseApiVersion } from '../api/types.js';
import type { ResourceKind, RuntimeObject } from './kinds.js';

/** `object` already has a controller other than the owner being set. */
export class AlreadyOwnedError extends Error {
  constructor(
    readonly object: RuntimeObject,
    readonly owner: OwnerReference,
  ) {
    super(`Object ${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''} is already owned by another ${owner.kind} controller ${owner.name}`);
    this.name = 'AlreadyOwnedError';
  }
}

export interface OwnerReferenceOptions {
  /** Default true for controller references, unset for plain owner references. */
  blockOwnerDeletion?: boolean;
  /** The owner's kind, when the owner object lacks apiVersion and kind. */
  kind?: ResourceKind;
}

function ownerRef(owner: RuntimeObject, object: RuntimeObject, opts: OwnerReferenceOptions, what: string): OwnerReference {
  const apiVersion = owner.apiVersion || opts.kind?.apiVersion;
  const kind = owner.kind || opts.kind?.kind;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind) throw new TypeError(`${what}: the owner has no apiVersion and kind (pass { kind })`);
  if (!name || !uid) throw new TypeError(`${what}: the owner ${kind} needs metadata.name and metadata.uid (read it from the API first)`);
  const ownerNs = owner.metadata?.namespace ?? '';
  if (ownerNs !== '') {
    const objNs = object.metadata?.namespace ?? '';
    if (objNs === '') throw new Error(`cluster-scoped resource must not have a namespace-scoped owner, owner's namespace ${ownerNs}`);
    if (objNs !== ownerNs) throw new Error(`cross-namespace owner references are disallowed, owner's namespace ${ownerNs}, obj's namespace ${objNs}`);
  }
  return { apiVersion, kind, name, uid };
}

/** Same group, kind and name (versions may differ), as controllerutil's referSameObject. */
function sameObject(a: OwnerReference, b: OwnerReference): boolean {
  return parseApiVersion(a.apiVersion).group === parseApiVersion(b.apiVersion).group && a.kind === b.kind && a.name === b.name;
}

function upsert(object: RuntimeObject, ref: OwnerReference): void {
  const meta = (object.metadata ??= {});
  const refs = (meta.ownerReferences ??= []);
  const i = refs.findIndex((r) => sameObject(r, ref));
  if (i < 0) refs.push(ref);
  else refs[i] = ref;
}

/**
 * Makes `owner` the controller of `object` (controller: true,
 * blockOwnerDeletion: true): the garbage collector deletes `object` with its
 * owner, and `owns()` watches enqueue the owner when `object` changes.
 * Throws AlreadyOwnedError when another controller owns it, and refuses
 * cross-namespace and namespaced-owner-of-cluster-scoped references.
 */
export function setControllerReference(owner: RuntimeObject, object: RuntimeObject, opts: OwnerReferenceOptions = {}): void {
  const ref: OwnerReference = { ...ownerRef(owner, object, opts, 'setControllerReference'), blockOwnerDeletion: opts.blockOwnerDeletion ?? true, controller: true };
  const existing = object.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (existing && !sameObject(existing, ref)) throw new AlreadyOwnedError(object, existing);
  upsert(object, ref);
}

/** Adds (or refreshes) a non-controller owner reference to `owner`. */
export function setOwnerReference(owner: RuntimeObject, object: RuntimeObject, opts: OwnerReferenceOptions = {}): void {
  const ref = ownerRef(owner, object, opts, 'setOwnerReference');
  if (opts.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = opts.blockOwnerDeletion;
  upsert(object, ref);
}

/** Removes the owner reference to `owner`; returns whether there was one. */
export function removeOwnerReference(owner: RuntimeObject, object: RuntimeObject): boolean {
  const refs = object.metadata?.ownerReferences;
  if (!refs || !owner.apiVersion || !owner.kind) return false;
  const target: OwnerReference = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata?.name ?? '', uid: '' };
  const i = refs.findIndex((r) => sameObject(r, target));
  if (i < 0) return false;
  refs.splice(i, 1);
  return true;
}

/** The owner reference with controller: true, if any. */
export function getControllerOf(object: RuntimeObject): OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** Whether `owner` (by uid) is the controller of `object`. */
export function isControlledBy(object: RuntimeObject, owner: RuntimeObject): boolean {
  const ref = getControllerOf(object);
  return ref !== undefined && !!owner.metadata?.uid && ref.uid === owner.metadata.uid;
}

export function hasFinalizer(object: RuntimeObject, finalizer: string): boolean {
  return object.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** Adds `finalizer` unless present; returns whether the object changed. */
export function addFinalizer(object: RuntimeObject, finalizer: string): boolean {
  if (hasFinalizer(object, finalizer)) return false;
  const meta = (object.metadata ??= {});
  (meta.finalizers ??= []).push(finalizer);
  return true;
}

/** Removes every `finalizer` entry; returns whether the object changed. */
export function removeFinalizer(object: RuntimeObject, finalizer: string): boolean {
  const list = object.metadata?.finalizers;
  if (!list || !list.includes(finalizer)) return false;
  object.metadata!.finalizers = list.filter((f) => f !== finalizer);
  return true;
}

/** True once deletion was requested (deletionTimestamp set). */
export function isBeingDeleted(object: RuntimeObject): boolean {
  return !!object.metadata?.deletionTimestamp;
}
