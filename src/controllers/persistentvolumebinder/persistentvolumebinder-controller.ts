/**
 * The PersistentVolume binder (pkg/controller/volume/persistentvolume,
 * "persistentvolume-controller" in events): binds claims to volumes and
 * runs the reclaim policy of released volumes.
 *
 * - The binding is two pointers: `pv.spec.claimRef` (written first) and
 *   `pvc.spec.volumeName`; a claim is "bound" once it carries
 *   `pv.kubernetes.io/bind-completed`. Links the binder made carry
 *   `pv.kubernetes.io/bound-by-controller`.
 * - Phases: claims Pending -> Bound (Lost when the volume goes away);
 *   volumes Available -> Bound -> Released (Retain), deleted (Delete),
 *   Failed (Recycle: no recycler exists; unknown policy).
 * - Claims with a class and no matching volume: an external provisioner is
 *   asked through `volume.kubernetes.io/storage-provisioner` and the event
 *   ExternalProvisioning; WaitForFirstConsumer claims wait for the scheduler
 *   (`volume.kubernetes.io/selected-node`).
 * - Every `--pvclaimbinder-sync-period` (15 s) all claims and volumes are
 *   synced again. One worker per queue, as upstream: syncClaim is not reentrant.
 *
 * kcm has no in-tree volume plugins: provisioners named `kubernetes.io/...`
 * (other than CSI-migrated ones) fail with ProvisioningFailed, and Delete
 * removes the PV object itself unless an external provisioner owns it.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../../api/gvr.js';
import { compare } from '../../api/quantity.js';
import { namespacedKey, splitKey } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import { isPodTerminal } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { extraNumber } from '../extra-options.js';
import { NewestCache } from './newest-cache.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  CSI_MIGRATED,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_MIGRATED_TO,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  bindVolumeToClaim,
  claimClass,
  claimHasClass,
  defaultStorageClass,
  findBestMatchForClaim,
  hasAnnotation,
  isVolumeBoundToClaim,
  podClaimNames,
  volumeModeMismatch,
  volumeUnsatisfiedReason,
} from './volume-helpers.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const PV_BINDER_CONTROLLER_NAME = 'persistentvolume-binder-controller';
/** Source component of its events (upstream's recorder name). */
export const PV_BINDER_EVENT_COMPONENT = 'persistentvolume-controller';
export const DEFAULT_PVCLAIMBINDER_SYNC_PERIOD_MS = 15_000;

type PvObj = Kube<PersistentVolume>;
type PvcObj = Kube<PersistentVolumeClaim>;

export interface PVBinderOptions {
  /** --pvclaimbinder-sync-period in ms (default 15 s). */
  syncPeriodMs?: number;
}

export interface PVBinderController extends Controller {
  /** Syncs claim `ns/name` (the claim queue's sync). */
  syncClaim(key: string): Promise<void>;
  /** Syncs volume `name` (the volume queue's sync). */
  syncVolume(name: string): Promise<void>;
  hasSynced(): boolean;
}

class PVBinder implements PVBinderController {
  readonly name = PV_BINDER_CONTROLLER_NAME;
  private readonly claimWorker: QueueWorker;
  private readonly volumeWorker: QueueWorker;
  private readonly volumeLister: Lister<PvObj>;
  private readonly claimLister: Lister<PvcObj>;
  private readonly classes: Lister<Kube<StorageClass>>;
  private readonly pods: Lister<Kube<Pod>>;
  private readonly volumes: NewestCache<PvObj>;
  private readonly claims: NewestCache<PvcObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly syncPeriodMs: number;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    opts: PVBinderOptions,
  ) {
    this.log = ctx.logger(this.name);
    this.lifecycle = newControllerLifecycle({
      name: this.name,
      clock: ctx.clock,
      log: this.log,
      starting: 'Starting persistent volume controller',
      stopping: 'Shutting down persistent volume controller',
    });
    this.recorder = ctx.recorder(PV_BINDER_EVENT_COMPONENT);
    this.syncPeriodMs = opts.syncPeriodMs ?? DEFAULT_PVCLAIMBINDER_SYNC_PERIOD_MS;
    this.claimWorker = newQueueWorker({ name: 'claims', clock: ctx.clock, logger: this.log, sync: (key) => this.syncClaim(key) });
    this.volumeWorker = newQueueWorker({ name: 'volumes', clock: ctx.clock, logger: this.log, sync: (key) => this.syncVolume(key) });
    const pvInf = ctx.informers.persistentVolumes();
    const pvcInf = ctx.informers.persistentVolumeClaims();
    const scInf = ctx.informers.storageClasses();
    const podInf = ctx.informers.pods();
    this.volumeLister = newLister(pvInf.getIndexer());
    this.claimLister = newLister(pvcInf.getIndexer());
    this.classes = newLister(scInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    this.volumes = new NewestCache((name) => this.volumeLister.get(name));
    this.claims = new NewestCache((key) => {
      const { namespace, name } = splitKey(key);
      return this.claimLister.namespace(namespace).get(name);
    });
    const pvReg = pvInf.addEventHandler({
      onAdd: (pv) => this.volumeWorker.enqueue(pv.metadata?.name ?? ''),
      onUpdate: (_o, pv) => this.volumeWorker.enqueue(pv.metadata?.name ?? ''),
      onDelete: (obj) => {
        const pv = objectFromDeleted(obj);
        if (!pv) return;
        this.volumes.forget(pv.metadata?.name ?? '');
        // The claim bound to it becomes Lost.
        const ref = pv.spec?.claimRef;
        if (ref?.name) this.claimWorker.enqueue(`${ref.namespace ?? ''}/${ref.name}`);
      },
    });
    const pvcReg = pvcInf.addEventHandler({
      onAdd: (c) => this.claimWorker.enqueue(namespacedKey(c)),
      onUpdate: (_o, c) => this.claimWorker.enqueue(namespacedKey(c)),
      onDelete: (obj) => {
        const c = objectFromDeleted(obj);
        if (!c) return;
        this.claims.forget(namespacedKey(c));
        // Its volume is released now.
        if (c.spec?.volumeName) this.volumeWorker.enqueue(c.spec.volumeName);
      },
    });
    const scReg = scInf.addEventHandler({});
    const podReg = podInf.addEventHandler({});
    this.synced = [() => pvReg.hasSynced(), () => pvcReg.hasSynced(), () => scReg.hasSynced(), () => podReg.hasSynced()];
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.claimWorker.healthy() && this.volumeWorker.healthy();
  }

  run(_workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, async () => {
      this.resync();
      const resync = (async () => {
        while (!signal.aborted) {
          try {
            await this.ctx.clock.sleep(this.syncPeriodMs, signal);
          } catch {
            return;
          }
          this.resync();
        }
      })();
      // One worker per queue: two syncClaims could bind one volume twice.
      await Promise.all([this.volumeWorker.run(1, signal), this.claimWorker.run(1, signal), resync]);
    });
  }

  private resync(): void {
    this.log.v(4).info({}, 'resyncing PV controller');
    for (const pv of this.volumeLister.list()) this.volumeWorker.enqueue(pv.metadata?.name ?? '');
    for (const c of this.claimLister.list()) this.claimWorker.enqueue(namespacedKey(c));
  }

  // ---- claims ----

  async syncClaim(key: string): Promise<void> {
    const claim = this.claims.get(key);
    if (!claim) return;
    if (!hasAnnotation(claim, ANN_BIND_COMPLETED)) await this.syncUnboundClaim(claim);
    else await this.syncBoundClaim(claim);
  }

  private async syncUnboundClaim(claim: PvcObj): Promise<void> {
    const wanted = claim.spec?.volumeName ?? '';
    if (wanted === '') {
      const delayBinding = this.isDelayBinding(claim);
      const volume = findBestMatchForClaim(claim, this.allVolumes(), delayBinding);
      if (volume) {
        await this.bind(volume, claim);
        return;
      }
      if (await this.assignDefaultStorageClass(claim)) return;
      if (delayBinding && !hasAnnotation(claim, ANN_SELECTED_NODE)) {
        this.emitWaitForConsumer(claim);
      } else if (claimClass(claim) !== '') {
        await this.provisionClaim(claim);
        return;
      } else {
        this.recorder.event(claim, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
      }
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    // The user asked for a specific volume.
    const volume = this.volumes.get(wanted);
    if (!volume) {
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    if (!volume.spec?.claimRef) {
      const reason = volumeUnsatisfiedReason(volume, claim);
      if (reason) {
        this.recorder.event(claim, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volume.metadata?.name ?? ''}": ${reason}`);
        await this.updateClaimStatus(claim, 'Pending', undefined);
        return;
      }
      await this.bind(volume, claim);
      return;
    }
    if (isVolumeBoundToClaim(volume, claim)) {
      await this.bind(volume, claim);
      return;
    }
    this.recorder.event(claim, 'Warning', 'FailedBinding', `volume "${wanted}" already bound to a different claim.`);
    if (!hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER)) {
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    const ref = volume.spec.claimRef;
    throw new Error(`invalid binding of claim "${namespacedKey(claim)}" to volume "${wanted}": volume already claimed by "${ref.namespace ?? ''}/${ref.name ?? ''}"`);
  }

  private async syncBoundClaim(claim: PvcObj): Promise<void> {
    const volumeName = claim.spec?.volumeName ?? '';
    if (volumeName === '') {
      await this.updateClaimStatusWithEvent(claim, 'Lost', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
      return;
    }
    const volume = this.volumes.get(volumeName);
    if (!volume) {
      await this.updateClaimStatusWithEvent(claim, 'Lost', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
      return;
    }
    const ref = volume.spec?.claimRef;
    if (!ref || ref.uid === claim.metadata?.uid) {
      // Unbound volume (or a cache that has not seen the claimRef yet), or all is well: bind() fixes what is missing.
      await this.bind(volume, claim);
      return;
    }
    await this.updateClaimStatusWithEvent(claim, 'Lost', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
  }

  private allVolumes(): PvObj[] {
    return this.volumeLister.list().map((pv) => this.volumes.get(pv.metadata?.name ?? '') ?? pv);
  }

  /** WaitForFirstConsumer class (IsDelayBindingMode); a missing class is not delayed. */
  private isDelayBinding(claim: PvcObj): boolean {
    const name = claimClass(claim);
    if (name === '') return false;
    const sc = this.classes.get(name);
    if (!sc) return false;
    if (!sc.volumeBindingMode) throw new Error(`VolumeBindingMode not set for StorageClass "${name}"`);
    return sc.volumeBindingMode === 'WaitForFirstConsumer';
  }

  private emitWaitForConsumer(claim: PvcObj): void {
    const ns = claim.metadata?.namespace ?? '';
    const name = claim.metadata?.name ?? '';
    const waiting = this.pods
      .namespace(ns)
      .list()
      .filter((p) => !isPodTerminal(p) && !p.spec?.nodeName && podClaimNames(p).includes(name))
      .map((p) => p.metadata?.name ?? '');
    if (waiting.length === 0) this.recorder.event(claim, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
    else if (waiting.length === 1) this.recorder.event(claim, 'Normal', 'WaitForPodScheduled', `waiting for pod ${waiting[0]!} to be scheduled`);
    else this.recorder.event(claim, 'Normal', 'WaitForPodScheduled', `waiting for pods ${waiting.join(',')} to be scheduled`);
  }

  /** Retroactive default class for claims that name none; true when the claim was updated. */
  private async assignDefaultStorageClass(claim: PvcObj): Promise<boolean> {
    if (claimHasClass(claim)) return false;
    const sc = defaultStorageClass(this.classes.list());
    if (!sc) return false;
    const next = deepCopy(claim);
    next.spec = { ...next.spec, storageClassName: sc.metadata?.name ?? '' };
    try {
      const saved = await this.pvcs(claim).update(next);
      this.claims.store(namespacedKey(saved), saved);
    } catch (err) {
      throw new Error(`can't update PersistentVolumeClaim["${namespacedKey(claim)}"]`, { cause: err });
    }
    this.log.v(4).info({ PVC: namespacedKey(claim), storageClassName: sc.metadata?.name }, 'Assigned StorageClass to PersistentVolumeClaim');
    return true;
  }

  /** Asks an external provisioner for a volume (provisionClaim with no in-tree plugins). */
  private async provisionClaim(claim: PvcObj): Promise<void> {
    const className = claimClass(claim);
    const sc = this.classes.get(className);
    if (!sc) {
      this.recorder.event(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
      return;
    }
    let provisioner = sc.provisioner;
    const migrated = CSI_MIGRATED[provisioner];
    if (migrated) provisioner = migrated;
    else if (provisioner.startsWith('kubernetes.io/')) {
      this.recorder.event(claim, 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${provisioner}`);
      return;
    }
    let current: PvcObj = claim;
    if (claim.metadata?.annotations?.[ANN_STORAGE_PROVISIONER] !== provisioner) {
      const next = deepCopy(claim);
      next.metadata = { ...next.metadata, annotations: { ...next.metadata?.annotations, [ANN_STORAGE_PROVISIONER]: provisioner, [ANN_BETA_STORAGE_PROVISIONER]: provisioner } };
      try {
        current = await this.pvcs(claim).update(next);
        this.claims.store(namespacedKey(current), current);
      } catch (err) {
        this.recorder.event(claim, 'Warning', 'ProvisioningFailed', `Error saving claim: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
    }
    this.recorder.event(
      current,
      'Normal',
      'ExternalProvisioning',
      `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
    );
  }

  // ---- volumes ----

  async syncVolume(name: string): Promise<void> {
    let volume = this.volumes.get(name);
    if (!volume) return;
    const ref = volume.spec?.claimRef;
    if (!ref || !ref.uid) {
      // Unused, or pre-bound to a claim whose sync will finish the binding.
      await this.updateVolumePhase(volume, 'Available', '');
      return;
    }
    const claimKey = `${ref.namespace ?? ''}/${ref.name ?? ''}`;
    let claim = this.claims.get(claimKey);
    if (!claim && volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
      // Do not release a volume because our cache lags: ask the server.
      claim = await this.liveClaim(ref.namespace ?? '', ref.name ?? '');
    }
    if (claim && claim.metadata?.uid !== ref.uid) {
      // Maybe a stale cache: the server decides whether the claim was recreated.
      const live = await this.liveClaim(ref.namespace ?? '', ref.name ?? '');
      claim = live && live.metadata?.uid === ref.uid ? live : undefined;
    }
    if (!claim) {
      if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
        this.log.v(2).info({ volumeName: name, reclaimPolicy: volume.spec?.persistentVolumeReclaimPolicy }, 'Volume is released and reclaim policy will be executed');
        volume = await this.updateVolumePhase(volume, 'Released', '');
      }
      await this.reclaimVolume(volume);
      return;
    }
    const claimVolume = claim.spec?.volumeName ?? '';
    if (claimVolume === '') {
      if (volumeModeMismatch(claim, volume)) {
        this.recorder.event(volume, 'Warning', 'VolumeMismatch', `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata?.name ?? ''}" due to incompatible volumeMode.`);
        this.recorder.event(claim, 'Warning', 'VolumeMismatch', `Cannot bind PersistentVolume "${name}" to requested PersistentVolumeClaim due to incompatible volumeMode.`);
        return;
      }
      // Bound volume, Pending claim: the claim's sync finishes the binding.
      this.claimWorker.enqueue(claimKey);
      return;
    }
    if (claimVolume === name) {
      await this.updateVolumePhase(volume, 'Bound', '');
      return;
    }
    // The claim is bound to another volume.
    if (hasAnnotation(volume, ANN_DYNAMICALLY_PROVISIONED) && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') volume = await this.updateVolumePhase(volume, 'Released', '');
      await this.reclaimVolume(volume);
      return;
    }
    await this.unbindVolume(volume);
  }

  private async liveClaim(namespace: string, name: string): Promise<PvcObj | undefined> {
    try {
      return await this.ctx.client.resource<PvcObj>(GVR.persistentVolumeClaims).namespace(namespace).get(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async reclaimVolume(volume: PvObj): Promise<void> {
    if (volume.metadata?.annotations?.[ANN_MIGRATED_TO]) return; // the CSI driver's provisioner handles it
    const name = volume.metadata?.name ?? '';
    const policy = volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
    switch (policy) {
      case 'Retain':
        this.log.v(4).info({ volumeName: name }, 'ReclaimVolume: policy is Retain, nothing to do');
        return;
      case 'Recycle':
        await this.recycleVolume(volume);
        return;
      case 'Delete':
        await this.deleteVolume(volume);
        return;
      default:
        await this.updateVolumePhaseWithEvent(volume, 'Failed', 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy');
    }
  }

  /** The volume as the server has it, when it still needs reclaiming (isVolumeReleased). */
  private async releasedFromServer(volume: PvObj): Promise<PvObj | undefined> {
    let fresh: PvObj;
    try {
      fresh = await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).get(volume.metadata?.name ?? '');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const ref = fresh.spec?.claimRef;
    if (!ref?.uid) return undefined;
    const claim = this.claims.get(`${ref.namespace ?? ''}/${ref.name ?? ''}`);
    if (claim && claim.metadata?.uid === ref.uid && (!claim.spec?.volumeName || claim.spec.volumeName === fresh.metadata?.name)) return undefined;
    return fresh;
  }

  /** No recycler exists in kcm: an unused volume goes Failed with upstream's message. */
  private async recycleVolume(volume: PvObj): Promise<void> {
    const fresh = await this.releasedFromServer(volume);
    if (!fresh) return;
    const ref = fresh.spec!.claimRef!;
    const claimCached = !!this.claims.get(`${ref.namespace ?? ''}/${ref.name ?? ''}`);
    const users = this.pods
      .namespace(ref.namespace ?? '')
      .list()
      .filter((p) => !isPodTerminal(p) && podClaimNames(p).includes(ref.name ?? ''))
      .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`)
      .sort();
    if (users.length > 0 && !claimCached) {
      this.recorder.event(fresh, 'Normal', 'VolumeFailedRecycle', `Volume is used by pods: ${users.join(',')}`);
      return;
    }
    await this.updateVolumePhaseWithEvent(fresh, 'Failed', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
  }

  /**
   * Deletes a released volume's object. Volumes of an external provisioner
   * (provisioned-by not in-tree, or a CSI source) wait for it instead.
   */
  private async deleteVolume(volume: PvObj): Promise<void> {
    const fresh = await this.releasedFromServer(volume);
    if (!fresh) return;
    const name = fresh.metadata?.name ?? '';
    const by = fresh.metadata?.annotations?.[ANN_DYNAMICALLY_PROVISIONED] ?? '';
    if ((by !== '' && !by.startsWith('kubernetes.io/')) || fresh.spec?.csi) {
      this.log.v(3).info({ volumeName: name }, 'External deleter for volume requested, ignoring');
      return;
    }
    if (fresh.metadata?.deletionTimestamp) return;
    try {
      await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).delete(name, { preconditions: { uid: fresh.metadata?.uid ?? '' } });
      this.log.v(2).info({ volumeName: name }, 'Volume deleted');
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.error(err, { volumeName: name }, 'Failed to delete volume from database');
      throw err;
    }
  }

  /** Rolls back a binding: controller-made links are removed, user pre-bindings keep name but lose the uid. */
  private async unbindVolume(volume: PvObj): Promise<void> {
    const next = deepCopy(volume);
    if (hasAnnotation(volume, ANN_BOUND_BY_CONTROLLER)) {
      const spec = { ...next.spec };
      delete spec.claimRef;
      next.spec = spec;
      const annotations = { ...next.metadata?.annotations };
      delete annotations[ANN_BOUND_BY_CONTROLLER];
      next.metadata = { ...next.metadata, annotations };
      if (Object.keys(annotations).length === 0) delete next.metadata.annotations;
    } else {
      next.spec = { ...next.spec, claimRef: { ...next.spec!.claimRef!, uid: '' } };
    }
    const saved = await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).update(next);
    this.volumes.store(saved.metadata?.name ?? '', saved);
    await this.updateVolumePhase(saved, 'Available', '');
  }

  // ---- binding and status ----

  /** Saves both halves of the binding, volume first, and marks both Bound. */
  private async bind(volume: PvObj, claim: PvcObj): Promise<void> {
    const key = namespacedKey(claim);
    this.log.v(4).info({ PVC: key, volumeName: volume.metadata?.name }, 'Binding volume to claim');
    let pv = volume;
    const { volume: boundPv, dirty } = bindVolumeToClaim(volume, claim);
    if (dirty) {
      pv = await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).update(boundPv as PvObj);
      this.volumes.store(pv.metadata?.name ?? '', pv);
      this.log.v(2).info({ PVC: key, volumeName: pv.metadata?.name }, 'Claim bound to volume');
    }
    pv = await this.updateVolumePhase(pv, 'Bound', '');
    let pvc = claim;
    const next = deepCopy(claim);
    const annotations = { ...next.metadata?.annotations };
    let claimDirty = false;
    if (claim.spec?.volumeName !== pv.metadata?.name) {
      next.spec = { ...next.spec, volumeName: pv.metadata?.name ?? '' };
      if (annotations[ANN_BOUND_BY_CONTROLLER] === undefined) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
      claimDirty = true;
    }
    if (annotations[ANN_BIND_COMPLETED] === undefined) {
      annotations[ANN_BIND_COMPLETED] = 'yes';
      claimDirty = true;
    }
    if (claimDirty) {
      next.metadata = { ...next.metadata, annotations };
      pvc = await this.pvcs(claim).update(next);
      this.claims.store(key, pvc);
      this.log.v(2).info({ PVC: key, volumeName: pv.metadata?.name }, 'Volume bound to claim');
    }
    await this.updateClaimStatus(pvc, 'Bound', pv);
  }

  /** Sets the claim's phase; a volume sets accessModes (and capacity when becoming Bound), none clears them. */
  private async updateClaimStatus(claim: PvcObj, phase: string, volume: PvObj | undefined): Promise<PvcObj> {
    const status = { ...deepCopy(claim.status) };
    let dirty = false;
    if (claim.status?.phase !== phase) {
      status.phase = phase;
      dirty = true;
    }
    if (!volume) {
      if (status.accessModes !== undefined) {
        delete status.accessModes;
        dirty = true;
      }
      if (status.capacity !== undefined) {
        delete status.capacity;
        dirty = true;
      }
    } else {
      const modes = volume.spec?.accessModes;
      if (JSON.stringify(claim.status?.accessModes ?? null) !== JSON.stringify(modes ?? null)) {
        if (modes) status.accessModes = [...modes];
        else delete status.accessModes;
        dirty = true;
      }
      if (claim.status?.phase !== phase) {
        const volumeCap = volume.spec?.capacity?.['storage'];
        if (volumeCap === undefined) throw new Error(`PersistentVolume "${volume.metadata?.name ?? ''}" is without a storage capacity`);
        const claimCap = claim.status?.capacity?.['storage'];
        if (claimCap === undefined || compare(volumeCap, claimCap) !== 0) {
          status.capacity = { ...volume.spec!.capacity };
          dirty = true;
        }
      }
    }
    if (!dirty) return claim;
    const next: PvcObj = { ...deepCopy(claim), status };
    const saved = await this.pvcs(claim).updateStatus(next);
    this.claims.store(namespacedKey(saved), saved);
    this.log.v(2).info({ PVC: namespacedKey(claim), phase }, 'Claim entered phase');
    return saved;
  }

  /** Changes the phase and emits the event only on an actual change. */
  private async updateClaimStatusWithEvent(claim: PvcObj, phase: string, reason: string, message: string): Promise<void> {
    if (claim.status?.phase === phase) return;
    const saved = await this.updateClaimStatus(claim, phase, undefined);
    this.recorder.event(saved, 'Warning', reason, message);
  }

  private async updateVolumePhase(volume: PvObj, phase: string, message: string): Promise<PvObj> {
    if (volume.status?.phase === phase) return volume;
    const status = { ...deepCopy(volume.status), phase };
    if (message) status.message = message;
    else delete status.message;
    const next: PvObj = { ...deepCopy(volume), status };
    const saved = await this.ctx.client.resource<PvObj>(GVR.persistentVolumes).updateStatus(next);
    this.volumes.store(saved.metadata?.name ?? '', saved);
    this.log.v(2).info({ volumeName: volume.metadata?.name, phase }, 'Volume entered phase');
    return saved;
  }

  private async updateVolumePhaseWithEvent(volume: PvObj, phase: string, reason: string, message: string): Promise<void> {
    if (volume.status?.phase === phase) return;
    const saved = await this.updateVolumePhase(volume, phase, message);
    this.recorder.event(saved, 'Warning', reason, message);
  }

  private pvcs(claim: PvcObj) {
    return this.ctx.client.resource<PvcObj>(GVR.persistentVolumeClaims).namespace(claim.metadata?.namespace ?? '');
  }
}

export function newPVBinderController(ctx: ControllerContext, opts: PVBinderOptions = {}): PVBinderController {
  return new PVBinder(ctx, opts);
}

function syncPeriodFrom(ctx: ControllerContext): number | undefined {
  const v = extraNumber(ctx, 'pvclaimbinder-sync-period');
  return v !== undefined && v > 0 ? v : undefined;
}

export const descriptor: ControllerDescriptor = {
  name: PV_BINDER_CONTROLLER_NAME,
  aliases: ['persistentvolume-binder'],
  requiredResources: [GVR.persistentVolumes, GVR.persistentVolumeClaims, GVR.storageClasses],
  defaultWorkers: 1,
  create: (ctx) => {
    const syncPeriodMs = syncPeriodFrom(ctx);
    return newPVBinderController(ctx, syncPeriodMs !== undefined ? { syncPeriodMs } : {});
  },
};
