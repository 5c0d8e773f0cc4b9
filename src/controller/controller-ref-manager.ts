/**
 * Adoption and release of dependents (pkg/controller/controller_ref_manager.go).
 *
 * A controller owns the objects whose controller ownerReference carries its
 * UID. `claim` reconciles that with the selector: orphans that match are
 * adopted, owned objects that no longer match are released, objects owned by
 * another controller are left alone. Adoption and release are strategic merge
 * patches carrying the object's UID, so they fail (422) instead of touching a
 * same-named object that was deleted and recreated meanwhile.
 */
import type { LabelSelector, OwnerReference } from 'kubernetes-types/meta/v1.js';
import { selectorFromLabelSelector } from '../api/labels.js';
import type { Selector } from '../api/labels-selector.js';
import { apiVersionOf, type GroupVersionKind, type KubeObject } from '../api/types.js';
import { isInvalid, isNotFound } from '../client/errors.js';
import type { ResourceInterface } from '../client/interfaces.js';
import { newLogger, type Logger } from '../util/log/logger.js';

/** The ownerReference with controller=true, if any. */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** A controller ownerReference to `owner` of kind `gvk` (controller and blockOwnerDeletion true). */
export function newControllerRef(owner: KubeObject, gvk: GroupVersionKind): OwnerReference {
  return {
    apiVersion: apiVersionOf(gvk.group, gvk.version),
    kind: gvk.kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The patch adopting `obj` for the controller described by `ref`. */
/**
 * The controller of kind `kind` that `ref` names in `namespace`, from a
 * lister, when it still has the referenced uid (controller_utils'
 * resolveControllerRef: a recreated controller of the same name is not it).
 */
export function resolveControllerRef<T extends { metadata?: { uid?: string } }>(
  lister: { namespace(ns: string): { get(name: string): T | undefined } },
  namespace: string,
  ref: { kind?: string; name: string; uid?: string } | undefined,
  kind: string,
): T | undefined {
  if (!ref || ref.kind !== kind) return undefined;
  const owner = lister.namespace(namespace).get(ref.name);
  return owner && owner.metadata?.uid === ref.uid ? owner : undefined;
}

/**
 * The controllers in `namespace` whose selector selects `labels`; a
 * controller with an empty or invalid selector selects nothing (as
 * GetPodDaemonSets, GetPodStatefulSets, getPodJobs, getDeploymentsForReplicaSet).
 */
export function controllersSelecting<T extends { spec?: { selector?: LabelSelector | null } }>(
  lister: { namespace(ns: string): { list(): T[] } },
  namespace: string,
  labels: Readonly<Record<string, string>> | undefined,
): T[] {
  return lister
    .namespace(namespace)
    .list()
    .filter((c) => {
      let sel: Selector;
      try {
        sel = selectorFromLabelSelector(c.spec?.selector);
      } catch {
        return false;
      }
      return !sel.empty() && sel.matches(labels);
    });
}

export function adoptPatch(ref: OwnerReference, objUid: string): object {
  return {
    metadata: {
      ownerReferences: [
        { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, controller: true, blockOwnerDeletion: true },
      ],
      uid: objUid,
    },
  };
}

/** The patch removing the ownerReference with `ownerUid` from the object with `objUid`. */
export function releasePatch(ownerUid: string, objUid: string): object {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: objUid } };
}

export interface ControllerRefManager<T extends KubeObject> {
  /**
   * Adopts matching orphans and releases owned objects that no longer match
   * (nothing is adopted or released while the controller is being deleted;
   * orphans being deleted are not adopted). Returns the objects the
   * controller owns afterwards. Processes every object; when any adoption or
   * release failed, throws an AggregateError of the failures (callers retry
   * the sync). NotFound is not a failure.
   */
  claim(objects: readonly T[], ...filters: Array<(obj: T) => boolean>): Promise<T[]>;
  adopt(obj: T): Promise<void>;
  /** NotFound and Invalid (no such ownerReference, or the object was recreated) are ignored. */
  release(obj: T): Promise<void>;
}

export interface ControllerRefManagerOptions<T extends KubeObject> {
  /** The controller (its metadata: name, uid, deletionTimestamp). */
  controller: KubeObject;
  controllerKind: GroupVersionKind;
  selector: Selector;
  /**
   * Checked at most once per manager, right before the first adoption;
   * a rejection fails every adoption. See recheckDeletionTimestamp.
   */
  canAdopt?: () => Promise<void>;
  /** Sends a strategic merge patch to the object (e.g. patchWith(resource)). */
  patch: (obj: T, patch: object) => Promise<unknown>;
  logger?: Logger;
}

/** A `patch` function for ControllerRefManagerOptions sending strategic merge patches through `resource`. */
export function patchWith<T extends KubeObject>(resource: ResourceInterface<T>): (obj: T, patch: object) => Promise<unknown> {
  return (obj, patch) => resource.namespace(obj.metadata?.namespace ?? '').patch(obj.metadata?.name ?? '', 'strategic', patch);
}

/**
 * A canAdopt check that re-reads the controller live: it rejects when the
 * controller is gone, was replaced (different UID) or is being deleted.
 */
export function recheckDeletionTimestamp(controller: KubeObject, getFresh: () => Promise<KubeObject>): () => Promise<void> {
  return async () => {
    let fresh: KubeObject;
    try {
      fresh = await getFresh();
    } catch (err) {
      throw new Error(`can't recheck DeletionTimestamp: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const m = controller.metadata ?? {};
    if (fresh.metadata?.uid !== m.uid) {
      throw new Error(`original ${m.namespace ?? ''}/${m.name ?? ''} is gone: got uid ${fresh.metadata?.uid ?? ''}, wanted ${m.uid ?? ''}`);
    }
    if (fresh.metadata?.deletionTimestamp) {
      throw new Error(`${m.namespace ?? ''}/${m.name ?? ''} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
    }
  };
}

class RefManager<T extends KubeObject> implements ControllerRefManager<T> {
  private canAdoptResult: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly ref: OwnerReference;

  constructor(private readonly opts: ControllerRefManagerOptions<T>) {
    this.log = opts.logger ?? newLogger('controller-ref-manager');
    this.ref = newControllerRef(opts.controller, opts.controllerKind);
  }

  private canAdopt(): Promise<void> {
    this.canAdoptResult ??= this.opts.canAdopt ? this.opts.canAdopt() : Promise.resolve();
    return this.canAdoptResult;
  }

  async claim(objects: readonly T[], ...filters: Array<(obj: T) => boolean>): Promise<T[]> {
    const match = (obj: T) => this.opts.selector.matches(obj.metadata?.labels) && filters.every((f) => f(obj));
    const controllerBeingDeleted = !!this.opts.controller.metadata?.deletionTimestamp;
    // Decided without waiting: only adoptions and releases talk to the API server
    // (in input order, as the result).
    const kept: Array<T | undefined> = [];
    const actions: Array<{ i: number; obj: T; adopt: boolean }> = [];
    for (const obj of objects) {
      const ref = getControllerOf(obj);
      kept.push(undefined);
      if (ref) {
        if (ref.uid !== this.ref.uid) continue; // owned by someone else
        if (match(obj)) kept[kept.length - 1] = obj; // ours and still matching: no action needed, even while being deleted
        else if (!controllerBeingDeleted) actions.push({ i: kept.length - 1, obj, adopt: false });
        continue;
      }
      // An orphan.
      if (controllerBeingDeleted || obj.metadata?.deletionTimestamp || !match(obj)) continue;
      actions.push({ i: kept.length - 1, obj, adopt: true });
    }
    const errors: unknown[] = [];
    for (const { i, obj, adopt } of actions) {
      try {
        if (adopt) {
          await this.adopt(obj);
          kept[i] = obj;
        } else await this.release(obj);
      } catch (err) {
        if (!isNotFound(err)) errors.push(err);
      }
    }
    const claimed = kept.filter((o): o is T => o !== undefined);
    if (errors.length > 0) {
      throw new AggregateError(errors, errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; '));
    }
    return claimed;
  }

  async adopt(obj: T): Promise<void> {
    const m = obj.metadata ?? {};
    try {
      await this.canAdopt();
    } catch (err) {
      throw new Error(
        `can't adopt ${obj.kind ?? 'object'} ${m.namespace ?? ''}/${m.name ?? ''} (${m.uid ?? ''}): ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    this.log.v(2).info({ object: `${m.namespace ?? ''}/${m.name ?? ''}`, owner: `${this.ref.kind}/${this.ref.name}` }, 'adopting');
    await this.opts.patch(obj, adoptPatch(this.ref, m.uid ?? ''));
  }

  async release(obj: T): Promise<void> {
    const m = obj.metadata ?? {};
    this.log.v(2).info(
      { object: `${m.namespace ?? ''}/${m.name ?? ''}`, owner: `${this.ref.apiVersion}/${this.ref.kind}:${this.ref.name}` },
      'patching to remove its controllerRef',
    );
    try {
      await this.opts.patch(obj, releasePatch(this.ref.uid, m.uid ?? ''));
    } catch (err) {
      // NotFound: gone. Invalid: no such ownerReference, or the object was recreated.
      if (isNotFound(err) || isInvalid(err)) return;
      throw err;
    }
  }
}

export function newControllerRefManager<T extends KubeObject>(opts: ControllerRefManagerOptions<T>): ControllerRefManager<T> {
  return new RefManager(opts);
}
