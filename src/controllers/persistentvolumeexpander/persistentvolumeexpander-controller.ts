/**
 * The volume expand controller (pkg/controller/volume/expand, events from
 * "volume_expand"). Current Kubernetes keeps it only to hand expansions to
 * external resizers: with the in-tree volume plugins gone, every volume is
 * expanded outside kube-controller-manager.
 *
 * For a Bound claim whose storage request exceeds `status.capacity` (the
 * registry and the PersistentVolumeClaimResize admission plugin already
 * checked that its class allows expansion), on the volume bound to it:
 * - a CSI-migrated in-tree volume (awsElasticBlockStore, gcePersistentDisk,
 *   azureDisk, azureFile, cinder, vsphereVolume, portworxVolume): event
 *   ExternalExpanding "CSI migration enabled for <plugin>; waiting for
 *   external resizer to expand the pvc" and the claim annotation
 *   `volume.kubernetes.io/storage-resizer: <CSI driver>`;
 * - any other volume (CSI, hostPath, local, ...): no in-tree plugin expands
 *   it; event ExternalExpanding "waiting for an external controller to
 *   expand this PVC", and the claim is left to the external resizer (a CSI
 *   external-resizer matches `spec.csi.driver`; kcm's local-path provisioner
 *   matches the volumes it provisioned).
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { compare } from '../../api/quantity.js';
import { namespacedKey, splitKey } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { objectFromDeleted } from '../../controller/keys.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { CSI_MIGRATED } from '../../api/volume.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const EXPAND_CONTROLLER_NAME = 'persistentvolume-expander-controller';
/** Source component of its events (upstream's recorder name). */
export const EXPAND_EVENT_COMPONENT = 'volume_expand';
export const ANN_STORAGE_RESIZER = 'volume.kubernetes.io/storage-resizer';
/** Set on volumes by in-tree node expansion; the controller removes it once the claim caught up. */
export const ANN_PRE_RESIZE_CAPACITY = 'volume.alpha.kubernetes.io/pre-resize-capacity';

type PvObj = Kube<PersistentVolume>;
type PvcObj = Kube<PersistentVolumeClaim>;

/** In-tree volume sources handed to CSI drivers (csimigration), by PV spec field. */
const MIGRATED_SOURCES: ReadonlyArray<readonly [keyof NonNullable<PersistentVolume['spec']>, string]> = [
  ['awsElasticBlockStore', 'kubernetes.io/aws-ebs'],
  ['gcePersistentDisk', 'kubernetes.io/gce-pd'],
  ['azureDisk', 'kubernetes.io/azure-disk'],
  ['azureFile', 'kubernetes.io/azure-file'],
  ['cinder', 'kubernetes.io/cinder'],
  ['vsphereVolume', 'kubernetes.io/vsphere-volume'],
  ['portworxVolume', 'kubernetes.io/portworx-volume'],
];

/** The in-tree plugin of a CSI-migrated volume, or undefined. */
export function migratedPluginOf(pv: PersistentVolume): string | undefined {
  for (const [field, plugin] of MIGRATED_SOURCES) if (pv.spec?.[field] !== undefined) return plugin;
  return undefined;
}

export interface ExpandController extends Controller {
  sync(key: string): Promise<void>;
  hasSynced(): boolean;
}

function storage(list: Record<string, string> | undefined): string {
  return list?.['storage'] ?? '0';
}

class Expander implements ExpandController {
  readonly name = EXPAND_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly claims: Lister<PvcObj>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    this.recorder = ctx.recorder(EXPAND_EVENT_COMPONENT);
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } });
    this.worker = newQueueWorker({ name: 'volume_expand', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    const inf = ctx.informers.persistentVolumeClaims();
    this.claims = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({
      onAdd: (c) => this.enqueue(c),
      onUpdate: (old, c) => {
        // A grown request (expand it) or a grown status capacity (a node expansion finished).
        if (compare(storage(c.spec?.resources?.requests), storage(old.spec?.resources?.requests)) > 0 || compare(storage(c.status?.capacity), storage(old.status?.capacity)) > 0) {
          this.enqueue(c);
        }
      },
      onDelete: (obj) => {
        const c = objectFromDeleted(obj);
        if (c) this.enqueue(c);
      },
    });
    this.synced = () => reg.hasSynced();
  }

  private enqueue(c: PvcObj): void {
    if (c.status?.phase === 'Bound') this.worker.enqueue(namespacedKey(c));
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

  async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.claims.namespace(namespace).get(name);
    if (!cached) return;
    // Listed objects carry no kind; the events' involvedObject needs it.
    const pvc: PvcObj = cached.kind ? cached : { ...cached, kind: 'PersistentVolumeClaim', apiVersion: 'v1' };
    const volumeName = pvc.spec?.volumeName ?? '';
    let pv: PvObj;
    try {
      pv = await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).get(volumeName);
    } catch (err) {
      throw new Error(`failed to get PV "${volumeName}": ${(err as Error).message}`, { cause: err });
    }
    const ref = pv.spec?.claimRef;
    if (!ref || ref.namespace !== pvc.metadata?.namespace || ref.uid !== pvc.metadata?.uid) {
      throw new Error(`persistent Volume is not bound to PVC being updated : ${key}`);
    }
    const request = storage(pvc.spec?.resources?.requests);
    const capacity = storage(pvc.status?.capacity);
    const preResize = pv.metadata?.annotations?.[ANN_PRE_RESIZE_CAPACITY] !== undefined;
    if (compare(request, capacity) <= 0 && !preResize) return;

    const plugin = migratedPluginOf(pv);
    if (plugin) {
      this.recorder.event(pvc, 'Normal', 'ExternalExpanding', `CSI migration enabled for ${plugin}; waiting for external resizer to expand the pvc`);
      const driver = CSI_MIGRATED[plugin];
      if (!driver) {
        const msg = `error getting CSI driver name for pvc ${key}, with error could not find CSI driver name for plugin ${plugin}`;
        this.recorder.event(pvc, 'Warning', 'ExternalExpanding', msg);
        throw new Error(msg);
      }
      try {
        await this.setClaimResizer(pvc, driver);
      } catch (err) {
        const msg = `error setting resizer annotation to pvc ${key}, with error ${(err as Error).message}`;
        this.recorder.event(pvc, 'Warning', 'ExternalExpanding', msg);
        throw new Error(msg, { cause: err });
      }
      return;
    }
    // kcm has no in-tree expandable plugin: an external controller expands every other volume.
    this.recorder.event(pvc, 'Normal', 'ExternalExpanding', 'waiting for an external controller to expand this PVC');
    this.log.info({ pvcKey: key, pvcUID: pvc.metadata?.uid }, 'Waiting for an external controller to expand the PVC');
  }

  /** util.SetClaimResizer: the annotation, written only when it differs. */
  private async setClaimResizer(pvc: PvcObj, resizer: string): Promise<void> {
    if (pvc.metadata?.annotations?.[ANN_STORAGE_RESIZER] === resizer) return;
    try {
      await this.ctx.client
        .resource<PvcObj>(GVR.persistentVolumeClaims)
        .namespace(pvc.metadata?.namespace ?? '')
        .patch(pvc.metadata?.name ?? '', 'merge', { metadata: { annotations: { [ANN_STORAGE_RESIZER]: resizer } } });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}

export function newExpandController(ctx: ControllerContext): ExpandController {
  return new Expander(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: EXPAND_CONTROLLER_NAME,
  aliases: ['persistentvolume-expander'],
  requiredResources: [GVR.persistentVolumeClaims, GVR.persistentVolumes],
  // Upstream's defaultWorkerCount (not a flag).
  defaultWorkers: 10,
  create: (ctx) => newExpandController(ctx),
};
