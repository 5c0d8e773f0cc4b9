/**
 * The PVC protection controller (pkg/controller/volume/pvcprotection): every
 * PersistentVolumeClaim carries the `kubernetes.io/pvc-protection` finalizer
 * while it lives; once it is being deleted, the finalizer is removed only when
 * no scheduled, non-terminated pod uses it (through
 * `persistentVolumeClaim.claimName`, or a generic ephemeral volume
 * `<pod>-<volume>` owned by the pod). The pod cache is checked first, then a
 * live list confirms, so a stale cache never releases a claim in use.
 *
 * Pods trigger a check of their claims when deleted, terminated or not yet
 * scheduled (the cases that can release a claim).
 */
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../api/meta.js';
import { splitKey } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { isPodTerminal } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const PVC_PROTECTION_CONTROLLER_NAME = 'persistentvolumeclaim-protection-controller';
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

type PvcObj = Kube<PersistentVolumeClaim>;

export interface PVCProtectionController extends Controller {
  /** Adds or removes the finalizer of claim `ns/name` (the queue's sync). */
  processPVC(key: string): Promise<void>;
  hasSynced(): boolean;
}

/** Claim names a pod refers to: direct claims and its generic ephemeral volumes. */
export function podClaimNames(pod: Pod): string[] {
  const out: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) out.push(v.persistentVolumeClaim.claimName);
    else if (v.ephemeral) out.push(`${pod.metadata?.name}-${v.name}`);
  }
  return out;
}

/** Whether `pod` keeps `pvc` in use: scheduled, not terminal, and referring to it. */
export function podUsesPVC(pod: Pod, pvc: PersistentVolumeClaim): boolean {
  if (!pod.spec?.nodeName || isPodTerminal(pod)) return false;
  const name = pvc.metadata?.name;
  for (const v of pod.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName === name) return true;
    if (v.ephemeral && `${pod.metadata?.name}-${v.name}` === name) {
      // An ephemeral claim counts only when the pod owns it.
      if ((pvc.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata?.uid)) return true;
    }
  }
  return false;
}

class PVCProtection implements PVCProtectionController {
  readonly name = PVC_PROTECTION_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly pvcs: Lister<PvcObj>;
  private readonly pods: Lister<Kube<Pod>>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({ name: 'pvcprotection', clock: ctx.clock, logger: this.log, sync: (key) => this.processPVC(key) });
    const pvcInf = ctx.informers.persistentVolumeClaims();
    const podInf = ctx.informers.pods();
    this.pvcs = newLister(pvcInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    const onPvc = (pvc: PvcObj) => {
      if (needToAddFinalizer(pvc) || isDeletionCandidate(pvc)) this.worker.enqueue(keyFunc(pvc));
    };
    const onPod = (pod: Pod, deleted: boolean) => {
      // Only these changes can release a claim.
      if (!deleted && !isPodTerminal(pod) && pod.spec?.nodeName) return;
      for (const claim of podClaimNames(pod)) this.worker.enqueue(`${pod.metadata?.namespace}/${claim}`);
    };
    const regs = [
      pvcInf.addEventHandler({ onAdd: onPvc, onUpdate: (_o, n) => onPvc(n) }),
      podInf.addEventHandler({
        onAdd: (p) => onPod(p, false),
        onUpdate: (o, n) => {
          onPod(n, false);
          // A pod that moved out of its claims' reach frees them too.
          if (o.spec?.nodeName !== n.spec?.nodeName) onPod(o, false);
        },
        onDelete: (obj) => {
          const p = objectFromDeleted(obj);
          if (p) onPod(p, true);
          else this.log.error({}, 'could not get pod from tombstone');
        },
      }),
    ];
    this.synced = regs.map((r) => () => r.hasSynced());
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

  async processPVC(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    const { namespace, name } = splitKey(key);
    try {
      const pvc = this.pvcs.namespace(namespace).get(name);
      if (!pvc) return;
      if (isDeletionCandidate(pvc)) {
        if (!(await this.isBeingUsed(pvc))) await this.writeFinalizers(pvc, removeFinalizer(pvc, PVC_PROTECTION_FINALIZER), 'Removed protection finalizer from PVC');
        return;
      }
      if (needToAddFinalizer(pvc)) await this.writeFinalizers(pvc, addFinalizer(pvc, PVC_PROTECTION_FINALIZER), 'Added protection finalizer to PVC');
    } finally {
      this.log.v(4).info({ PVC: key, duration: this.ctx.clock.since(start) }, 'Finished processing PVC');
    }
  }

  private async isBeingUsed(pvc: PvcObj): Promise<boolean> {
    const ns = pvc.metadata?.namespace ?? '';
    if (this.pods.namespace(ns).list().some((p) => podUsesPVC(p, pvc))) return true;
    // The cache may lag: confirm with a live list before releasing the claim.
    const live = await this.ctx.client.resource<Kube<Pod>>(GVR.pods).namespace(ns).list();
    return live.items.some((p) => podUsesPVC(p, pvc));
  }

  private async writeFinalizers(pvc: PvcObj, finalizers: string[], what: string): Promise<void> {
    const next = deepCopy(pvc);
    next.metadata = { ...next.metadata, finalizers };
    try {
      await this.ctx.client.resource<PvcObj>(GVR.persistentVolumeClaims).namespace(pvc.metadata?.namespace ?? '').update(next);
      this.log.v(3).info({ PVC: keyFunc(pvc) }, what);
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.error(err, { PVC: keyFunc(pvc) }, `${what} failed`);
      throw err;
    }
  }
}

function needToAddFinalizer(pvc: PvcObj): boolean {
  return !pvc.metadata?.deletionTimestamp && !hasFinalizer(pvc, PVC_PROTECTION_FINALIZER);
}

function isDeletionCandidate(pvc: PvcObj): boolean {
  return !!pvc.metadata?.deletionTimestamp && hasFinalizer(pvc, PVC_PROTECTION_FINALIZER);
}

export function newPVCProtectionController(ctx: ControllerContext): PVCProtectionController {
  return new PVCProtection(ctx);
}

/** kube-controller-manager runs it with one worker. */
export const descriptor: ControllerDescriptor = {
  name: PVC_PROTECTION_CONTROLLER_NAME,
  aliases: ['pvc-protection'],
  requiredResources: [GVR.persistentVolumeClaims, GVR.pods],
  defaultWorkers: 1,
  create: (ctx) => newPVCProtectionController(ctx),
};
