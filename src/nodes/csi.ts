/**
 * The CSI side of the simulated nodes, for the drivers they simulate
 * (`local-path.kcm.io` by default):
 * - the CSIDriver object, created when missing (an existing one is kept as it is);
 * - one CSINode per node, as the kubelet's CSI plugin registers a node plugin
 *   (drivers[].name, nodeID = node name, topologyKeys, allocatable.count), so
 *   the scheduler's NodeVolumeLimits plugin has data;
 * - the external attacher (kubernetes-csi/external-attacher): a
 *   VolumeAttachment of a simulated driver for one of our nodes gets the
 *   finalizer `external-attacher/<driver with non-alphanumerics as ->` and
 *   `status.attached: true`; once it is being deleted, the finalizer is
 *   removed (the detach, ControllerUnpublishVolume, always succeeds). Unlike
 *   the real attacher, it puts no finalizer on the PersistentVolume.
 */
import type { CSIDriver, CSINode, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../api/gvr.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import type { Client } from '../client/interfaces.js';
import type { Kube } from '../tools/cache/index.js';
import type { Logger } from '../util/log/logger.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** The CSI driver the simulated nodes serve (the storage helper's provisioner name). */
export const SIMULATED_CSI_DRIVER = 'local-path.kcm.io';
/** allocatable.count of each simulated node plugin (a node plugin's MaxVolumesPerNode). */
export const DEFAULT_CSI_VOLUME_LIMIT = 64;
/** The topology key the simulated node plugins report. */
export const CSI_TOPOLOGY_KEY = 'kubernetes.io/hostname';

/** external-attacher's SanitizeDriverName: non-alphanumerics become `-`, a trailing `-` gets an `X`. */
export function sanitizeDriverName(driver: string): string {
  let name = driver.replace(/[^a-zA-Z0-9-]/g, '-');
  if (name.endsWith('-')) name += 'X';
  return name;
}

/** The finalizer the external attacher puts on the VolumeAttachments it attached. */
export function attacherFinalizer(driver: string): string {
  return `external-attacher/${sanitizeDriverName(driver)}`;
}

/** Creates the CSIDriver when it does not exist (attachRequired true, so attach-detach is exercised). */
export async function ensureCSIDriver(client: Client, driver: string, log: Logger): Promise<void> {
  const obj: Kube<CSIDriver> = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: driver },
    spec: { attachRequired: true, podInfoOnMount: false, volumeLifecycleModes: ['Persistent'] },
  };
  try {
    await client.resource<Kube<CSIDriver>>(GVR.csiDrivers).create(obj);
    log.info({ driver }, 'created CSIDriver');
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** Creates or completes the node's CSINode so that it lists `drivers` (owned by the Node, as the kubelet does). */
export async function ensureCSINode(client: Client, node: { name: string; uid?: string }, drivers: readonly string[], limit: number): Promise<void> {
  const res = client.resource<Kube<CSINode>>(GVR.csiNodes);
  const entry = (name: string) => ({ name, nodeID: node.name, topologyKeys: [CSI_TOPOLOGY_KEY], allocatable: { count: limit } });
  let current: Kube<CSINode> | undefined;
  try {
    current = await res.get(node.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!current) {
    const obj: Kube<CSINode> = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSINode',
      metadata: {
        name: node.name,
        ...(node.uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid }] } : {}),
      },
      spec: { drivers: drivers.map(entry) },
    };
    await res.create(obj);
    return;
  }
  const have = current.spec?.drivers ?? [];
  const missing = drivers.filter((d) => !have.some((h) => h.name === d && h.nodeID === node.name));
  if (missing.length === 0) return;
  const next = deepCopy(current);
  next.spec = { drivers: [...have.filter((h) => !missing.includes(h.name)), ...missing.map(entry)] };
  await res.update(next);
}

export interface ExternalAttacherOptions {
  client: Client;
  logger: Logger;
  drivers: readonly string[];
  /** Our nodes: attachments for other nodes are left to whoever runs them. */
  isOurNode(name: string): boolean;
}

/** Acts on one VolumeAttachment as the external attacher would; returns what it did. */
export async function syncVolumeAttachment(opts: ExternalAttacherOptions, va: VolumeAttachment): Promise<'attached' | 'detached' | undefined> {
  const driver = va.spec?.attacher ?? '';
  const name = va.metadata?.name ?? '';
  if (!opts.drivers.includes(driver) || !opts.isOurNode(va.spec?.nodeName ?? '')) return undefined;
  const res = opts.client.resource<Kube<VolumeAttachment>>(GVR.volumeAttachments);
  const fin = attacherFinalizer(driver);
  const finalizers = va.metadata?.finalizers ?? [];
  try {
    if (va.metadata?.deletionTimestamp) {
      if (!finalizers.includes(fin)) return undefined;
      const next = deepCopy(va) as Kube<VolumeAttachment>;
      next.metadata!.finalizers = finalizers.filter((f) => f !== fin);
      await res.update(next);
      opts.logger.v(2).info({ volumeAttachment: name, driver }, 'detached volume');
      return 'detached';
    }
    if (va.status?.attached) return undefined;
    if (!finalizers.includes(fin)) {
      const next = deepCopy(va) as Kube<VolumeAttachment>;
      next.metadata!.finalizers = [...finalizers, fin];
      await res.update(next);
    }
    await res.patch(name, 'merge', { status: { attached: true, attachError: null } }, { subresource: 'status' });
    opts.logger.v(2).info({ volumeAttachment: name, driver, node: va.spec?.nodeName }, 'attached volume');
    return 'attached';
  } catch (err) {
    if (isNotFound(err) || isConflict(err)) return undefined; // a newer version will come through the informer
    throw err;
  }
}
