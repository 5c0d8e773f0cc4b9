/**
 * The ReplicaSet controller (pkg/controller/replicaset/replica_set.go), also
 * serving ReplicationControllers through a ReplicaSetKind.
 *
 * Contract of one sync: keep spec.replicas active pods owned by the object.
 * - Expectations: a sync that creates or deletes pods records how many pod
 *   events it waits for; until the pod informer has delivered them all (or
 *   they expire after 5 minutes) later syncs only refresh the status, so a
 *   cache that lags behind never causes duplicate pods or over-deletion.
 * - Creations go in slow-start batches (1, 2, 4, ...) of at most
 *   burstReplicas per sync, stopping at the first failing batch.
 * - Surplus pods are deleted in Kubernetes' ranking order (unscheduled,
 *   pending, not ready, lower deletion cost, doubled up on a node, ...).
 * - Orphans matching the selector are adopted (after re-reading the owner's
 *   UID from the server); owned pods that stopped matching are released.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Selector } from '../../api/labels-selector.js';
import { apiVersionOf, splitKey, type KubeObject } from '../../api/types.js';
import { isNotFound, isStatusError } from '../../client/errors.js';
import type { ResourceInterface } from '../../client/interfaces.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerExpectations, newUIDTrackingControllerExpectations, type UIDTrackingControllerExpectations } from '../../controller/expectations.js';
import { getControllerOf, newControllerRef, newControllerRefManager, patchWith, recheckDeletionTimestamp } from '../../controller/controller-ref-manager.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { newPodControl, type PodControl } from '../../controller/pod-control.js';
import { filterActivePods, isPodReady } from '../../controller/pod-util.js';
import { rankPodsByRelatedPodsOnSameNode, sortActivePodsWithRanks } from '../../controller/ranking.js';
import { GVR } from '../../api/gvr.js';
import { newLister } from '../../tools/cache/listers.js';
import type { DeletedFinalStateUnknown, Lister, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext } from '../types.js';
import type { ReplicaSetKind, ReplicaSetLike } from './kind.js';
import { SLOW_START_INITIAL_BATCH_SIZE, slowStartBatch } from './slow-start.js';
import { ensureControllerIndex, ownedBy, ownedOrOrphaned } from '../../controller/controller-index.js';
import { calculateStatus, nextAvailabilityCheckMs, updateReplicaSetStatus } from './status.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** Most pods created or deleted by one sync (upstream BurstReplicas). */
export const BURST_REPLICAS = 500;

type PodObject = Pod & KubeObject;

export interface ReplicaSetControllerOptions {
  /** Most pods created or deleted per sync (default BURST_REPLICAS). */
  burstReplicas?: number;
  /** Replaces the PodControl built from the context (tests). */
  podControl?: PodControl;
}

export interface ReplicaSetController extends Controller {
  /** Syncs one `namespace/name` key (what a worker does). */
  sync(key: string): Promise<void>;
  readonly expectations: UIDTrackingControllerExpectations;
  readonly worker: QueueWorker;
}

class ReplicaSetControllerImpl implements ReplicaSetController {
  readonly name: string;
  readonly expectations: UIDTrackingControllerExpectations;
  readonly worker: QueueWorker;
  private readonly rsInformer: SharedIndexInformer<ReplicaSetLike>;
  private readonly podInformer: SharedIndexInformer<PodObject>;
  private readonly rsLister: Lister<ReplicaSetLike>;
  private readonly podControl: PodControl;
  private readonly resource: ResourceInterface<ReplicaSetLike>;
  private readonly pods: ResourceInterface<PodObject>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly burstReplicas: number;

  constructor(
    private readonly kind: ReplicaSetKind,
    ctx: ControllerContext,
    descriptorName: string,
    opts: ReplicaSetControllerOptions,
  ) {
    this.name = descriptorName;
    this.clock = ctx.clock;
    this.log = ctx.logger(descriptorName);
    this.burstReplicas = opts.burstReplicas ?? BURST_REPLICAS;
    this.resource = ctx.client.resource<ReplicaSetLike>(kind.gvr);
    this.pods = ctx.client.resource<PodObject>(GVR.pods);
    this.podControl = opts.podControl ?? newPodControl({ client: ctx.client, recorder: ctx.recorder(kind.eventComponent), logger: this.log });
    this.expectations = newUIDTrackingControllerExpectations(newControllerExpectations({ clock: ctx.clock, logger: this.log }), { logger: this.log });
    this.worker = newQueueWorker({ name: kind.name, clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    this.rsInformer = kind.informer(ctx.informers);
    this.podInformer = ctx.informers.pods() as SharedIndexInformer<PodObject>;
    this.rsLister = newLister(this.rsInformer.getIndexer());
    ensureControllerIndex(this.podInformer);

    this.rsInformer.addEventHandler({
      onAdd: (rs) => this.enqueue(rs),
      onUpdate: (oldRS, curRS) => this.updateRS(oldRS, curRS),
      onDelete: (obj) => this.deleteRS(obj),
    });
    this.podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (oldPod, curPod) => this.updatePod(oldPod, curPod),
      onDelete: (obj) => this.deletePod(obj),
    });
  }

  healthy(): boolean {
    return this.worker.healthy();
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({ kind: this.kind.gvk.kind }, 'starting controller');
    const synced = await waitForCacheSync(this.kind.name, signal, this.clock, () => this.rsInformer.hasSynced(), () => this.podInformer.hasSynced());
    if (!synced) return;
    await this.worker.run(workers, signal);
    this.log.info({ kind: this.kind.gvk.kind }, 'shutting down controller');
  }

  // --- event handlers -------------------------------------------------------

  private enqueue(rs: ReplicaSetLike): void {
    this.worker.enqueue(keyFunc(rs));
  }

  private updateRS(oldRS: ReplicaSetLike, curRS: ReplicaSetLike): void {
    if (oldRS.metadata?.uid !== curRS.metadata?.uid) {
      // Deleted and recreated under the same name: forget the old one's expectations.
      this.deleteRS(oldRS);
    }
    if ((oldRS.spec?.replicas ?? 0) !== (curRS.spec?.replicas ?? 0)) {
      this.log.v(4).info({ key: keyFunc(curRS), old: oldRS.spec?.replicas, new: curRS.spec?.replicas }, 'replicas changed');
    }
    this.enqueue(curRS);
  }

  private deleteRS(obj: ReplicaSetLike | DeletedFinalStateUnknown<ReplicaSetLike>): void {
    const key = keyFunc(obj);
    this.expectations.deleteExpectations(key);
    this.worker.enqueue(key);
  }

  /** The object `ref` points at, when it is one of ours and the UID matches. */
  private resolveControllerRef(namespace: string, ref: OwnerReference): ReplicaSetLike | undefined {
    if (ref.kind !== this.kind.gvk.kind || ref.apiVersion?.split('/')[0] !== apiVersionOf(this.kind.gvk.group, this.kind.gvk.version).split('/')[0]) {
      return undefined;
    }
    const rs = this.rsLister.namespace(namespace).get(ref.name);
    return rs && rs.metadata?.uid === ref.uid ? rs : undefined;
  }

  /** Objects in the pod's namespace whose (non-empty) selector matches it (GetPodReplicaSets). */
  private podControllers(pod: PodObject): ReplicaSetLike[] {
    const out: ReplicaSetLike[] = [];
    for (const rs of this.rsLister.namespace(pod.metadata?.namespace ?? '').list()) {
      let selector: Selector;
      try {
        selector = this.kind.selector(rs);
      } catch {
        continue;
      }
      if (selector.empty() || !selector.matches(pod.metadata?.labels)) continue;
      out.push(rs);
    }
    if (out.length > 1) {
      this.log.v(2).info({ pod: keyFunc(pod), count: out.length }, 'more than one controller selects the pod');
    }
    return out;
  }

  private addPod(pod: PodObject): void {
    if (pod.metadata?.deletionTimestamp) {
      // Restarted controller seeing a pod already being deleted: count it as a deletion.
      this.deletePod(pod);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const rs = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
      if (!rs) return;
      const key = keyFunc(rs);
      this.expectations.creationObserved(key);
      this.worker.enqueue(key);
      return;
    }
    // An orphan: wake every controller that could adopt it.
    for (const rs of this.podControllers(pod)) this.enqueue(rs);
  }

  private updatePod(oldPod: PodObject, curPod: PodObject): void {
    if (oldPod.metadata?.resourceVersion === curPod.metadata?.resourceVersion) return; // periodic resync
    const labelChanged = JSON.stringify(oldPod.metadata?.labels ?? {}) !== JSON.stringify(curPod.metadata?.labels ?? {});
    if (curPod.metadata?.deletionTimestamp) {
      // Graceful deletion started: count the deletion now rather than waiting for the final delete.
      this.deletePod(curPod);
      if (labelChanged) this.deletePod(oldPod);
      return;
    }
    const curRef = getControllerOf(curPod);
    const oldRef = getControllerOf(oldPod);
    const refChanged = JSON.stringify(curRef ?? null) !== JSON.stringify(oldRef ?? null);
    if (refChanged && oldRef) {
      const rs = this.resolveControllerRef(oldPod.metadata?.namespace ?? '', oldRef);
      if (rs) this.enqueue(rs);
    }
    if (curRef) {
      const rs = this.resolveControllerRef(curPod.metadata?.namespace ?? '', curRef);
      if (!rs) return;
      this.enqueue(rs);
      const minReady = rs.spec?.minReadySeconds ?? 0;
      if (!isPodReady(oldPod) && isPodReady(curPod) && minReady > 0) {
        // Check availability once minReadySeconds passed (plus a second of skew).
        this.worker.enqueueAfter(keyFunc(rs), minReady * 1000 + 1000);
      }
      return;
    }
    if (labelChanged || refChanged) {
      for (const rs of this.podControllers(curPod)) this.enqueue(rs);
    }
  }

  private deletePod(obj: PodObject | DeletedFinalStateUnknown<PodObject>): void {
    const pod = objectFromDeleted(obj);
    if (!pod) {
      this.log.error({ object: keyFunc(obj as PodObject) }, 'tombstone contained an object that is not a pod');
      return;
    }
    const ref = getControllerOf(pod);
    if (!ref) return;
    const rs = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
    if (!rs) return;
    const key = keyFunc(rs);
    this.expectations.deletionObserved(key, keyFunc(pod));
    this.worker.enqueue(key);
  }

  // --- sync -------------------------------------------------------------------

  async sync(key: string): Promise<void> {
    const start = this.clock.now();
    try {
      await this.syncKey(key);
    } finally {
      this.log.v(4).info({ key, duration: this.clock.since(start) }, 'finished syncing');
    }
  }

  private async syncKey(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.rsLister.namespace(namespace).get(name);
    if (!cached) {
      this.log.v(4).info({ key }, 'object has been deleted');
      this.expectations.deleteExpectations(key);
      return;
    }
    const needsSync = this.expectations.satisfiedExpectations(key);
    let selector: Selector;
    try {
      selector = this.kind.selector(cached);
    } catch (err) {
      // A bad selector will not fix itself by retrying.
      this.log.error(err, { key }, 'invalid selector');
      return;
    }
    const rs = this.withKind(deepCopy(cached));
    // Only this object's pods and the namespace's orphans can be claimed (the rest are someone else's).
    const active = filterActivePods(ownedOrOrphaned(this.podInformer.getIndexer(), namespace, rs.metadata?.uid ?? ''));
    const pods = await this.claimPods(rs, selector, active);

    let manageErr: unknown;
    if (needsSync && !rs.metadata?.deletionTimestamp) {
      try {
        await this.manageReplicas(pods, rs);
      } catch (err) {
        manageErr = err ?? new Error('unknown error');
      }
    }
    const now = this.clock.now();
    const status = calculateStatus(rs, pods, manageErr, now);
    const updated = await updateReplicaSetStatus(this.resource, rs, status);
    if (manageErr === undefined) {
      const wait = nextAvailabilityCheckMs(updated, pods, now);
      if (wait !== undefined) this.worker.enqueueAfter(key, wait + 1000);
    }
    if (manageErr !== undefined) throw manageErr;
  }

  /** Objects from the cache lack apiVersion and kind; events and owner references need them. */
  private withKind(rs: ReplicaSetLike): ReplicaSetLike {
    rs.apiVersion = apiVersionOf(this.kind.gvk.group, this.kind.gvk.version);
    rs.kind = this.kind.gvk.kind;
    return rs;
  }

  private async claimPods(rs: ReplicaSetLike, selector: Selector, pods: PodObject[]): Promise<PodObject[]> {
    const ns = rs.metadata?.namespace ?? '';
    const manager = newControllerRefManager<PodObject>({
      controller: rs,
      controllerKind: this.kind.gvk,
      selector,
      canAdopt: recheckDeletionTimestamp(rs, () => this.resource.namespace(ns).get(rs.metadata?.name ?? '')),
      patch: patchWith(this.pods),
      logger: this.log,
    });
    return manager.claim(pods);
  }

  /** Creates or deletes pods so that `pods` (active, owned) moves toward spec.replicas. */
  private async manageReplicas(pods: PodObject[], rs: ReplicaSetLike): Promise<void> {
    const key = keyFunc(rs);
    const ns = rs.metadata?.namespace ?? '';
    const diff = pods.length - (rs.spec?.replicas ?? 0);
    if (diff < 0) {
      const want = Math.min(-diff, this.burstReplicas);
      // Expect before creating: the informer may see a pod before create() returns.
      this.expectations.expectCreations(key, want);
      this.log.v(2).info({ key, need: rs.spec?.replicas, creating: want }, 'too few replicas');
      const ref = newControllerRef(rs, this.kind.gvk);
      const { successes, error } = await slowStartBatch(want, SLOW_START_INITIAL_BATCH_SIZE, async () => {
        try {
          await this.podControl.createPods(ns, rs.spec?.template ?? {}, rs, ref);
        } catch (err) {
          // The namespace is going away: every later create fails too; nothing to report.
          if (isStatusError(err) && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')) return;
          throw err;
        }
      });
      // Pods never created will never be observed.
      for (let i = successes; i < want; i++) this.expectations.creationObserved(key);
      if (error !== undefined) throw error;
      return;
    }
    if (diff > 0) {
      const count = Math.min(diff, this.burstReplicas);
      this.log.v(2).info({ key, need: rs.spec?.replicas, deleting: count }, 'too many replicas');
      const toDelete = this.podsToDelete(pods, this.indirectlyRelatedPods(rs), count);
      this.expectations.expectDeletions(key, toDelete.map((p) => keyFunc(p)));
      const results = await Promise.allSettled(
        toDelete.map(async (pod) => {
          try {
            await this.podControl.deletePod(ns, pod.metadata?.name ?? '', rs);
          } catch (err) {
            // The deletion will not be observed as one of ours.
            this.expectations.deletionObserved(key, keyFunc(pod));
            if (!isNotFound(err)) throw err;
          }
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** The first `count` pods in deletion order (getPodsToDelete). */
  private podsToDelete(pods: PodObject[], related: PodObject[], count: number): PodObject[] {
    if (count >= pods.length) return pods;
    const ranked = sortActivePodsWithRanks(rankPodsByRelatedPodsOnSameNode(pods, related), this.clock.now());
    return ranked.slice(0, count).map((r) => r.pod);
  }

  /**
   * Pods of every object of our kind that shares this one's controller (e.g.
   * all ReplicaSets of a Deployment), or just this one's when it has none
   * (getIndirectlyRelatedPods). Used to spread deletions over nodes.
   */
  private indirectlyRelatedPods(rs: ReplicaSetLike): PodObject[] {
    const ns = rs.metadata?.namespace ?? '';
    const owner = getControllerOf(rs);
    const siblings = owner
      ? this.rsLister.namespace(ns).list().filter((o) => getControllerOf(o)?.uid === owner.uid)
      : [rs];
    const uids = new Set(siblings.map((o) => o.metadata?.uid));
    uids.add(rs.metadata?.uid);
    return [...uids].flatMap((uid) => (uid ? ownedBy(this.podInformer.getIndexer(), ns, uid) : []));
  }

}

/** Builds the controller for `kind`, registering its informer handlers. */
export function newReplicaSetController(
  kind: ReplicaSetKind,
  ctx: ControllerContext,
  descriptorName: string,
  opts: ReplicaSetControllerOptions = {},
): ReplicaSetController {
  return new ReplicaSetControllerImpl(kind, ctx, descriptorName, opts);
}
