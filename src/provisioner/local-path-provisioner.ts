/**
 * kcm's local-path provisioner: an external provisioner as the CSI
 * external-provisioner sidecar (its sig-storage-lib-external-provisioner
 * ProvisionController) runs it, over directories on this machine as
 * rancher's local-path-provisioner (kind's `standard` class, k3s's `local-path`).
 *
 * - Provisioning: a claim without a volume whose
 *   `volume.kubernetes.io/storage-provisioner` (or the beta annotation) names
 *   this provisioner, of a class with the same provisioner, gets a volume
 *   `pvc-<claim uid>`: a `hostPath` directory `<root>/<pv>`, capacity = the
 *   request, the claim's access modes and volume mode, `claimRef` to the
 *   claim, the class's reclaim policy and mount options, node affinity to
 *   the node the scheduler selected (WaitForFirstConsumer claims wait for
 *   `volume.kubernetes.io/selected-node`), `pv.kubernetes.io/provisioned-by`
 *   and the provisioner's finalizer. Events on the claim as upstream:
 *   Provisioning, ProvisioningSucceeded, ProvisioningFailed. The PV binder
 *   then binds the two.
 * - Deleting: a Released volume it provisioned with reclaim policy Delete
 *   loses its directory, then its object; a volume deleted directly (it
 *   carries the finalizer) loses its directory when its policy is Delete.
 * - Resizing: see resizer.ts (the external-resizer's part).
 */
import { hostname } from 'node:os';
import type { Node, PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../api/gvr.js';
import { namespacedKey, splitKey } from '../api/types.js';
import { claimReference } from '../api/volume.js';
import type { Client } from '../client/interfaces.js';
import { isAlreadyExists, isNotFound } from '../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../controller/lifecycle.js';
import type { Kube, SharedInformerFactory } from '../tools/cache/factory.js';
import type { Lister } from '../tools/cache/interfaces.js';
import { newLister } from '../tools/cache/listers.js';
import type { EventRecorder } from '../tools/record/interfaces.js';
import type { Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import {
  ANN_BETA_STORAGE_CLASS,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  LABEL_HOSTNAME,
  LOCAL_PATH_PROVISIONER,
  PROVISIONER_FINALIZER,
} from './constants.js';
import { newResizer, type Resizer } from './resizer.js';
import type { VolumeDirs } from './volume-dirs.js';
import { deepCopy } from '../util/json/deep-copy.js';

type PvObj = Kube<PersistentVolume>;
type PvcObj = Kube<PersistentVolumeClaim>;

/** How often every claim and volume is looked at again (sig-storage-lib's default resync is 15 minutes). */
export const RESYNC_PERIOD_MS = 5 * 60_000;

export interface LocalPathProvisionerOptions {
  client: Client;
  informers: SharedInformerFactory;
  /** Events on claims and volumes; its source should name the provisioner (eventSourceComponent()). */
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** Where volume directories live. */
  dirs: VolumeDirs;
  /** Provisioner name (default local-path.kcm.io). */
  name?: string;
  /**
   * Finish the kubelet's part of a filesystem resize here (default true):
   * kcm's simulated kubelets do not expand volumes, and a directory has no
   * filesystem to grow.
   */
  finishNodeExpansion?: boolean;
}

export interface LocalPathProvisioner {
  readonly name: string;
  run(signal: AbortSignal): Promise<void>;
  hasSynced(): boolean;
  healthy(): boolean;
  /** Provisions for claim `ns/name` if it is ours and waiting. */
  syncClaim(key: string): Promise<void>;
  /** Deletes volume `name` if it is ours and released with policy Delete. */
  syncVolume(name: string): Promise<void>;
  /** Expands claim `ns/name`'s volume if its request grew. */
  syncResize(key: string): Promise<void>;
}

/** The event source of the sidecar, `<provisioner>_<identity>`, as sig-storage-lib's recorder. */
export function eventSourceComponent(name = LOCAL_PATH_PROVISIONER, identity = hostname()): string {
  return `${name}_${identity}`;
}

/** The class a claim asks for: the beta annotation wins over spec.storageClassName. */
export function claimClass(claim: PersistentVolumeClaim): string {
  return claim.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] ?? claim.spec?.storageClassName ?? '';
}

/** The volume name a claim gets (external-provisioner's default prefix `pvc`). */
export function volumeNameForClaim(claim: PersistentVolumeClaim): string {
  return `pvc-${claim.metadata?.uid ?? ''}`;
}

/**
 * A recorder that names the kind of claims and volumes: objects listed (not
 * watched) carry no kind, and an event's involvedObject needs it.
 */
export function withKinds(r: EventRecorder): EventRecorder {
  const fix = <T>(obj: T): T => {
    const o = obj as { kind?: string; apiVersion?: string; spec?: Record<string, unknown> };
    if (o.kind || !o.spec) return obj;
    const kind = 'claimRef' in o.spec || 'persistentVolumeReclaimPolicy' in o.spec ? 'PersistentVolume' : 'PersistentVolumeClaim';
    return { ...o, kind, apiVersion: 'v1' } as T;
  };
  return {
    event: (obj, type, reason, message) => r.event(fix(obj), type, reason, message),
    eventf: (obj, type, reason, format, ...args) => r.eventf(fix(obj), type, reason, format, ...args),
    annotatedEventf: (obj, annotations, type, reason, format, ...args) => r.annotatedEventf(fix(obj), annotations, type, reason, format, ...args),
  };
}

class Provisioner implements LocalPathProvisioner {
  readonly name: string;
  private readonly claimWorker: QueueWorker;
  private readonly volumeWorker: QueueWorker;
  private readonly claims: Lister<PvcObj>;
  private readonly volumes: Lister<PvObj>;
  private readonly classes: Lister<Kube<StorageClass>>;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly synced: Array<() => boolean>;
  private readonly lifecycle: ControllerLifecycle;
  private readonly resizer: Resizer;
  private readonly log: Logger;
  private readonly events: EventRecorder;

  constructor(private readonly o: LocalPathProvisionerOptions) {
    this.name = o.name ?? LOCAL_PATH_PROVISIONER;
    this.log = o.logger;
    this.events = withKinds(o.recorder);
    this.lifecycle = newControllerLifecycle({
      name: 'local-path-provisioner',
      clock: o.clock,
      log: this.log,
      starting: 'Starting provisioner controller',
      stopping: 'Shutting down provisioner controller',
      fields: { provisioner: this.name },
    });
    this.claimWorker = newQueueWorker({ name: 'claims', clock: o.clock, logger: this.log, sync: (key) => this.syncClaim(key) });
    this.volumeWorker = newQueueWorker({ name: 'volumes', clock: o.clock, logger: this.log, sync: (key) => this.syncVolume(key) });
    const pvcInf = o.informers.persistentVolumeClaims();
    const pvInf = o.informers.persistentVolumes();
    const scInf = o.informers.storageClasses();
    const nodeInf = o.informers.nodes();
    this.claims = newLister(pvcInf.getIndexer());
    this.volumes = newLister(pvInf.getIndexer());
    this.classes = newLister(scInf.getIndexer());
    this.nodes = newLister(nodeInf.getIndexer());
    this.resizer = newResizer({
      name: this.name,
      client: o.client,
      clock: o.clock,
      logger: this.log,
      recorder: this.events,
      claims: this.claims,
      volumes: this.volumes,
      finishNodeExpansion: o.finishNodeExpansion ?? true,
    });
    const pvcReg = pvcInf.addEventHandler({
      onAdd: (c) => {
        this.claimWorker.enqueue(namespacedKey(c));
        this.resizer.enqueue(c);
      },
      onUpdate: (_o, c) => {
        this.claimWorker.enqueue(namespacedKey(c));
        this.resizer.enqueue(c);
      },
    });
    const pvReg = pvInf.addEventHandler({
      onAdd: (pv) => this.volumeWorker.enqueue(pv.metadata?.name ?? ''),
      onUpdate: (_o, pv) => this.volumeWorker.enqueue(pv.metadata?.name ?? ''),
    });
    const scReg = scInf.addEventHandler({});
    const nodeReg = nodeInf.addEventHandler({});
    this.synced = [() => pvcReg.hasSynced(), () => pvReg.hasSynced(), () => scReg.hasSynced(), () => nodeReg.hasSynced()];
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }

  healthy(): boolean {
    return this.lifecycle.healthy() && this.claimWorker.healthy() && this.volumeWorker.healthy() && this.resizer.healthy();
  }

  run(signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () =>
      Promise.all([this.claimWorker.run(4, signal), this.volumeWorker.run(2, signal), this.resizer.run(2, signal), this.resyncLoop(signal)]),
    );
  }

  /** The informers' periodic resync of sig-storage-lib's controller: keys dropped after too many failures come back. */
  private async resyncLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.o.clock.sleep(RESYNC_PERIOD_MS, signal);
      } catch {
        return;
      }
      for (const c of this.claims.list()) {
        this.claimWorker.enqueue(namespacedKey(c));
        this.resizer.enqueue(c);
      }
      for (const pv of this.volumes.list()) this.volumeWorker.enqueue(pv.metadata?.name ?? '');
    }
  }

  syncResize(key: string): Promise<void> {
    return this.resizer.sync(key);
  }

  // ---- provisioning (shouldProvision + provisionClaimOperation) ----

  async syncClaim(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const claim = this.claims.namespace(namespace).get(name);
    if (!claim || !this.shouldProvision(claim)) return;
    const pvName = volumeNameForClaim(claim);
    if (this.volumes.get(pvName)) {
      this.log.v(4).info({ PVC: key, volumeName: pvName }, 'persistentvolume already exists, skipping');
      return;
    }
    const className = claimClass(claim);
    const sc = this.classes.get(className);
    if (!sc) {
      this.recorder().event(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
      throw new Error(`storageclass.storage.k8s.io "${className}" not found`);
    }
    let node: Kube<Node> | undefined;
    const nodeName = claim.metadata?.annotations?.[ANN_SELECTED_NODE];
    if (nodeName) {
      node = this.nodes.get(nodeName) ?? (await this.liveNode(nodeName));
      if (!node) {
        const msg = `failed to get target node: nodes "${nodeName}" not found`;
        this.recorder().event(claim, 'Warning', 'ProvisioningFailed', msg);
        throw new Error(msg);
      }
    }
    this.recorder().event(claim, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${key}"`);
    let pv: PvObj;
    try {
      pv = await this.provision(claim, sc, pvName, node);
    } catch (err) {
      this.recorder().event(claim, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${className}": ${(err as Error).message}`);
      throw err;
    }
    try {
      await this.o.client.resource<PvObj>(GVR.persistentVolumes).create(pv);
    } catch (err) {
      if (!isAlreadyExists(err)) {
        this.recorder().event(claim, 'Warning', 'ProvisioningFailed', `Error creating provisioned PV object for claim ${key}: ${(err as Error).message}. Deleting the volume.`);
        await this.o.dirs.remove(pvName).catch((e: unknown) => this.log.error(e, { volumeName: pvName }, 'cannot remove the volume directory'));
        throw err;
      }
      this.log.v(3).info({ PVC: key, volumeName: pvName }, 'volume already exists');
      return;
    }
    this.log.info({ PVC: key, volumeName: pvName, path: pv.spec?.hostPath?.path, node: nodeName }, 'volume provisioned');
    this.recorder().event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`);
  }

  private recorder(): EventRecorder {
    return this.events;
  }

  private shouldProvision(claim: PvcObj): boolean {
    if (claim.spec?.volumeName) return false;
    if (claim.metadata?.deletionTimestamp) return false;
    const ann = claim.metadata?.annotations ?? {};
    const wanted = ann[ANN_STORAGE_PROVISIONER] ?? ann[ANN_BETA_STORAGE_PROVISIONER];
    if (wanted !== this.name) return false;
    const sc = this.classes.get(claimClass(claim));
    // A missing class: let syncClaim report it.
    if (!sc) return true;
    if (sc.provisioner !== this.name) return false;
    if (sc.volumeBindingMode === 'WaitForFirstConsumer') return ann[ANN_SELECTED_NODE] !== undefined;
    return true;
  }

  /** Makes the directory and returns the volume object to create (the Provisioner's Provision). */
  private async provision(claim: PvcObj, sc: Kube<StorageClass>, pvName: string, node: Kube<Node> | undefined): Promise<PvObj> {
    const volumeMode = claim.spec?.volumeMode ?? 'Filesystem';
    if (volumeMode === 'Block') throw new Error(`volumeMode Block is not supported by ${this.name}`);
    const request = claim.spec?.resources?.requests?.['storage'];
    if (request === undefined) throw new Error('claim has no storage request');
    if (claim.spec?.dataSource || claim.spec?.dataSourceRef) throw new Error(`data sources are not supported by ${this.name}`);
    const path = await this.o.dirs.create(pvName);
    const hostnameValue = node ? (node.metadata?.labels?.[LABEL_HOSTNAME] ?? node.metadata?.name ?? '') : '';
    const pv: PvObj = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: pvName,
        annotations: { [ANN_DYNAMICALLY_PROVISIONED]: this.name },
        finalizers: [PROVISIONER_FINALIZER],
      },
      spec: {
        capacity: { storage: request },
        accessModes: [...(claim.spec?.accessModes ?? [])],
        volumeMode,
        persistentVolumeReclaimPolicy: sc.reclaimPolicy ?? 'Delete',
        storageClassName: sc.metadata?.name ?? '',
        claimRef: claimReference(claim),
        hostPath: { path, type: 'DirectoryOrCreate' },
        ...(sc.mountOptions?.length ? { mountOptions: [...sc.mountOptions] } : {}),
        ...(hostnameValue
          ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: LABEL_HOSTNAME, operator: 'In', values: [hostnameValue] }] }] } } }
          : {}),
      },
    };
    return pv;
  }

  private async liveNode(name: string): Promise<Kube<Node> | undefined> {
    try {
      return await this.o.client.resource<Kube<Node>>(GVR.nodes).get(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  // ---- deleting (shouldDelete + deleteVolumeOperation) ----

  async syncVolume(name: string): Promise<void> {
    const cached = this.volumes.get(name);
    if (!cached || cached.metadata?.annotations?.[ANN_DYNAMICALLY_PROVISIONED] !== this.name) return;
    const ours = (cached.metadata?.finalizers ?? []).includes(PROVISIONER_FINALIZER);
    if (cached.metadata?.deletionTimestamp) {
      // Deleted directly (HonorPVReclaimPolicy): honour the policy, then let the object go.
      if (!ours) return;
      if (cached.spec?.persistentVolumeReclaimPolicy === 'Delete') await this.deleteData(cached);
      await this.removeFinalizer(name);
      return;
    }
    if (cached.status?.phase !== 'Released' || cached.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    // Trust the binder's Released, but on the server's current object.
    let fresh: PvObj;
    try {
      fresh = await this.o.client.resource<PvObj>(GVR.persistentVolumes).get(name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (fresh.status?.phase !== 'Released' || fresh.spec?.persistentVolumeReclaimPolicy !== 'Delete' || fresh.metadata?.deletionTimestamp) return;
    await this.deleteData(fresh);
    try {
      await this.o.client.resource<PvObj>(GVR.persistentVolumes).delete(name, { preconditions: { uid: fresh.metadata?.uid ?? '' } });
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.info({ volumeName: name, err: (err as Error).message }, 'Failed to delete volume');
      throw err;
    }
    await this.removeFinalizer(name);
    this.log.info({ volumeName: name }, 'PersistentVolume deleted succeeded');
  }

  private async deleteData(pv: PvObj): Promise<void> {
    const name = pv.metadata?.name ?? '';
    try {
      await this.o.dirs.remove(name);
    } catch (err) {
      this.log.error(err, { volumeName: name }, 'Deletion of volume failed');
      this.recorder().event(pv, 'Warning', 'VolumeFailedDelete', (err as Error).message);
      throw err;
    }
    this.log.info({ volumeName: name }, 'Volume deleted');
  }

  private async removeFinalizer(name: string): Promise<void> {
    const pvs = this.o.client.resource<PvObj>(GVR.persistentVolumes);
    let pv: PvObj;
    try {
      pv = await pvs.get(name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const finalizers = pv.metadata?.finalizers ?? [];
    if (!finalizers.includes(PROVISIONER_FINALIZER)) return;
    const next = deepCopy(pv);
    next.metadata = { ...next.metadata, finalizers: finalizers.filter((f) => f !== PROVISIONER_FINALIZER) };
    try {
      await pvs.update(next);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

export function newLocalPathProvisioner(opts: LocalPathProvisionerOptions): LocalPathProvisioner {
  return new Provisioner(opts);
}
