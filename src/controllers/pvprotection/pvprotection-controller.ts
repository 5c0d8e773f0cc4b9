/**
 * The PV protection controller (pkg/controller/volume/pvprotection): every
 * PersistentVolume carries the `kubernetes.io/pv-protection` finalizer while
 * it lives; once it is being deleted, the finalizer is removed only when the
 * volume is no longer Bound (status.phase, kept by the PV binder).
 */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../api/meta.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const PV_PROTECTION_CONTROLLER_NAME = 'persistentvolume-protection-controller';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

type PvObj = Kube<PersistentVolume>;

export interface PVProtectionController extends Controller {
  /** Adds or removes the finalizer of volume `name` (the queue's sync). */
  processPV(name: string): Promise<void>;
  hasSynced(): boolean;
}

function needToAddFinalizer(pv: PvObj): boolean {
  return !pv.metadata?.deletionTimestamp && !hasFinalizer(pv, PV_PROTECTION_FINALIZER);
}

function isDeletionCandidate(pv: PvObj): boolean {
  return !!pv.metadata?.deletionTimestamp && hasFinalizer(pv, PV_PROTECTION_FINALIZER);
}

class PVProtection implements PVProtectionController {
  readonly name = PV_PROTECTION_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly pvs: Lister<PvObj>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({ name: 'pvprotection', clock: ctx.clock, logger: this.log, sync: (key) => this.processPV(key) });
    const inf = ctx.informers.persistentVolumes();
    this.pvs = newLister(inf.getIndexer());
    const onPv = (pv: PvObj) => {
      if (needToAddFinalizer(pv) || isDeletionCandidate(pv)) this.worker.enqueue(pv.metadata?.name ?? '');
    };
    const reg = inf.addEventHandler({ onAdd: onPv, onUpdate: (_o, n) => onPv(n) });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async processPV(name: string): Promise<void> {
    const pv = this.pvs.get(name);
    if (!pv) return;
    if (isDeletionCandidate(pv)) {
      // Bound volumes stay protected until the binder releases them.
      if (pv.status?.phase !== 'Bound') await this.writeFinalizers(pv, removeFinalizer(pv, PV_PROTECTION_FINALIZER), 'Removed protection finalizer from PV');
      return;
    }
    if (needToAddFinalizer(pv)) await this.writeFinalizers(pv, addFinalizer(pv, PV_PROTECTION_FINALIZER), 'Added protection finalizer to PV');
  }

  private async writeFinalizers(pv: PvObj, finalizers: string[], what: string): Promise<void> {
    const next = deepCopy(pv);
    next.metadata = { ...next.metadata, finalizers };
    try {
      await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).update(next);
      this.log.v(3).info({ PV: pv.metadata?.name }, what);
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.error(err, { PV: pv.metadata?.name }, `${what} failed`);
      throw err;
    }
  }
}

export function newPVProtectionController(ctx: ControllerContext): PVProtectionController {
  return new PVProtection(ctx);
}

/** kube-controller-manager runs it with one worker. */
export const descriptor: ControllerDescriptor = {
  name: PV_PROTECTION_CONTROLLER_NAME,
  aliases: ['pv-protection'],
  requiredResources: [GVR.persistentVolumes],
  defaultWorkers: 1,
  create: (ctx) => newPVProtectionController(ctx),
};
