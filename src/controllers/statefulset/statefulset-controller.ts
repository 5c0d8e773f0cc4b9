/**
 * The StatefulSet controller (pkg/controller/statefulset/stateful_set.go):
 * watches StatefulSets, their pods and ControllerRevisions, and syncs one set
 * per key: adopt orphan revisions, claim pods (adopt matching orphans whose
 * name is `<set>-<ordinal>`, release those that stopped matching), then one
 * step of StatefulSetControl.
 */
import type { ControllerRevision } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromLabelSelector } from '../../api/labels.js';
import { splitKey } from '../../api/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { getControllerOf, newControllerRefManager, patchWith, recheckDeletionTimestamp, resolveControllerRef, controllersSelecting } from '../../controller/controller-ref-manager.js';
import { newHistory, type History, type Revision } from '../../controller/history/controller-history.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { isPodReady } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { DeletedFinalStateUnknown, Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { newStatefulPodControl } from './stateful-pod-control.js';
import { newStatefulSetControl, type StatefulSetControl } from './stateful-set-control.js';
import { isMemberOf, STATEFUL_SET_KIND, type Claim, type KPod, type Set } from './stateful-set-utils.js';

export const STATEFULSET_CONTROLLER_NAME = 'statefulset-controller';

export interface StatefulSetController extends Controller {
  /** Syncs one set by `namespace/name` (the queue's sync). */
  sync(key: string): Promise<void>;
  hasSynced(): boolean;
}

class StatefulSetCtl implements StatefulSetController {
  readonly name = STATEFULSET_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly setLister: Lister<Set>;
  private readonly podLister: Lister<KPod>;
  private readonly history: History;
  private readonly control: StatefulSetControl;
  private readonly synced: Array<() => boolean> = [];
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting stateful set controller', stopping: 'Shutting down statefulset controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({ name: 'statefulset', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    const recorder = ctx.recorder(this.name);
    const setInf = ctx.informers.statefulSets();
    const podInf = ctx.informers.pods();
    const revInf = ctx.informers.controllerRevisions();
    const pvcInf = ctx.informers.persistentVolumeClaims();
    this.setLister = newLister(setInf.getIndexer());
    this.podLister = newLister(podInf.getIndexer());
    const revLister = newLister(revInf.getIndexer()) as Lister<Revision>;
    const claimLister = newLister(pvcInf.getIndexer()) as Lister<Claim>;
    this.history = newHistory(ctx.client, revLister);
    this.control = newStatefulSetControl({
      client: ctx.client,
      history: this.history,
      podControl: newStatefulPodControl(ctx.client, claimLister, this.podLister, recorder),
      setLister: this.setLister,
      recorder,
      clock: ctx.clock,
      logger: this.log,
    });
    const regs = [
      setInf.addEventHandler({
        onAdd: (s) => this.enqueue(s),
        onUpdate: (_o, s) => this.enqueue(s),
        onDelete: (s) => this.worker.enqueue(keyFunc(s)),
      }),
      podInf.addEventHandler({
        onAdd: (p) => this.onPod(p),
        onUpdate: (o, p) => this.onPodUpdate(o, p),
        onDelete: (p) => this.onPodDelete(p),
      }),
      revInf.addEventHandler({
        onAdd: (r) => this.onRevision(r),
        onUpdate: (_o, r) => this.onRevision(r),
        onDelete: (r) => {
          const o = objectFromDeleted(r);
          if (o) this.onRevision(o);
        },
      }),
      pvcInf.addEventHandler({}),
    ];
    this.synced = regs.map((r) => () => r.hasSynced());
  }

  private enqueue(set: Set): void {
    this.worker.enqueue(keyFunc(set));
  }

  /** The set controlling `obj` by controllerRef (same uid), if it exists. */
  private resolveControllerRef(namespace: string, obj: { metadata?: Pod['metadata'] }): Set | undefined {
    return resolveControllerRef(this.setLister, namespace, getControllerOf(obj), 'StatefulSet');
  }

  /** Sets whose selector matches the pod (orphans: one may adopt it). */
  private setsForPod(pod: Pod): Set[] {
    const labels = pod.metadata?.labels;
    if (!labels || Object.keys(labels).length === 0) return [];
    return controllersSelecting(this.setLister, pod.metadata?.namespace ?? '', labels);
  }

  private onPod(pod: KPod): void {
    if (pod.metadata?.deletionTimestamp) {
      this.onPodDelete(pod);
      return;
    }
    const set = this.resolveControllerRef(pod.metadata?.namespace ?? '', pod);
    if (set) {
      this.enqueue(set);
      return;
    }
    if (getControllerOf(pod)) return;
    for (const s of this.setsForPod(pod)) this.enqueue(s);
  }

  private onPodUpdate(old: KPod, cur: KPod): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    const labelsChanged = JSON.stringify(old.metadata?.labels ?? {}) !== JSON.stringify(cur.metadata?.labels ?? {});
    const oldRef = getControllerOf(old);
    const curRef = getControllerOf(cur);
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const oldSet = this.resolveControllerRef(old.metadata?.namespace ?? '', old);
      if (oldSet) this.enqueue(oldSet);
    }
    const set = this.resolveControllerRef(cur.metadata?.namespace ?? '', cur);
    if (set) {
      this.enqueue(set);
      // A pod that just became ready becomes available minReadySeconds later.
      const minReady = set.spec?.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.worker.enqueueAfter(keyFunc(set), minReady * 1000 + 1000);
      return;
    }
    if ((labelsChanged || oldRef?.uid !== curRef?.uid) && !curRef) {
      for (const s of this.setsForPod(cur)) this.enqueue(s);
    }
  }

  private onPodDelete(obj: KPod | DeletedFinalStateUnknown<KPod>): void {
    const pod = objectFromDeleted(obj);
    if (!pod) {
      this.log.error({}, "couldn't get object from tombstone");
      return;
    }
    const set = this.resolveControllerRef(pod.metadata?.namespace ?? '', pod);
    if (set) this.enqueue(set);
  }

  private onRevision(rev: Kube<ControllerRevision>): void {
    const set = this.resolveControllerRef(rev.metadata?.namespace ?? '', rev);
    if (set) this.enqueue(set);
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }

  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async sync(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    try {
      const { namespace, name } = splitKey(key);
      const set = this.setLister.namespace(namespace).get(name);
      if (!set) {
        this.log.v(4).info({ key }, 'StatefulSet has been deleted');
        return;
      }
      let selector;
      try {
        selector = selectorFromLabelSelector(set.spec?.selector);
      } catch (err) {
        this.log.error(err, { key }, 'error converting StatefulSet selector');
        return; // invalid selectors are not retried
      }
      const canAdopt = recheckDeletionTimestamp(set, () => this.ctx.client.resource<Set>(GVR.statefulSets).namespace(namespace).get(name));
      await this.adoptOrphanRevisions(set, canAdopt);
      const pods = await this.getPodsForStatefulSet(set, selector, canAdopt);
      const status = await this.control.updateStatefulSet(set, pods, selector);
      const minReady = set.spec?.minReadySeconds ?? 0;
      if (minReady > 0 && status.readyReplicas !== status.availableReplicas) this.worker.enqueueAfter(key, minReady * 1000);
    } finally {
      this.log.v(4).info({ key, duration: this.ctx.clock.since(start) }, 'Finished syncing statefulset');
    }
  }

  private async adoptOrphanRevisions(set: Set, canAdopt: () => Promise<void>): Promise<void> {
    const revisions = this.history.listControllerRevisions(set, selectorFromLabelSelector(set.spec?.selector));
    const orphans = revisions.filter((r) => !getControllerOf(r));
    if (orphans.length === 0 || set.metadata?.deletionTimestamp) return;
    await canAdopt();
    for (const r of orphans) await this.history.adoptControllerRevision(set, STATEFUL_SET_KIND, r);
  }

  private async getPodsForStatefulSet(set: Set, selector: ReturnType<typeof selectorFromLabelSelector>, canAdopt: () => Promise<void>): Promise<KPod[]> {
    const all = this.podLister.namespace(set.metadata?.namespace ?? '').list();
    const manager = newControllerRefManager<KPod>({
      controller: set,
      controllerKind: STATEFUL_SET_KIND,
      selector,
      canAdopt,
      patch: patchWith(this.ctx.client.resource<KPod>(GVR.pods)),
      logger: this.log,
    });
    return manager.claim(all, (p) => isMemberOf(set, p));
  }
}

export function newStatefulSetController(ctx: ControllerContext): StatefulSetController {
  return new StatefulSetCtl(ctx);
}

/** kube-controller-manager runs 5 workers (--concurrent-statefulset-syncs). */
export const descriptor: ControllerDescriptor = {
  name: STATEFULSET_CONTROLLER_NAME,
  aliases: ['statefulset'],
  requiredResources: [GVR.statefulSets, GVR.pods, GVR.controllerRevisions, GVR.persistentVolumeClaims],
  defaultWorkers: 5,
  create: (ctx) => newStatefulSetController(ctx),
};
