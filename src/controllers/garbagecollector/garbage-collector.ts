/**
 * The garbage collector (pkg/controller/garbagecollector/garbagecollector.go):
 * two queues of graph nodes, keyed by uid.
 *
 * attemptToDelete: a node whose owners may be gone, a foreground owner to
 * re-check, or a virtual owner to verify. Owners are verified with live
 * reads (never the cache), so a dependent whose owner is merely not cached
 * yet survives:
 * - every owner absent (dangling): the dependent is deleted, in the policy
 *   its own finalizers ask for (orphan, foreground, else background);
 * - some owner alive (solid): references to absent owners, and to owners
 *   deleting in foreground, are removed; the dependent stays;
 * - owners deleting in foreground only: the dependent is deleted in
 *   foreground when it has dependents itself, else in background;
 * - a foreground owner whose blocking dependents are gone loses its
 *   `foregroundDeletion` finalizer.
 * attemptToOrphan: an owner with the `orphan` finalizer: its reference is
 * removed from every dependent, then the finalizer is removed.
 *
 * A cluster-scoped dependent naming a namespaced owner gets an
 * OwnerRefInvalidNamespace warning event and is left alone.
 */
import type { OwnerReference, PartialObjectMetadata } from '../../api/types.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import type { Client, DeleteOptions } from '../../client/interfaces.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import {
  FINALIZER_DELETE_DEPENDENTS,
  FINALIZER_ORPHAN,
  identityString,
  newGraph,
  type Graph,
  type GraphEvent,
  type GraphNode,
  type ObjectIdentity,
} from './graph.js';
import type { RestMapper } from './resources.js';

/** How many verified-absent owners are remembered (upstream's absentOwnerCache size). */
export const ABSENT_OWNER_CACHE_SIZE = 500;

/** The verdict of attemptToDeleteItem, for logs and tests. */
export type DeleteOutcome =
  | 'skipped'
  | 'virtual-removed'
  | 'virtual-exists'
  | 'kept'
  | 'refs-removed'
  | 'deleted'
  | 'finalizer-removed'
  | 'waiting'
  | 'invalid';

class InvalidNamespaceError extends Error {
  constructor() {
    super('cluster-scoped objects cannot refer to namespaced owners');
    this.name = 'InvalidNamespaceError';
  }
}

/** Least-recently-used set of absent owner coordinates. */
class LruSet {
  private readonly m = new Map<string, true>();
  constructor(private readonly max: number) {}
  has(k: string): boolean {
    if (!this.m.has(k)) return false;
    this.m.delete(k);
    this.m.set(k, true);
    return true;
  }
  add(k: string): void {
    this.m.delete(k);
    this.m.set(k, true);
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value!);
  }
}

export interface CollectorOptions {
  client: Client;
  clock: Clock;
  mapper: RestMapper;
  recorder: EventRecorder;
  logger: Logger;
}

export interface Collector {
  readonly graph: Graph;
  /** Feeds one informer event (or virtual delete) into the graph. */
  processGraphEvent(e: GraphEvent): void;
  /** One attempt-to-delete pass for the node of `uid` (the queue's sync). */
  attemptToDeleteItem(uid: string): Promise<DeleteOutcome>;
  /** One orphaning pass for the owner of `uid`. */
  attemptToOrphanItem(uid: string): Promise<void>;
  readonly deleteWorker: QueueWorker;
  readonly orphanWorker: QueueWorker;
}

function refKey(ref: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name' | 'uid'>, namespace: string): string {
  return `${ref.apiVersion}|${ref.kind}|${namespace}|${ref.name}|${ref.uid}`;
}

class CollectorImpl implements Collector {
  readonly graph: Graph;
  readonly deleteWorker: QueueWorker;
  readonly orphanWorker: QueueWorker;
  private readonly absentOwners = new LruSet(ABSENT_OWNER_CACHE_SIZE);
  private readonly log: Logger;

  constructor(private readonly o: CollectorOptions) {
    this.log = o.logger;
    this.graph = newGraph({
      attemptToDelete: (n) => this.deleteWorker.enqueue(n.identity.uid),
      attemptToOrphan: (n) => this.orphanWorker.enqueue(n.identity.uid),
      ownerGone: (id) => this.absentOwners.add(refKey(id, id.namespace)),
    });
    this.deleteWorker = newQueueWorker({
      name: 'garbage_collector_attempt_to_delete',
      clock: o.clock,
      logger: o.logger,
      maxRetries: Infinity,
      sync: async (uid) => {
        const outcome = await this.attemptToDeleteItem(uid);
        // A virtual owner that exists but is not observed yet: check again later.
        if (outcome === 'virtual-exists') this.deleteWorker.enqueueRateLimited(uid);
      },
    });
    this.orphanWorker = newQueueWorker({
      name: 'garbage_collector_attempt_to_orphan',
      clock: o.clock,
      logger: o.logger,
      maxRetries: Infinity,
      sync: (uid) => this.attemptToOrphanItem(uid),
    });
  }

  processGraphEvent(e: GraphEvent): void {
    this.graph.processEvent(e);
  }

  /** The mapping of an identity, or an error the queue retries (unknown kind). */
  private resourceFor(apiVersion: string, kind: string) {
    const m = this.o.mapper.mapping(apiVersion, kind);
    if (!m) throw new Error(`unable to get REST mapping for ${apiVersion}/${kind}`);
    return m;
  }

  /** Live read of an object's metadata; undefined when not found. */
  private async getObject(id: ObjectIdentity): Promise<PartialObjectMetadata | undefined> {
    const m = this.resourceFor(id.apiVersion, id.kind);
    // A namespaced kind without a namespace: only a cluster-scoped dependent's owner reference makes such a
    // (virtual) node. Upstream answers namespacedOwnerOfClusterScopedObjectErr and leaves the node alone.
    if (m.namespaced && id.namespace === '') throw new InvalidNamespaceError();
    const ri = m.namespaced ? this.o.client.metadata(m.gvr).namespace(id.namespace) : this.o.client.metadata(m.gvr);
    try {
      return await ri.get(id.name, { omitManagedFields: true });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Writes go through the metadata client, as upstream's: the answers are PartialObjectMetadata, not whole objects. */
  private resourceClient(id: ObjectIdentity) {
    const m = this.resourceFor(id.apiVersion, id.kind);
    return m.namespaced ? this.o.client.metadata(m.gvr).namespace(id.namespace) : this.o.client.metadata(m.gvr);
  }

  async attemptToDeleteItem(uid: string): Promise<DeleteOutcome> {
    const item = this.graph.node(uid);
    if (!item) return 'skipped';
    if (item.beingDeleted && !item.deletingDependents) {
      this.log.v(5).info({ item: identityString(item.identity) }, 'processing item that is being deleted; not attempted');
      return 'skipped';
    }
    let latest: PartialObjectMetadata | undefined;
    try {
      latest = await this.getObject(item.identity);
    } catch (err) {
      if (err instanceof InvalidNamespaceError) return 'invalid';
      throw err;
    }
    if (!latest || latest.metadata.uid !== item.identity.uid) {
      // Absent (or replaced by an object with another uid): drop the node and
      // let its dependents be re-examined.
      this.processGraphEvent({ type: 'virtualDelete', identity: item.identity });
      return 'virtual-removed';
    }
    if (!item.observed) return 'virtual-exists';
    if (item.deletingDependents) return this.processDeletingDependentsItem(item);

    const owners = latest.metadata.ownerReferences ?? [];
    if (owners.length === 0) return 'kept';
    let classified;
    try {
      classified = await this.classifyReferences(item, owners);
    } catch (err) {
      if (err instanceof InvalidNamespaceError) return 'invalid';
      throw err;
    }
    const { solid, dangling, waiting } = classified;
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return 'kept';
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.patchOwnerReferences(item, (refs) => refs.filter((r) => !drop.has(r.uid)));
      return 'refs-removed';
    }
    if (waiting.length > 0 && item.dependents.size > 0) {
      for (const dep of item.dependents) {
        if (dep.deletingDependents) {
          // An ownership cycle through foreground deletions: unblock our own
          // references so the owners are not waiting on us forever.
          this.log.v(2).info({ item: identityString(item.identity) }, 'unblocking owner references: dependent is also deleting in foreground');
          await this.patchOwnerReferences(item, (refs) => refs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)));
          break;
        }
      }
      await this.deleteObject(item.identity, latest, 'Foreground');
      return 'deleted';
    }
    const finalizers = latest.metadata.finalizers ?? [];
    const policy = finalizers.includes(FINALIZER_ORPHAN) ? 'Orphan' : finalizers.includes(FINALIZER_DELETE_DEPENDENTS) ? 'Foreground' : 'Background';
    this.log.v(2).info({ item: identityString(item.identity), policy }, 'deleting object');
    await this.deleteObject(item.identity, latest, policy);
    return 'deleted';
  }

  private async processDeletingDependentsItem(item: GraphNode): Promise<DeleteOutcome> {
    const blocking = item.blockingDependents();
    if (blocking.length === 0) {
      this.log.v(2).info({ item: identityString(item.identity) }, 'remove DeleteDependents finalizer for item');
      await this.removeFinalizer(item, FINALIZER_DELETE_DEPENDENTS);
      return 'finalizer-removed';
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.deleteWorker.enqueue(dep.identity.uid);
    return 'waiting';
  }

  private async classifyReferences(item: GraphNode, refs: OwnerReference[]) {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const { isDangling, owner } = await this.isDangling(ref, item);
      if (isDangling) dangling.push(ref);
      else if (owner?.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FINALIZER_DELETE_DEPENDENTS)) waiting.push(ref);
      else solid.push(ref);
    }
    return { solid, dangling, waiting };
  }

  /** Whether the owner `ref` names is verified absent (live read, uid compared). */
  private async isDangling(ref: OwnerReference, item: GraphNode): Promise<{ isDangling: boolean; owner?: PartialObjectMetadata }> {
    if (this.absentOwners.has(refKey(ref, '')) || this.absentOwners.has(refKey(ref, item.identity.namespace))) return { isDangling: true };
    const m = this.resourceFor(ref.apiVersion, ref.kind);
    if (m.namespaced && item.identity.namespace === '') {
      this.reportInvalidNamespaceOwnerRef(item, ref);
      throw new InvalidNamespaceError();
    }
    const ns = m.namespaced ? item.identity.namespace : '';
    const ri = m.namespaced ? this.o.client.metadata(m.gvr).namespace(ns) : this.o.client.metadata(m.gvr);
    let owner: PartialObjectMetadata;
    try {
      owner = await ri.get(ref.name, { omitManagedFields: true });
    } catch (err) {
      if (isNotFound(err)) {
        this.absentOwners.add(refKey(ref, ns));
        return { isDangling: true };
      }
      throw err;
    }
    if (owner.metadata.uid !== ref.uid) {
      this.absentOwners.add(refKey(ref, ns));
      return { isDangling: true };
    }
    return { isDangling: false, owner };
  }

  private reportInvalidNamespaceOwnerRef(item: GraphNode, ref: OwnerReference): void {
    const id = item.identity;
    const invalid: ObjectIdentity = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: id.namespace };
    this.o.recorder.eventf(
      { apiVersion: id.apiVersion, kind: id.kind, name: id.name, namespace: id.namespace || undefined, uid: id.uid },
      'Warning',
      'OwnerRefInvalidNamespace',
      'ownerRef %s does not exist in namespace %q',
      identityString(invalid),
      id.namespace,
    );
  }

  /**
   * Deletes with uid and resourceVersion preconditions; on a conflict,
   * retries with the uid alone when the owner references did not change.
   */
  private async deleteObject(id: ObjectIdentity, latest: PartialObjectMetadata, policy: NonNullable<DeleteOptions['propagationPolicy']>): Promise<void> {
    const ri = this.resourceClient(id);
    const rv = latest.metadata.resourceVersion;
    try {
      await ri.delete(id.name, { propagationPolicy: policy, preconditions: { uid: id.uid, ...(rv ? { resourceVersion: rv } : {}) }, discardResult: true });
      return;
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isConflict(err) || !rv) throw err;
    }
    const live = await this.getObject(id);
    if (!live || live.metadata.uid !== id.uid) return;
    if (JSON.stringify(live.metadata.ownerReferences ?? []) !== JSON.stringify(latest.metadata.ownerReferences ?? [])) {
      throw new Error(`owner references of ${identityString(id)} changed since they were checked; will re-check`);
    }
    try {
      await ri.delete(id.name, { propagationPolicy: policy, preconditions: { uid: id.uid }, discardResult: true });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Rewrites the node's ownerReferences with `edit` through a merge patch
   * carrying uid and resourceVersion, re-reading on conflict.
   */
  private async patchOwnerReferences(item: GraphNode, edit: (refs: OwnerReference[]) => OwnerReference[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const live = await this.getObject(item.identity);
      if (!live || live.metadata.uid !== item.identity.uid) return;
      const refs = live.metadata.ownerReferences ?? [];
      const next = edit(refs);
      if (JSON.stringify(next) === JSON.stringify(refs)) return;
      try {
        await this.resourceClient(item.identity).patch(item.identity.name, 'merge', {
          metadata: { ownerReferences: next.length ? next : null, uid: item.identity.uid, resourceVersion: live.metadata.resourceVersion },
        });
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 4) throw err;
      }
    }
  }

  /** Removes `finalizer` from the live object (merge patch, retried on conflict). */
  private async removeFinalizer(item: GraphNode, finalizer: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const live = await this.getObject(item.identity);
      if (!live || live.metadata.uid !== item.identity.uid) return;
      const finalizers = live.metadata.finalizers ?? [];
      if (!finalizers.includes(finalizer)) {
        this.log.v(5).info({ item: identityString(item.identity), finalizer }, 'the finalizer is already removed from object');
        return;
      }
      const next = finalizers.filter((f) => f !== finalizer);
      try {
        await this.resourceClient(item.identity).patch(item.identity.name, 'merge', {
          metadata: { finalizers: next.length ? next : null, resourceVersion: live.metadata.resourceVersion },
        });
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 4) throw err;
      }
    }
  }

  async attemptToOrphanItem(uid: string): Promise<void> {
    const owner = this.graph.node(uid);
    if (!owner) return;
    const dependents = [...owner.dependents];
    const failures: unknown[] = [];
    await Promise.all(
      dependents.map(async (dep) => {
        try {
          await this.patchOwnerReferences(dep, (refs) => refs.filter((r) => r.uid !== uid));
        } catch (err) {
          failures.push(err);
        }
      }),
    );
    if (failures.length) {
      throw new AggregateError(failures, `failed to orphan dependents of owner ${identityString(owner.identity)}: ${failures.map((e) => (e as Error).message).join('; ')}`);
    }
    this.log.v(5).info({ owner: identityString(owner.identity) }, 'successfully updated all dependents');
    await this.removeFinalizer(owner, FINALIZER_ORPHAN);
  }
}

export function newCollector(opts: CollectorOptions): Collector {
  return new CollectorImpl(opts);
}
