/**
 * The simulated kubelet's volume manager (pkg/kubelet/volumemanager): which of
 * a pod's volumes are ready, and what the node reports in
 * `status.volumesInUse`. No mounts happen; a volume is "mounted" once:
 * - its claim exists, is bound and its PersistentVolume exists (otherwise
 *   the desired-state populator fails the pod with "error processing PVC
 *   <ns>/<claim>: PVC is not bound" and the like, and the pod waits);
 * - for an attachable volume (a CSI PV whose CSIDriver requires attach, or
 *   has no CSIDriver object), the node reports it in `volumesInUse` and the
 *   attach-detach controller lists it in `volumesAttached` (the reconciler's
 *   VerifyControllerAttachedVolume);
 * every other volume (emptyDir, configMap, projected, hostPath PVs, ...) is
 * mounted at once.
 *
 * While a pod waits, its containers stay ContainerCreating; the kubelet's
 * FailedMount event reads "Unable to attach or mount volumes: unmounted
 * volumes=[data], unattached volumes=[data], failed to process volumes=[]:
 * context deadline exceeded" after WaitForAttachAndMount's 2m3s, or at once
 * with the populator's error when a claim cannot be processed.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';

/** WaitForAttachAndMount's podAttachAndMountTimeout. */
export const POD_ATTACH_AND_MOUNT_TIMEOUT_MS = 2 * 60_000 + 3_000;
/** Where the CSI plugin's unique volume names start. */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';

export interface VolumeLookup {
  pvc(namespace: string, name: string): PersistentVolumeClaim | undefined;
  pv(name: string): PersistentVolume | undefined;
  csiDriver(name: string): CSIDriver | undefined;
}

export interface PodVolumeState {
  /** Every volume is mounted: the sandbox may start. */
  ready: boolean;
  /** Unique names of the pod's attachable volumes (reported in volumesInUse while the pod runs). */
  attachable: string[];
  /** Pod volume names not mounted yet, sorted. */
  unmounted: string[];
  /** Pod volume names of attachable volumes not attached yet, sorted. */
  unattached: string[];
  /** Pod volume names the populator could not process, sorted. */
  failedToProcess: string[];
  /** The populator's errors ("error processing PVC ns/name: ..."), joined with "; " by the kubelet. */
  errors: string[];
}

/** `kubernetes.io/csi/<driver>^<volumeHandle>`. */
export function csiUniqueVolumeName(driver: string, handle: string): string {
  return `${CSI_PLUGIN_NAME}/${driver}^${handle}`;
}

/** Go's %v of a []string: `[a b]`. */
function goList(xs: readonly string[]): string {
  return `[${xs.join(' ')}]`;
}

/** The state of `pod`'s volumes on `node` (the node as the informer sees it). */
export function podVolumeState(pod: Pod, node: Node | undefined, lookup: VolumeLookup): PodVolumeState {
  const ns = pod.metadata?.namespace ?? '';
  const inUse = new Set(node?.status?.volumesInUse ?? []);
  const attached = new Set((node?.status?.volumesAttached ?? []).map((v) => v.name));
  const st: PodVolumeState = { ready: true, attachable: [], unmounted: [], unattached: [], failedToProcess: [], errors: [] };
  for (const v of pod.spec?.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName ?? (v.ephemeral ? `${pod.metadata?.name ?? ''}-${v.name}` : undefined);
    if (!claim) continue;
    const fail = (msg: string) => {
      st.errors.push(`error processing PVC ${ns}/${claim}: ${msg}`);
      st.failedToProcess.push(v.name);
      st.unmounted.push(v.name);
    };
    const pvc = lookup.pvc(ns, claim);
    if (!pvc) {
      fail(`failed to fetch PVC from API server: persistentvolumeclaims "${claim}" not found`);
      continue;
    }
    if (v.ephemeral && !(pvc.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata?.uid)) {
      fail('not the ephemeral PVC for the pod');
      continue;
    }
    const pvName = pvc.spec?.volumeName;
    if (pvc.status?.phase !== 'Bound' || !pvName) {
      fail('PVC is not bound');
      continue;
    }
    const pv = lookup.pv(pvName);
    if (!pv) {
      fail(`failed to fetch PV ${pvName} from API server: persistentvolumes "${pvName}" not found`);
      continue;
    }
    const csi = pv.spec?.csi;
    if (!csi?.driver || !csi.volumeHandle) continue;
    if (lookup.csiDriver(csi.driver)?.spec?.attachRequired === false) continue;
    const unique = csiUniqueVolumeName(csi.driver, csi.volumeHandle);
    if (!st.attachable.includes(unique)) st.attachable.push(unique);
    if (!attached.has(unique)) {
      st.unattached.push(v.name);
      st.unmounted.push(v.name);
    } else if (!inUse.has(unique)) st.unmounted.push(v.name);
  }
  for (const a of [st.unmounted, st.unattached, st.failedToProcess, st.attachable]) a.sort();
  st.ready = st.unmounted.length === 0;
  return st;
}

/**
 * The FailedMount message: with the populator's errors at once, otherwise
 * after the wait timed out ("context deadline exceeded").
 */
export function failedMountMessage(st: PodVolumeState): string {
  const cause = st.errors.length > 0 ? st.errors.join('; ') : 'context deadline exceeded';
  return `Unable to attach or mount volumes: unmounted volumes=${goList(st.unmounted)}, unattached volumes=${goList(st.unattached)}, failed to process volumes=${goList(st.failedToProcess)}: ${cause}`;
}
