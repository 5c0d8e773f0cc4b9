/**
 * The external resizer of the local-path provisioner's volumes
 * (kubernetes-csi/external-resizer's resize controller, with the
 * RecoverVolumeExpansionFailure bookkeeping current Kubernetes has on).
 *
 * A Bound claim whose storage request exceeds `status.capacity`, on a volume
 * this provisioner made (or one the expand controller handed to it with
 * `volume.kubernetes.io/storage-resizer`):
 *   1. condition Resizing, `allocatedResources` = the request,
 *      `allocatedResourceStatuses[storage]` = ControllerResizeInProgress;
 *      event Resizing "External resizer is resizing volume <pv>";
 *   2. the "controller expansion" (a directory has nothing to grow): the
 *      volume's capacity becomes the request;
 *   3. Filesystem volumes: condition FileSystemResizePending (status
 *      NodeResizePending), event FileSystemResizeRequired; Block volumes are
 *      done here (VolumeResizeSuccessful);
 *   4. the kubelet's step, done here unless told otherwise (kcm's simulated
 *      kubelets do not expand): `status.capacity` = the new size, resize
 *      conditions and status cleared, event FileSystemResizeSuccessful.
 */
import type { PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimCondition } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import { compare } from '../api/quantity.js';
import { namespacedKey, splitKey } from '../api/types.js';
import type { Client } from '../client/interfaces.js';
import { newQueueWorker, type QueueWorker } from '../controller/base-controller.js';
import type { Kube } from '../tools/cache/factory.js';
import type { Lister } from '../tools/cache/interfaces.js';
import type { EventRecorder } from '../tools/record/interfaces.js';
import type { Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import { ANN_DYNAMICALLY_PROVISIONED, ANN_STORAGE_RESIZER, LABEL_HOSTNAME } from './constants.js';
import { deepCopy } from '../util/json/deep-copy.js';

type PvObj = Kube<PersistentVolume>;
type PvcObj = Kube<PersistentVolumeClaim>;

const RESIZE_CONDITIONS = new Set(['Resizing', 'FileSystemResizePending', 'ControllerResizeError', 'NodeResizeError']);

export interface ResizerOptions {
  name: string;
  client: Client;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  claims: Lister<PvcObj>;
  volumes: Lister<PvObj>;
  finishNodeExpansion: boolean;
}

export interface Resizer {
  /** Queues the claim when it may need work. */
  enqueue(claim: PvcObj): void;
  sync(key: string): Promise<void>;
  run(workers: number, signal: AbortSignal): Promise<void>;
  healthy(): boolean;
}

function storage(list: Record<string, string> | undefined): string {
  return list?.['storage'] ?? '0';
}

/** The claim's request exceeds what it has (pvcNeedResize), or a resize it started is unfinished. */
function needsWork(claim: PvcObj): boolean {
  if (claim.status?.phase !== 'Bound' || !claim.spec?.volumeName) return false;
  if (compare(storage(claim.spec.resources?.requests), storage(claim.status.capacity)) > 0) return true;
  return (claim.status.conditions ?? []).some((c) => RESIZE_CONDITIONS.has(c.type));
}

/** MergeResizeConditionsOfPVC: keeps other conditions, replaces the resize ones by `resize` (keeping unchanged ones as they were). */
function mergeResizeConditions(old: readonly PersistentVolumeClaimCondition[], resize: PersistentVolumeClaimCondition[]): PersistentVolumeClaimCondition[] {
  const wanted = new Map(resize.map((c) => [c.type, c]));
  const out: PersistentVolumeClaimCondition[] = [];
  for (const c of old) {
    if (!RESIZE_CONDITIONS.has(c.type)) {
      out.push(c);
      continue;
    }
    const w = wanted.get(c.type);
    if (!w) continue;
    out.push(w.status !== c.status ? w : c);
    wanted.delete(c.type);
  }
  out.push(...wanted.values());
  return out;
}

class ResizeController implements Resizer {
  private readonly worker: QueueWorker;

  constructor(private readonly o: ResizerOptions) {
    this.worker = newQueueWorker({ name: 'resize', clock: o.clock, logger: o.logger, sync: (key) => this.sync(key) });
  }

  enqueue(claim: PvcObj): void {
    if (needsWork(claim)) this.worker.enqueue(namespacedKey(claim));
  }
  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.worker.run(workers, signal);
  }
  healthy(): boolean {
    return this.worker.healthy();
  }

  private now(): string {
    return new Date(this.o.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /** CanSupport: our volume, or one handed to us by name. */
  private canSupport(pv: PvObj, claim: PvcObj): boolean {
    return (
      pv.metadata?.annotations?.[ANN_DYNAMICALLY_PROVISIONED] === this.o.name ||
      claim.metadata?.annotations?.[ANN_STORAGE_RESIZER] === this.o.name ||
      pv.spec?.csi?.driver === this.o.name
    );
  }

  async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    let claim = this.o.claims.namespace(namespace).get(name);
    if (!claim || !needsWork(claim)) return;
    const pv = this.o.volumes.get(claim.spec!.volumeName!);
    if (!pv || !this.canSupport(pv, claim)) return;
    const ref = pv.spec?.claimRef;
    if (!ref || ref.namespace !== claim.metadata?.namespace || ref.uid !== claim.metadata?.uid) return;
    const request = storage(claim.spec?.resources?.requests);
    const pvSize = storage(pv.spec?.capacity);
    const conditions = claim.status?.conditions ?? [];
    const resizing = conditions.some((c) => c.type === 'Resizing');
    const fsPending = conditions.some((c) => c.type === 'FileSystemResizePending');
    if (compare(pvSize, request) < 0 || resizing) {
      claim = await this.resizeController(claim, pv, request);
    } else if (!fsPending && compare(request, storage(claim.status?.capacity)) > 0) {
      // The volume already has the size (a resize finished on the volume before the claim was told).
      claim = await this.markNodeExpansion(claim, pv, pvSize);
    }
    if (this.o.finishNodeExpansion && claim.status?.conditions?.some((c) => c.type === 'FileSystemResizePending')) {
      await this.finishNodeExpansion(claim, pv);
    }
  }

  /** Steps 1-3: the controller side of the expansion. Returns the claim as saved. */
  private async resizeController(claim: PvcObj, pv: PvObj, request: string): Promise<PvcObj> {
    const pvName = pv.metadata?.name ?? '';
    const inProgress: PvcObj = {
      ...deepCopy(claim),
      status: {
        ...deepCopy(claim.status),
        conditions: mergeResizeConditions(claim.status?.conditions ?? [], [{ type: 'Resizing', status: 'True', lastTransitionTime: this.now() }]),
        allocatedResources: { ...claim.status?.allocatedResources, storage: request },
        allocatedResourceStatuses: { ...claim.status?.allocatedResourceStatuses, storage: 'ControllerResizeInProgress' },
      },
    };
    let saved = await this.pvcs(claim).updateStatus(inProgress);
    this.o.recorder.event(saved, 'Normal', 'Resizing', `External resizer is resizing volume ${pvName}`);
    // ControllerExpandVolume of a directory: nothing to grow; the volume records the new size.
    if (compare(storage(pv.spec?.capacity), request) < 0) {
      const next = deepCopy(pv);
      next.spec = { ...next.spec, capacity: { ...next.spec?.capacity, storage: request } };
      try {
        await this.o.client.resource<PvObj>(GVR.persistentVolumes).update(next);
      } catch (err) {
        this.o.recorder.event(saved, 'Warning', 'VolumeResizeFailed', `resize volume "${pvName}" by resizer "${this.o.name}" failed: ${(err as Error).message}`);
        throw err;
      }
    }
    if ((pv.spec?.volumeMode ?? 'Filesystem') === 'Block') {
      saved = await this.markResizeFinished(saved, request);
      this.o.recorder.event(saved, 'Normal', 'VolumeResizeSuccessful', 'Resize volume succeeded');
      return saved;
    }
    return this.markNodeExpansion(saved, pv, request);
  }

  /** markPVCAsFSResizeRequired. */
  private async markNodeExpansion(claim: PvcObj, _pv: PvObj, size: string): Promise<PvcObj> {
    const next: PvcObj = {
      ...deepCopy(claim),
      status: {
        ...deepCopy(claim.status),
        conditions: mergeResizeConditions(claim.status?.conditions ?? [], [
          {
            type: 'FileSystemResizePending',
            status: 'True',
            lastTransitionTime: this.now(),
            message: 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.',
          },
        ]),
        allocatedResources: { ...claim.status?.allocatedResources, storage: size },
        allocatedResourceStatuses: { ...claim.status?.allocatedResourceStatuses, storage: 'NodeResizePending' },
      },
    };
    const saved = await this.pvcs(claim).updateStatus(next);
    this.o.recorder.event(saved, 'Normal', 'FileSystemResizeRequired', 'Require file system resize of volume on node');
    return saved;
  }

  /** MarkFSResizeFinished / markPVCResizeFinished: the claim has its new size. */
  private async markResizeFinished(claim: PvcObj, size: string): Promise<PvcObj> {
    const statuses: Record<string, string> = { ...claim.status?.allocatedResourceStatuses };
    delete statuses['storage'];
    const status: NonNullable<PersistentVolumeClaim['status']> = {
      ...deepCopy(claim.status),
      capacity: { ...claim.status?.capacity, storage: size },
      conditions: mergeResizeConditions(claim.status?.conditions ?? [], []),
      allocatedResources: { ...claim.status?.allocatedResources, storage: size },
    };
    if (Object.keys(statuses).length > 0) status.allocatedResourceStatuses = statuses;
    else delete status.allocatedResourceStatuses;
    if (status.conditions!.length === 0) delete status.conditions;
    return this.pvcs(claim).updateStatus({ ...deepCopy(claim), status });
  }

  /** Step 4, the kubelet's NodeExpandVolume of a directory: nothing to grow. */
  private async finishNodeExpansion(claim: PvcObj, pv: PvObj): Promise<void> {
    const size = storage(claim.status?.allocatedResources) !== '0' ? storage(claim.status?.allocatedResources) : storage(pv.spec?.capacity);
    const saved = await this.markResizeFinished(claim, size);
    const node = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.find((e) => e.key === LABEL_HOSTNAME)?.values?.[0];
    this.o.recorder.event(saved, 'Normal', 'FileSystemResizeSuccessful', `MountVolume.NodeExpandVolume succeeded for volume "${pv.metadata?.name ?? ''}"${node ? ` ${node}` : ''}`);
  }

  private pvcs(claim: PvcObj) {
    return this.o.client.resource<PvcObj>(GVR.persistentVolumeClaims).namespace(claim.metadata?.namespace ?? '');
  }
}

export function newResizer(opts: ResizerOptions): Resizer {
  return new ResizeController(opts);
}
