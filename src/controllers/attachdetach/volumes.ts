/**
 * What the attach-detach controller needs to know about a pod's volumes:
 * which of them are CSI volumes that need attaching (pkg/volume/csi), their
 * unique names (`kubernetes.io/csi/<driver>^<volumeHandle>`) and the name of
 * their VolumeAttachment (`csi-<sha256(volumeHandle + driver + nodeName)>`).
 */
import { createHash } from 'node:crypto';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';

/** Set by kubelets that let the controller attach and detach their volumes. */
export const CONTROLLER_MANAGED_ATTACH_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';
/** The CSI volume plugin's name; unique volume names start with it. */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';

/** `kubernetes.io/csi/<driver>^<volumeHandle>` (volumeutil.GetUniqueVolumeName over the CSI plugin's GetVolumeName). */
export function uniqueVolumeName(driver: string, volumeHandle: string): string {
  return `${CSI_PLUGIN_NAME}/${driver}^${volumeHandle}`;
}

/** The VolumeAttachment name of (volumeHandle, driver, node), as csi_attacher.go's getAttachmentName. */
export function attachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${createHash('sha256').update(`${volumeHandle}${driver}${nodeName}`).digest('hex')}`;
}

/** One attachable volume a pod needs. */
export interface AttachableVolume {
  /** kubernetes.io/csi/<driver>^<handle> */
  uniqueName: string;
  /** The PersistentVolume (the volume spec's name in events). */
  pvName: string;
  driver: string;
  volumeHandle: string;
}

export interface VolumeLookup {
  pvc(namespace: string, name: string): PersistentVolumeClaim | undefined;
  pv(name: string): PersistentVolume | undefined;
  csiDriver(name: string): CSIDriver | undefined;
}

/** True when the driver needs attaching: its CSIDriver says attachRequired (or is absent, as upstream assumes). */
export function attachRequired(driver: CSIDriver | undefined): boolean {
  return driver?.spec?.attachRequired !== false;
}

/** The claim a pod volume refers to: `claimName`, or `<pod>-<volume>` for a generic ephemeral volume. */
export function claimNameOf(pod: Pod, v: { name: string; persistentVolumeClaim?: { claimName: string }; ephemeral?: unknown }): string | undefined {
  if (v.persistentVolumeClaim?.claimName) return v.persistentVolumeClaim.claimName;
  if (v.ephemeral) return `${pod.metadata?.name ?? ''}-${v.name}`;
  return undefined;
}

/**
 * The attachable volumes of `pod`: claims bound to CSI PersistentVolumes
 * whose driver requires attach. A claim that is missing or not bound, or a
 * PV not yet in the cache, is skipped (upstream logs it and retries on the
 * next pod or claim change). Inline CSI volumes are ephemeral and never
 * attached.
 */
export function podAttachableVolumes(pod: Pod, lookup: VolumeLookup): AttachableVolume[] {
  const ns = pod.metadata?.namespace ?? '';
  const out: AttachableVolume[] = [];
  const seen = new Set<string>();
  for (const v of pod.spec?.volumes ?? []) {
    const claim = claimNameOf(pod, v);
    if (!claim) continue;
    const pvc = lookup.pvc(ns, claim);
    const pvName = pvc?.spec?.volumeName;
    if (!pvc || !pvName || pvc.status?.phase !== 'Bound') continue;
    const pv = lookup.pv(pvName);
    const csi = pv?.spec?.csi;
    if (!csi?.driver || !csi.volumeHandle) continue;
    if (!attachRequired(lookup.csiDriver(csi.driver))) continue;
    const uniqueName = uniqueVolumeName(csi.driver, csi.volumeHandle);
    if (seen.has(uniqueName)) continue;
    seen.add(uniqueName);
    out.push({ uniqueName, pvName, driver: csi.driver, volumeHandle: csi.volumeHandle });
  }
  return out;
}

/**
 * A pod whose volumes no longer count (volumeutil.IsPodTerminated): it
 * finished, or it is being deleted and none of its containers runs.
 */
export function podTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return true;
  if (!pod.metadata?.deletionTimestamp) return false;
  return !(pod.status?.containerStatuses ?? []).some((cs) => cs.state?.running);
}
