/**
 * The Deployment controller (pkg/controller/deployment/deployment_controller.go):
 * owns ReplicaSets through controllerRef, one per pod template, and moves
 * pods from the old ones to the new one by the Deployment's strategy.
 *
 * A sync, in order: adopt / release ReplicaSets; a Deployment being deleted
 * only gets its status; paused ones are scaled; a
 * `deprecated.deployment.rollback.to` request is served; spec.replicas
 * changes are scaled (proportionally during a rollout); otherwise Recreate
 * or RollingUpdate takes one step. Registered as `deployment-controller`
 * (--concurrent-deployment-syncs, default 5).
 */
import { ensureControllerIndex, ownedBy } from '../../controller/controller-index.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { GVR } from '../../api/gvr.js';
import { labelSelectorIsEmpty, selectorFromLabelSelector } from '../../api/labels.js';
import type { Selector } from '../../api/labels-selector.js';
import { splitKey } from '../../api/types.js';
import type { ResourceInterface } from '../../client/interfaces.js';
import { serverOlderThan } from '../../client/discovery.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { getControllerOf, newControllerRefManager, patchWith, recheckDeletionTimestamp, resolveControllerRef, controllersSelecting } from '../../controller/controller-ref-manager.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import { newLister } from '../../tools/cache/listers.js';
import type { DeletedFinalStateUnknown, Lister, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { serverVersionIs } from '../server-version.js';
import { rolloutRecreate } from './recreate.js';
import { getRollbackTo, rollback } from './rollback.js';
import { rolloutRolling } from './rolling.js';
import type { PodMap, SyncContext } from './sync-context.js';
import { DEPLOYMENT_GVK, checkPausedConditions, isScalingEvent, syncScaleOrPaused, syncStatusOnly } from './sync.js';
import type { DeploymentObject, PodObject, ReplicaSetObject } from './types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface DeploymentController extends Controller {
  /** Syncs one `namespace/name` key (what a worker does). */
  sync(key: string): Promise<void>;
  readonly worker: QueueWorker;
}

/**
 * The apps/v1 defaults (pkg/apis/apps/v1/defaults.go) for fields a server
 * normally fills in; applied to the controller's copy only, so a Deployment
 * written without them (e.g. by a non-defaulting test server) still syncs.
 */
export function withDefaults(d: DeploymentObject): DeploymentObject {
  d.spec ??= { selector: {}, template: {} };
  d.spec.replicas ??= 1;
  d.spec.strategy ??= {};
  d.spec.strategy.type ??= 'RollingUpdate';
  if (d.spec.strategy.type === 'RollingUpdate') {
    d.spec.strategy.rollingUpdate ??= {};
    d.spec.strategy.rollingUpdate.maxSurge ??= '25%';
    d.spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
  }
  d.spec.revisionHistoryLimit ??= 10;
  d.spec.progressDeadlineSeconds ??= 600;
  return d;
}

class DeploymentControllerImpl implements DeploymentController {
  readonly name = 'deployment-controller';
  readonly worker: QueueWorker;
  private readonly dInformer: SharedIndexInformer<DeploymentObject>;
  private readonly rsInformer: SharedIndexInformer<ReplicaSetObject>;
  private readonly podInformer: SharedIndexInformer<PodObject>;
  private readonly dLister: Lister<DeploymentObject>;
  private readonly rsLister: Lister<ReplicaSetObject>;
  private readonly deployments: ResourceInterface<DeploymentObject>;
  private readonly replicaSets: ResourceInterface<ReplicaSetObject>;
  private readonly sc: SyncContext;
  private readonly clock: Clock;
  private readonly log: Logger;

  constructor(ctx: ControllerContext, opts: DeploymentControllerOptions) {
    this.clock = ctx.clock;
    this.log = ctx.logger(this.name);
    this.deployments = ctx.client.resource<DeploymentObject>(GVR.deployments);
    this.replicaSets = ctx.client.resource<ReplicaSetObject>(GVR.replicaSets);
    this.worker = newQueueWorker({ name: 'deployment', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    this.dInformer = ctx.informers.deployments() as SharedIndexInformer<DeploymentObject>;
    this.rsInformer = ctx.informers.replicaSets() as SharedIndexInformer<ReplicaSetObject>;
    this.podInformer = ctx.informers.pods() as SharedIndexInformer<PodObject>;
    this.dLister = newLister(this.dInformer.getIndexer());
    this.rsLister = newLister(this.rsInformer.getIndexer());
    ensureControllerIndex(this.podInformer);
    this.sc = {
      deployments: this.deployments,
      replicaSets: this.replicaSets,
      rsLister: this.rsLister,
      recorder: ctx.recorder('deployment-controller'),
      clock: ctx.clock,
      log: this.log,
      enqueueAfter: (d, ms) => this.worker.enqueueAfter(keyFunc(d), ms),
      enqueueRateLimited: (d) => this.worker.enqueueRateLimited(keyFunc(d)),
      ...(opts.legacyScalingMessages ? { legacyScalingMessages: true } : {}),
    };

    this.dInformer.addEventHandler({
      onAdd: (d) => this.enqueue(d),
      onUpdate: (_old, cur) => this.enqueue(cur),
      onDelete: (obj) => this.worker.enqueue(keyFunc(obj)),
    });
    this.rsInformer.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (oldRS, curRS) => this.updateReplicaSet(oldRS, curRS),
      onDelete: (obj) => this.deleteReplicaSet(obj),
    });
    this.podInformer.addEventHandler({ onDelete: (obj) => this.deletePod(obj) });
  }

  healthy(): boolean {
    return this.worker.healthy();
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({}, 'starting controller');
    const synced = await waitForCacheSync(
      'deployment',
      signal,
      this.clock,
      () => this.dInformer.hasSynced(),
      () => this.rsInformer.hasSynced(),
      () => this.podInformer.hasSynced(),
    );
    if (!synced) return;
    await this.worker.run(workers, signal);
    this.log.info({}, 'shutting down controller');
  }

  private enqueue(d: DeploymentObject): void {
    this.worker.enqueue(keyFunc(d));
  }

  // --- handlers ----------------------------------------------------------------

  private resolveControllerRef(namespace: string, ref: { kind: string; name: string; uid: string }): DeploymentObject | undefined {
    return resolveControllerRef(this.dLister, namespace, ref, 'Deployment');
  }

  /** Deployments whose (non-empty) selector matches the ReplicaSet's labels (getDeploymentsForReplicaSet). */
  private deploymentsForReplicaSet(rs: ReplicaSetObject): DeploymentObject[] {
    const out = controllersSelecting(this.dLister, rs.metadata?.namespace ?? '', rs.metadata?.labels);
    if (out.length > 1) this.log.v(4).info({ replicaSet: keyFunc(rs), count: out.length }, 'more than one deployment selects the replica set');
    return out;
  }

  private addReplicaSet(rs: ReplicaSetObject): void {
    if (rs.metadata?.deletionTimestamp) {
      this.deleteReplicaSet(rs);
      return;
    }
    const ref = getControllerOf(rs);
    if (ref) {
      const d = this.resolveControllerRef(rs.metadata?.namespace ?? '', ref);
      if (d) this.enqueue(d);
      return;
    }
    for (const d of this.deploymentsForReplicaSet(rs)) this.enqueue(d);
  }

  private updateReplicaSet(oldRS: ReplicaSetObject, curRS: ReplicaSetObject): void {
    if (oldRS.metadata?.resourceVersion === curRS.metadata?.resourceVersion) return;
    const curRef = getControllerOf(curRS);
    const oldRef = getControllerOf(oldRS);
    const refChanged = JSON.stringify(curRef ?? null) !== JSON.stringify(oldRef ?? null);
    if (refChanged && oldRef) {
      const d = this.resolveControllerRef(oldRS.metadata?.namespace ?? '', oldRef);
      if (d) this.enqueue(d);
    }
    if (curRef) {
      const d = this.resolveControllerRef(curRS.metadata?.namespace ?? '', curRef);
      if (d) this.enqueue(d);
      return;
    }
    const labelChanged = JSON.stringify(curRS.metadata?.labels ?? {}) !== JSON.stringify(oldRS.metadata?.labels ?? {});
    if (labelChanged || refChanged) {
      for (const d of this.deploymentsForReplicaSet(curRS)) this.enqueue(d);
    }
  }

  private deleteReplicaSet(obj: ReplicaSetObject | DeletedFinalStateUnknown<ReplicaSetObject>): void {
    const rs = objectFromDeleted(obj);
    if (!rs) return;
    const ref = getControllerOf(rs);
    if (!ref) return;
    const d = this.resolveControllerRef(rs.metadata?.namespace ?? '', ref);
    if (d) this.enqueue(d);
  }

  /** Recreate waits for old pods to be gone: wake it when the last one goes. */
  private deletePod(obj: PodObject | DeletedFinalStateUnknown<PodObject>): void {
    const pod = objectFromDeleted(obj);
    if (!pod) return;
    const ns = pod.metadata?.namespace ?? '';
    const rsRef = getControllerOf(pod);
    if (!rsRef || rsRef.kind !== 'ReplicaSet') return;
    const rs = this.rsLister.namespace(ns).get(rsRef.name);
    if (!rs || rs.metadata?.uid !== rsRef.uid) return;
    const dRef = getControllerOf(rs);
    if (!dRef) return;
    const d = this.resolveControllerRef(ns, dRef);
    if (!d || d.spec?.strategy?.type !== 'Recreate') return;
    const owned = this.rsLister.namespace(ns).list().filter((r) => getControllerOf(r)?.uid === d.metadata?.uid);
    let podMap: PodMap;
    try {
      podMap = this.podMapFor(d, owned);
    } catch (err) {
      this.log.error(err, { deployment: keyFunc(d) }, 'cannot list pods for deployment');
      return;
    }
    let numPods = 0;
    for (const pods of podMap.values()) numPods += pods.length;
    if (numPods === 0) this.enqueue(d);
  }

  // --- sync --------------------------------------------------------------------

  async sync(key: string): Promise<void> {
    const start = this.clock.now();
    try {
      await this.syncDeployment(key);
    } finally {
      this.log.v(4).info({ key, duration: this.clock.since(start) }, 'finished syncing deployment');
    }
  }

  private async syncDeployment(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.dLister.namespace(namespace).get(name);
    if (!cached) {
      this.log.v(2).info({ key }, 'deployment has been deleted');
      return;
    }
    const d = withDefaults(deepCopy(cached));
    d.apiVersion = 'apps/v1';
    d.kind = 'Deployment';

    const sel = d.spec?.selector;
    if (sel && labelSelectorIsEmpty(sel)) {
      this.sc.recorder.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) {
        d.status = { ...(d.status ?? {}), observedGeneration: d.metadata?.generation ?? 0 };
        await this.deployments.namespace(namespace).updateStatus(d);
      }
      return;
    }

    const rsList = await this.getReplicaSetsForDeployment(d);
    const podMap = this.podMapFor(d, rsList);

    if (d.metadata?.deletionTimestamp) {
      await syncStatusOnly(this.sc, d, rsList);
      return;
    }
    // Record pause / resume before anything else so the deadline does not count paused time.
    await checkPausedConditions(this.sc, d);
    if (d.spec?.paused) {
      await syncScaleOrPaused(this.sc, d, rsList);
      return;
    }
    // Rollback is not re-entrant: nothing else happens until the request is cleared.
    if (getRollbackTo(d) !== undefined) {
      await rollback(this.sc, d, rsList);
      return;
    }
    if (await isScalingEvent(this.sc, d, rsList)) {
      await syncScaleOrPaused(this.sc, d, rsList);
      return;
    }
    switch (d.spec?.strategy?.type) {
      case 'Recreate':
        await rolloutRecreate(this.sc, d, rsList, podMap);
        return;
      case 'RollingUpdate':
        await rolloutRolling(this.sc, d, rsList);
        return;
      default:
        throw new Error(`unexpected deployment strategy type: ${d.spec?.strategy?.type ?? ''}`);
    }
  }

  /**
   * The ReplicaSets this Deployment owns after adopting matching orphans and
   * releasing owned ones that stopped matching (getReplicaSetsForDeployment).
   * The Deployment's UID is re-read from the server before adopting.
   */
  private async getReplicaSetsForDeployment(d: DeploymentObject): Promise<ReplicaSetObject[]> {
    const ns = d.metadata?.namespace ?? '';
    let selector: Selector;
    try {
      selector = selectorFromLabelSelector(d.spec?.selector as LabelSelector);
    } catch (err) {
      throw new Error(`deployment ${ns}/${d.metadata?.name ?? ''} has invalid label selector: ${(err as Error).message}`, { cause: err });
    }
    const manager = newControllerRefManager<ReplicaSetObject>({
      controller: d,
      controllerKind: DEPLOYMENT_GVK,
      selector,
      canAdopt: recheckDeletionTimestamp(d, () => this.deployments.namespace(ns).get(d.metadata?.name ?? '')),
      patch: patchWith(this.replicaSets),
      logger: this.log,
    });
    return manager.claim(this.rsLister.namespace(ns).list());
  }

  /** Pods matching the selector, grouped by the UID of the owning ReplicaSet in `rsList` (getPodMapForDeployment). */
  private podMapFor(d: DeploymentObject, rsList: readonly ReplicaSetObject[]): PodMap {
    const selector = selectorFromLabelSelector(d.spec?.selector);
    const map: PodMap = new Map();
    const ns = d.metadata?.namespace ?? '';
    // The pods each ReplicaSet controls, from the controller index, that the Deployment's selector matches.
    for (const rs of rsList) {
      const uid = rs.metadata?.uid ?? '';
      map.set(uid, ownedBy(this.podInformer.getIndexer(), ns, uid).filter((p) => selector.matches(p.metadata?.labels)));
    }
    return map;
  }
}

export interface DeploymentControllerOptions {
  /** ScalingReplicaSet events worded as before 1.22 ("Scaled up replica set web-1 to 3"; see scalingMessage). */
  legacyScalingMessages?: boolean;
}

export function newDeploymentController(ctx: ControllerContext, opts: DeploymentControllerOptions = {}): DeploymentController {
  return new DeploymentControllerImpl(ctx, opts);
}

/** Whether an API server of `version` came with a controller manager that worded ScalingReplicaSet without the previous size (before 1.22). */
export function usesLegacyScalingMessages(version: { major?: string; minor?: string }): boolean {
  return serverOlderThan(version, 22);
}

export const descriptor: ControllerDescriptor = {
  name: 'deployment-controller',
  aliases: ['deployment'],
  requiredResources: [GVR.deployments, GVR.replicaSets, GVR.pods],
  defaultWorkers: 5,
  create: async (ctx) => {
    const legacyScalingMessages = await serverVersionIs(ctx, usesLegacyScalingMessages, 'deployment-controller', 'wording events as the current release does');
    return newDeploymentController(ctx, { legacyScalingMessages });
  },
};

