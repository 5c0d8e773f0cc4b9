/**
 * NodeVolumeLimits (plugins/nodevolumelimits, the CSI limits): a node
 * attaches at most `CSINode.spec.drivers[].allocatable.count` volumes of each
 * CSI driver. Volumes are counted once per node however many pods use them
 * (by driver and volume handle); a claim not bound yet counts as one volume of
 * its class's provisioner. Nodes without a CSINode or without limits accept
 * everything.
 *
 * Not counted (kcm): in-tree volume sources translated by CSI migration and
 * CSI inline volumes, and VolumeAttachments of pods already gone.
 */
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { claimClass, CSI_MIGRATED } from '../../api/volume.js';
import { unresolvable, unschedulable, type ClusterLookups, type CycleContext, type FilterPlugin, type Status } from '../framework.js';
import type { NodeInfo } from '../node-info.js';

export const NODE_VOLUME_LIMITS = 'NodeVolumeLimits';
export const ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = 'node(s) exceed max volume count';

/** The driver and handle of a claim's volume, or undefined when it is not a CSI volume. */
function csiDriverInfo(lookups: ClusterLookups, claim: PersistentVolumeClaim): { driver: string; handle: string } | undefined {
  const ns = claim.metadata?.namespace ?? '';
  const name = claim.metadata?.name ?? '';
  const fromClass = () => {
    const cls = claimClass(claim);
    if (!cls) return undefined;
    const sc = lookups.storageClass(cls);
    if (!sc?.provisioner) return undefined;
    const driver = CSI_MIGRATED[sc.provisioner] ?? sc.provisioner;
    // A unique placeholder handle until the claim is bound.
    return { driver, handle: `${ns}-${name}` };
  };
  const pvName = claim.spec?.volumeName;
  if (!pvName) return fromClass();
  const pv = lookups.persistentVolume(pvName);
  if (!pv) return fromClass();
  const csi = pv.spec?.csi;
  if (!csi) return undefined;
  return { driver: csi.driver, handle: csi.volumeHandle };
}

/**
 * filterAttachableVolumes: the pod's CSI volumes, unique name -> driver. For
 * the incoming pod a missing claim is an error (NotFound); other pods' missing
 * claims are not counted.
 */
function attachableVolumes(lookups: ClusterLookups, pod: Pod, newPod: boolean, out: Map<string, string>): string | undefined {
  const ns = pod.metadata?.namespace ?? 'default';
  for (const v of pod.spec?.volumes ?? []) {
    let claimName: string;
    if (v.persistentVolumeClaim) claimName = v.persistentVolumeClaim.claimName;
    else if (v.ephemeral) claimName = `${pod.metadata?.name ?? ''}-${v.name}`;
    else continue;
    const claim = lookups.claim(ns, claimName);
    if (!claim) {
      if (newPod) return `looking up PVC ${ns}/${claimName}: persistentvolumeclaim ${JSON.stringify(claimName)} not found`;
      continue;
    }
    const info = csiDriverInfo(lookups, claim);
    if (!info || !info.driver || !info.handle) continue;
    out.set(`${info.driver}/${info.handle}`, info.driver);
  }
  return undefined;
}

/** Whether the pod has a volume attachableVolumes looks at (a claim or an ephemeral volume). */
function hasClaimVolumes(pod: Pod): boolean {
  for (const v of pod.spec?.volumes ?? []) if (v.persistentVolumeClaim || v.ephemeral) return true;
  return false;
}

function volumeLimits(csiNode: CSINode | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const d of csiNode?.spec?.drivers ?? []) {
    const count = d.allocatable?.count;
    if (count !== undefined && count !== null) out.set(d.name, count);
  }
  return out;
}

export const nodeVolumeLimits: FilterPlugin = {
  name: NODE_VOLUME_LIMITS,
  filter(ctx: CycleContext, info: NodeInfo): Status | undefined {
    const { pod, lookups } = ctx;
    if (!hasClaimVolumes(pod)) return undefined; // nothing attachable (most pods: a projected token volume)
    const csiNode = lookups.csiNode(info.node?.metadata?.name ?? '');
    const newVolumes = new Map<string, string>();
    const err = attachableVolumes(lookups, pod, true, newVolumes);
    if (err) return unresolvable(err);
    if (newVolumes.size === 0) return undefined;
    const limits = volumeLimits(csiNode);
    if (limits.size === 0) return undefined;
    const attached = new Map<string, string>();
    for (const p of info.pods.values()) attachableVolumes(lookups, p.pod, false, attached);
    const attachedCount = new Map<string, number>();
    for (const [unique, driver] of attached) {
      newVolumes.delete(unique); // a volume already attached for another pod costs nothing more
      attachedCount.set(driver, (attachedCount.get(driver) ?? 0) + 1);
    }
    const newCount = new Map<string, number>();
    for (const driver of newVolumes.values()) newCount.set(driver, (newCount.get(driver) ?? 0) + 1);
    for (const [driver, count] of newCount) {
      const max = limits.get(driver);
      if (max !== undefined && (attachedCount.get(driver) ?? 0) + count > max) return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED);
    }
    return undefined;
  },
};
