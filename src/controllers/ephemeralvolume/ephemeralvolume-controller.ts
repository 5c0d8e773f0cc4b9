/**
 * The ephemeral volume controller (pkg/controller/volume/ephemeral): for each
 * pod volume with `ephemeral.volumeClaimTemplate`, creates the PVC
 * `<pod>-<volume>` from the template (labels, annotations, spec), owned by
 * the pod (controller, blockOwnerDeletion). A PVC of that name not owned by
 * the pod is an error: event FailedBinding on the pod, retried. Pods being
 * deleted are skipped; a deleted PVC re-syncs the pods that use it.
 */
import type { PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { splitKey } from '../../api/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const EPHEMERAL_VOLUME_CONTROLLER_NAME = 'ephemeral-volume-controller';

type PodObj = Kube<Pod>;
type PvcObj = Kube<PersistentVolumeClaim>;

export interface EphemeralVolumeController extends Controller {
  syncPod(key: string): Promise<void>;
  hasSynced(): boolean;
}

/** The claim name of an ephemeral volume (ephemeral.VolumeClaimName). */
export function volumeClaimName(pod: Pod, volume: Volume): string {
  return `${pod.metadata?.name}-${volume.name}`;
}

const hasEphemeral = (pod: Pod) => (pod.spec?.volumes ?? []).some((v) => v.ephemeral);

class EphemeralVolumes implements EphemeralVolumeController {
  readonly name = EPHEMERAL_VOLUME_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly pods: Lister<PodObj>;
  private readonly pvcs: Lister<PvcObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting ephemeral volume controller', stopping: 'Shutting down ephemeral volume controller' };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder('ephemeral_volume');
    this.worker = newQueueWorker({ name: 'ephemeral_volume', clock: ctx.clock, logger: this.log, sync: (k) => this.syncPod(k) });
    const podInf = ctx.informers.pods();
    const pvcInf = ctx.informers.persistentVolumeClaims();
    this.pods = newLister(podInf.getIndexer());
    this.pvcs = newLister(pvcInf.getIndexer());
    const onPod = (p: PodObj) => {
      if (!p.metadata?.deletionTimestamp && hasEphemeral(p)) this.worker.enqueue(keyFunc(p));
    };
    const regs = [
      podInf.addEventHandler({ onAdd: onPod, onUpdate: (_o, n) => onPod(n) }),
      pvcInf.addEventHandler({
        onDelete: (obj) => {
          const pvc = objectFromDeleted(obj);
          if (!pvc) return this.log.error({}, 'could not get PVC from tombstone');
          // Re-create it if a pod still needs it.
          for (const p of this.pods.namespace(pvc.metadata?.namespace ?? '').list()) {
            if ((p.spec?.volumes ?? []).some((v) => v.ephemeral && volumeClaimName(p, v) === pvc.metadata?.name)) onPod(p);
          }
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

  async syncPod(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.pods.namespace(namespace).get(name);
    if (!pod || pod.metadata?.deletionTimestamp) return;
    for (const vol of pod.spec?.volumes ?? []) {
      try {
        await this.handleVolume(pod, vol);
      } catch (err) {
        const msg = (err as Error).message;
        this.recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'FailedBinding', `ephemeral volume ${vol.name}: ${msg}`);
        throw new Error(`pod ${key}, ephemeral volume ${vol.name}: ${msg}`, { cause: err });
      }
    }
  }

  private async handleVolume(pod: PodObj, vol: Volume): Promise<void> {
    const template = vol.ephemeral?.volumeClaimTemplate;
    if (!vol.ephemeral) return;
    const ns = pod.metadata?.namespace ?? '';
    const claimName = volumeClaimName(pod, vol);
    const existing = this.pvcs.namespace(ns).get(claimName);
    if (existing) {
      const owned = (existing.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata?.uid);
      if (!owned) throw new Error(`PVC ${ns}/${claimName} was not created for pod ${ns}/${pod.metadata?.name} (pod is not owner)`);
      return;
    }
    const pvc: PvcObj = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
        ...(template?.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ...(template?.metadata?.labels ? { labels: template.metadata.labels } : {}),
      },
      spec: deepCopy(template?.spec ?? {}),
    };
    try {
      await this.ctx.client.resource<PvcObj>(GVR.persistentVolumeClaims).namespace(ns).create(pvc);
      this.log.v(4).info({ pod: keyFunc(pod), PVC: claimName }, 'created PVC for ephemeral volume');
    } catch (err) {
      // AlreadyExists included: the cache lags, and the retry checks ownership.
      throw new Error(`create PVC ${claimName}: ${(err as Error).message}`, { cause: err });
    }
  }
}

export function newEphemeralVolumeController(ctx: ControllerContext): EphemeralVolumeController {
  return new EphemeralVolumes(ctx);
}

/** --concurrent-ephemeralvolume-syncs defaults to 5. */
export const descriptor: ControllerDescriptor = {
  name: EPHEMERAL_VOLUME_CONTROLLER_NAME,
  aliases: ['ephemeral-volume'],
  requiredResources: [GVR.pods, GVR.persistentVolumeClaims],
  defaultWorkers: 5,
  create: (ctx) => newEphemeralVolumeController(ctx),
};
