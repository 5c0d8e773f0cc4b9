/**
 * The attach-detach controller (pkg/controller/volume/attachdetach) for CSI
 * volumes: it attaches the volumes that pods scheduled to a node need by
 * creating VolumeAttachments (the CSI attacher's part of kube-controller-
 * manager), detaches volumes no pod on the node needs any more by deleting
 * them, and reports what is attached in `node.status.volumesAttached`.
 *
 * Level-based, one key per node. A sync of node N reads from the caches:
 * - the desired state: the volumes of N's pods (not terminated) that are
 *   claims bound to PersistentVolumes with `spec.csi` whose CSIDriver requires
 *   attach (`attachRequired` true or no CSIDriver object), on a node carrying
 *   `volumes.kubernetes.io/controller-managed-attach-detach`;
 * - the actual state: the VolumeAttachments whose `spec.nodeName` is N.
 * It then:
 * 1. detaches (removes from volumesAttached, then deletes the VolumeAttachment)
 *    what is attached but not desired, once the node no longer lists the
 *    volume in `status.volumesInUse` or `maxWaitForUnmountDuration` (6 min)
 *    after it stopped being desired;
 * 2. attaches what is desired: creates `csi-<sha256(handle+driver+node)>`
 *    and waits for the external attacher to set `status.attached`; a
 *    `status.attachError` or 2 minutes without an answer is a
 *    FailedAttachVolume event on the pods, success a SuccessfulAttachVolume;
 *    a ReadWriteOnce volume attached elsewhere is a Multi-Attach error;
 * 3. writes `status.volumesAttached` (`kubernetes.io/csi/<driver>^<handle>`,
 *    devicePath "") when it differs from the attached VolumeAttachments.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../../api/gvr.js';
import { isAlreadyExists, isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { POD_NODE_NAME_INDEX, ensurePodNodeNameIndex } from '../nodelifecycle/node-util.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import {
  CONTROLLER_MANAGED_ATTACH_ANNOTATION,
  attachmentName,
  podAttachableVolumes,
  podTerminated,
  uniqueVolumeName,
  type AttachableVolume,
} from './volumes.js';

export const ATTACH_DETACH_CONTROLLER_NAME = 'persistentvolume-attach-detach-controller';
/** The event source upstream uses. */
export const ATTACH_DETACH_EVENT_COMPONENT = 'attachdetach-controller';
/** `--attach-detach-reconcile-max-wait-unmount-duration`'s default (maxWaitForUnmountDuration). */
const VA_NODE_NAME_INDEX = 'spec.nodeName';
export const MAX_WAIT_FOR_UNMOUNT_MS = 6 * 60_000;
/** How long the CSI attacher waits for `status.attached` before failing the attach (csiTimeout). */
export const ATTACH_TIMEOUT_MS = 2 * 60_000;

export interface AttachDetachController extends Controller {
  /** Reconciles one node's attachments and its volumesAttached (the queue's sync). */
  syncNode(nodeName: string): Promise<void>;
  hasSynced(): boolean;
}

interface Desired {
  vol: AttachableVolume;
  pods: Pod[];
}

const podRef = (p: Pod): ObjectReference => ({ apiVersion: 'v1', kind: 'Pod', namespace: p.metadata?.namespace, name: p.metadata?.name, uid: p.metadata?.uid });


/** Volume sources that are never attached to a node. */
const NEVER_ATTACHED = new Set(['name', 'configMap', 'secret', 'projected', 'emptyDir', 'downwardAPI', 'hostPath']);

/** Whether any of the pod's volumes could need an attachment (a claim, an ephemeral or CSI volume, an in-tree disk). */
export function mayNeedAttachment(pod: Pod | undefined): boolean {
  for (const v of pod?.spec?.volumes ?? []) {
    if (Object.keys(v).some((k) => !NEVER_ATTACHED.has(k))) return true;
  }
  return false;
}

class AttachDetach implements AttachDetachController {
  readonly name = ATTACH_DETACH_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly lifecycle: ControllerLifecycle;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly pods: Lister<Kube<Pod>>;
  private readonly pvcs: Lister<Kube<PersistentVolumeClaim>>;
  private readonly pvs: Lister<Kube<PersistentVolume>>;
  private readonly vas: Lister<Kube<VolumeAttachment>>;
  private readonly podsOnNode: (node: string) => Kube<Pod>[];
  private readonly vasOnNode: (node: string) => Kube<VolumeAttachment>[];
  private readonly drivers: Lister<Kube<CSIDriver>>;
  private readonly synced: Array<() => boolean> = [];
  /** VolumeAttachment name -> when its volume stopped being desired (detachRequestedTime). */
  private readonly detachRequested = new Map<string, number>();
  /** VolumeAttachment name -> when this controller started waiting for it to be attached. */
  private readonly attachStarted = new Map<string, number>();
  /** VolumeAttachment names whose successful attach was reported. */
  private readonly announced = new Set<string>();
  /** VolumeAttachment name (or multi-attach key) -> the last failure message reported. */
  private readonly reportedError = new Map<string, string>();
  /** VolumeAttachment name -> unique volume name, for attachments whose PV is gone. */
  private readonly uniqueNames = new Map<string, string>();

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    this.recorder = ctx.recorder(ATTACH_DETACH_EVENT_COMPONENT);
    const fields = { controller: this.name };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting attach detach controller', stopping: 'Shutting down attach detach controller', fields });
    this.worker = newQueueWorker({ name: 'attachdetach', clock: ctx.clock, logger: this.log, sync: (key) => this.syncNode(key) });
    const f = ctx.informers;
    const nodeInf = f.nodes();
    const podInf = f.pods();
    const pvcInf = f.persistentVolumeClaims();
    const pvInf = f.persistentVolumes();
    const vaInf = f.volumeAttachments();
    const drvInf = f.csiDrivers();
    ensurePodNodeNameIndex(podInf);
    if (!(VA_NODE_NAME_INDEX in vaInf.getIndexer().getIndexers())) {
      vaInf.addIndexers({ [VA_NODE_NAME_INDEX]: (va: Kube<VolumeAttachment>) => (va.spec?.nodeName ? [va.spec.nodeName] : []) });
    }
    this.podsOnNode = (n) => podInf.getIndexer().byIndex(POD_NODE_NAME_INDEX, n);
    this.vasOnNode = (n) => vaInf.getIndexer().byIndex(VA_NODE_NAME_INDEX, n);
    this.nodes = newLister(nodeInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    this.pvcs = newLister(pvcInf.getIndexer());
    this.pvs = newLister(pvInf.getIndexer());
    this.vas = newLister(vaInf.getIndexer());
    this.drivers = newLister(drvInf.getIndexer());
    const obj = <T,>(o: unknown): T | undefined => objectFromDeleted(o as Kube<T>) as T | undefined;
    const nodeOf = (o: unknown): void => {
      const n = obj<Node>(o)?.metadata?.name;
      if (n) this.worker.enqueue(n);
    };
    const podNode = (o: unknown): void => {
      const pod = obj<Pod>(o);
      const n = pod?.spec?.nodeName;
      // A pod whose volumes can never be attached (the usual service account token, config maps,
      // empty dirs) changes nothing for its node; pod volumes are immutable.
      if (n && mayNeedAttachment(pod)) this.worker.enqueue(n);
    };
    const vaNode = (o: unknown): void => {
      const n = obj<VolumeAttachment>(o)?.spec?.nodeName;
      if (n) this.worker.enqueue(n);
    };
    const all = (): void => this.enqueueAllNodes();
    const regs = [
      nodeInf.addEventHandler({ onAdd: nodeOf, onUpdate: (_o, n) => nodeOf(n), onDelete: nodeOf }),
      podInf.addEventHandler({ onAdd: podNode, onUpdate: (o, n) => { podNode(o); podNode(n); }, onDelete: podNode }),
      pvcInf.addEventHandler({ onAdd: all, onUpdate: all, onDelete: all }),
      pvInf.addEventHandler({ onAdd: all, onUpdate: all, onDelete: all }),
      vaInf.addEventHandler({
        onAdd: vaNode,
        onUpdate: (_o, n) => vaNode(n),
        onDelete: (o) => {
          const name = obj<VolumeAttachment>(o)?.metadata?.name;
          if (name) this.forgetAttachment(name);
          vaNode(o);
        },
      }),
      drvInf.addEventHandler({ onAdd: all, onUpdate: all, onDelete: all }),
    ];
    for (const r of regs) this.synced.push(() => r.hasSynced());
  }

  hasSynced(): boolean {
    return this.synced.every((s) => s());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }
  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, () => this.hasSynced(), () => {
      this.enqueueAllNodes();
      return this.worker.run(workers, signal);
    });
  }

  private enqueueAllNodes(): void {
    const names = new Set<string>();
    for (const n of this.nodes.list()) if (n.metadata?.name) names.add(n.metadata.name);
    for (const va of this.vas.list()) if (va.spec?.nodeName) names.add(va.spec.nodeName);
    for (const n of names) this.worker.enqueue(n);
  }

  private forgetAttachment(name: string): void {
    this.detachRequested.delete(name);
    this.attachStarted.delete(name);
    this.announced.delete(name);
    this.reportedError.delete(name);
    this.uniqueNames.delete(name);
  }

  private lookup() {
    return {
      pvc: (ns: string, name: string) => this.pvcs.namespace(ns).get(name),
      pv: (name: string) => this.pvs.get(name),
      csiDriver: (name: string) => this.drivers.get(name),
    };
  }

  /** The attachable volumes the node's pods need, by VolumeAttachment name. */
  private desiredFor(nodeName: string): Map<string, Desired> {
    const out = new Map<string, Desired>();
    const lookup = this.lookup();
    for (const pod of this.podsOnNode(nodeName)) {
      if (pod.spec?.nodeName !== nodeName || podTerminated(pod)) continue;
      for (const vol of podAttachableVolumes(pod, lookup)) {
        const name = attachmentName(vol.volumeHandle, vol.driver, nodeName);
        const d = out.get(name);
        if (d) d.pods.push(pod);
        else out.set(name, { vol, pods: [pod] });
      }
    }
    return out;
  }

  /** The unique volume name of an attachment: from its PV, else as remembered. */
  private uniqueNameOf(va: VolumeAttachment): string | undefined {
    const name = va.metadata?.name ?? '';
    const pvName = va.spec?.source?.persistentVolumeName;
    const csi = pvName ? this.pvs.get(pvName)?.spec?.csi : undefined;
    if (csi?.volumeHandle && csi.driver === va.spec?.attacher) {
      const u = uniqueVolumeName(csi.driver, csi.volumeHandle);
      this.uniqueNames.set(name, u);
      return u;
    }
    return this.uniqueNames.get(name);
  }

  async syncNode(nodeName: string): Promise<void> {
    const now = this.ctx.clock.now();
    const node = this.nodes.get(nodeName);
    const managed = !!node && node.metadata?.annotations?.[CONTROLLER_MANAGED_ATTACH_ANNOTATION] !== undefined;
    const desired = managed ? this.desiredFor(nodeName) : new Map<string, Desired>();
    const attachments = this.vasOnNode(nodeName).filter((va) => va.spec?.source?.persistentVolumeName);
    for (const k of this.reportedError.keys()) {
      // Multi-Attach reports of volumes this node no longer wants may be made again later.
      if (k.startsWith(`multi/${nodeName}/`) && !desired.has(k.split('/')[2] ?? '')) this.reportedError.delete(k);
    }
    const inUse = new Set(node?.status?.volumesInUse ?? []);
    const reported = new Set((node?.status?.volumesAttached ?? []).map((v) => v.name));
    let recheckAt: number | undefined;
    const recheck = (at: number) => {
      recheckAt = recheckAt === undefined ? at : Math.min(recheckAt, at);
    };

    // 1. Detach what no pod here needs any more.
    const toDetach: Kube<VolumeAttachment>[] = [];
    for (const va of attachments) {
      const name = va.metadata?.name ?? '';
      if (desired.has(name)) {
        this.detachRequested.delete(name);
        continue;
      }
      if (va.metadata?.deletionTimestamp) continue; // detach under way
      const since = this.detachRequested.get(name) ?? now;
      this.detachRequested.set(name, since);
      const unique = this.uniqueNameOf(va);
      const timedOut = now - since >= MAX_WAIT_FOR_UNMOUNT_MS;
      if (node && unique && inUse.has(unique) && !timedOut) {
        this.log.v(5).info({ node: nodeName, volume: unique }, 'Cannot detach volume because it is still mounted');
        recheck(since + MAX_WAIT_FOR_UNMOUNT_MS);
        continue;
      }
      if (node && unique && inUse.has(unique)) {
        this.log.warn({ node: nodeName, volume: unique, maxWaitForUnmountDuration: '6m0s' }, 'This volume is not safe to detach, but maxWaitForUnmountDuration expired, force detaching');
      }
      toDetach.push(va);
    }
    const detaching = new Set(toDetach.map((va) => va.metadata?.name ?? ''));

    // 2. Attach what is needed.
    for (const [name, d] of desired) {
      const va = this.vas.get(name);
      if (!va) {
        if (this.multiAttachBlocked(name, d, nodeName)) continue;
        await this.createAttachment(name, d, nodeName);
        this.attachStarted.set(name, now);
        recheck(now + ATTACH_TIMEOUT_MS);
        continue;
      }
      if (va.metadata?.deletionTimestamp) continue; // detach in progress; attach again once it is gone
      if (va.status?.attached) {
        this.attachStarted.delete(name);
        this.reportedError.delete(name);
        if (!this.announced.has(name)) {
          this.announced.add(name);
          if (!reported.has(d.vol.uniqueName)) {
            const msg = `AttachVolume.Attach succeeded for volume ${JSON.stringify(d.vol.pvName)} `;
            for (const p of d.pods) this.recorder.event(podRef(p), 'Normal', 'SuccessfulAttachVolume', msg);
            this.log.info({ node: nodeName, volume: d.vol.uniqueName }, 'AttachVolume.Attach succeeded');
          }
        }
        continue;
      }
      const started = this.attachStarted.get(name) ?? now;
      this.attachStarted.set(name, started);
      const attachErr = va.status?.attachError?.message;
      if (attachErr) {
        this.attachFailed(name, d, attachErr);
      } else if (now - started >= ATTACH_TIMEOUT_MS) {
        this.attachFailed(name, d, `timed out waiting for external-attacher of ${d.vol.driver} CSI driver to attach volume ${d.vol.volumeHandle}`, true);
        this.attachStarted.set(name, now);
        recheck(now + ATTACH_TIMEOUT_MS);
      } else recheck(started + ATTACH_TIMEOUT_MS);
    }

    // 3. volumesAttached, before any detach (upstream removes the volume from the report first).
    if (managed && node) {
      const attached: Array<{ name: string; devicePath: string }> = [];
      for (const va of attachments) {
        const name = va.metadata?.name ?? '';
        if (!va.status?.attached || va.metadata?.deletionTimestamp || detaching.has(name)) continue;
        const unique = desired.get(name)?.vol.uniqueName ?? this.uniqueNameOf(va);
        if (unique && !attached.some((a) => a.name === unique)) attached.push({ name: unique, devicePath: '' });
      }
      attached.sort((a, b) => a.name.localeCompare(b.name));
      const current = (node.status?.volumesAttached ?? []).map((v) => v.name).sort();
      if (current.join('\n') !== attached.map((a) => a.name).join('\n')) {
        try {
          await this.ctx.client.resource(GVR.nodes).patch(nodeName, 'merge', { status: { volumesAttached: attached.length > 0 ? attached : null } }, { subresource: 'status' });
          this.log.v(4).info({ node: nodeName, volumesAttached: attached.map((a) => a.name) }, 'Updating status for node succeeded');
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }

    for (const va of toDetach) {
      const name = va.metadata?.name ?? '';
      try {
        await this.ctx.client.resource(GVR.volumeAttachments).delete(name, { preconditions: { uid: va.metadata?.uid } });
        this.log.info({ node: nodeName, volumeAttachment: name, volume: this.uniqueNameOf(va) }, 'attacherDetacher.DetachVolume started');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (recheckAt !== undefined) this.worker.enqueueAfter(nodeName, Math.max(0, recheckAt - now));
  }

  private async createAttachment(name: string, d: Desired, nodeName: string): Promise<void> {
    const va: Kube<VolumeAttachment> = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name },
      spec: { attacher: d.vol.driver, nodeName, source: { persistentVolumeName: d.vol.pvName } },
    };
    try {
      await this.ctx.client.resource(GVR.volumeAttachments).create(va);
      this.uniqueNames.set(name, d.vol.uniqueName);
      this.log.v(2).info({ node: nodeName, volumeAttachment: name, volume: d.vol.uniqueName }, 'attacherDetacher.AttachVolume started');
    } catch (err) {
      if (!isAlreadyExists(err)) {
        this.attachFailed(name, d, (err as Error).message);
        throw err;
      }
    }
  }

  /** A FailedAttachVolume event on the pods, once per distinct message (`always` repeats it). */
  private attachFailed(key: string, d: Desired, message: string, always = false): void {
    const text = `AttachVolume.Attach failed for volume ${JSON.stringify(d.vol.pvName)} : ${message}`;
    if (!always && this.reportedError.get(key) === text) return;
    this.reportedError.set(key, text);
    for (const p of d.pods) this.recorder.event(podRef(p), 'Warning', 'FailedAttachVolume', text);
    this.log.error(new Error(message), { volume: d.vol.uniqueName }, 'AttachVolume.Attach failed');
  }

  /**
   * A ReadWriteOnce(Pod) volume attached (or being attached) to another node
   * is not attached here: the reconciler's Multi-Attach error, once.
   */
  private multiAttachBlocked(name: string, d: Desired, nodeName: string): boolean {
    const modes = this.pvs.get(d.vol.pvName)?.spec?.accessModes ?? [];
    const exclusive = modes.length > 0 && modes.every((m) => m === 'ReadWriteOnce' || m === 'ReadWriteOncePod');
    if (!exclusive) return false;
    const elsewhere = this.vas.list().filter((va) => va.spec?.source?.persistentVolumeName === d.vol.pvName && va.spec?.nodeName !== nodeName);
    if (elsewhere.length === 0) return false;
    const otherNodes = new Set(elsewhere.map((va) => va.spec?.nodeName ?? ''));
    const users = this.pods
      .list()
      .filter((p) => otherNodes.has(p.spec?.nodeName ?? '') && !podTerminated(p) && podAttachableVolumes(p, this.lookup()).some((v) => v.pvName === d.vol.pvName));
    for (const pod of d.pods) {
      const ns = pod.metadata?.namespace;
      let detail: string;
      if (users.length === 0) detail = "Volume is already exclusively attached to one node and can't be attached to another";
      else {
        const local = users.filter((p) => p.metadata?.namespace === ns).map((p) => p.metadata?.name ?? '').sort();
        const others = users.length - local.length;
        if (local.length > 0) detail = `Volume is already used by pod(s) ${local.join(', ')}${others > 0 ? ` and ${others} pod(s) in different namespaces` : ''}`;
        else detail = `Volume is already used by ${others} pod(s) in different namespaces`;
      }
      const text = `Multi-Attach error for volume ${JSON.stringify(d.vol.pvName)} ${detail}`;
      const key = `multi/${nodeName}/${name}/${pod.metadata?.uid ?? ''}`;
      if (this.reportedError.has(key)) continue; // reported once per pod and volume (MultiAttachErrorReported)
      this.reportedError.set(key, text);
      this.recorder.event(podRef(pod), 'Warning', 'FailedAttachVolume', text);
    }
    return true;
  }
}

export function newAttachDetachController(ctx: ControllerContext): AttachDetachController {
  return new AttachDetach(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: ATTACH_DETACH_CONTROLLER_NAME,
  aliases: ['attachdetach'],
  requiredResources: [GVR.nodes, GVR.pods, GVR.persistentVolumeClaims, GVR.persistentVolumes, GVR.volumeAttachments, GVR.csiDrivers],
  defaultWorkers: 1,
  create: (ctx) => newAttachDetachController(ctx),
};
