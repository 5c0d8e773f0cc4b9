/**
 * VolumeRestrictions (plugins/volumerestrictions): volumes that cannot be
 * shared.
 *
 * - GCE PD, AWS EBS, iSCSI and RBD volumes used by a pod on the node conflict
 *   unless (where the kind allows it) every user mounts them read-only.
 * - A PersistentVolumeClaim with the ReadWriteOncePod access mode may be used
 *   by one pod in the whole cluster: while an assigned (or assumed) pod uses
 *   it, every node is rejected (preemption could help: Unschedulable).
 * A claim that does not exist keeps the pod pending (its access modes are needed).
 */
import type { Pod, Volume } from 'kubernetes-types/core/v1.js';
import { unresolvable, unschedulable, type CycleContext, type FilterPlugin, type Status } from '../framework.js';
import type { NodeInfo } from '../node-info.js';

export const VOLUME_RESTRICTIONS = 'VolumeRestrictions';
export const ERR_REASON_DISK_CONFLICT = 'node(s) had no available disk';
export const ERR_REASON_RWOP_CONFLICT = 'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode';

function needsRestrictionsCheck(v: Volume): boolean {
  return !!(v.gcePersistentDisk || v.awsElasticBlockStore || v.rbd || v.iscsi);
}

function haveOverlap(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return b.some((x) => set.has(x));
}

/** isVolumeConflict: `v` (of the incoming pod) against the volumes of a pod already on the node. */
export function isVolumeConflict(v: Volume, existing: Pod): boolean {
  for (const ev of existing.spec?.volumes ?? []) {
    if (v.gcePersistentDisk && ev.gcePersistentDisk) {
      if (v.gcePersistentDisk.pdName === ev.gcePersistentDisk.pdName && !(v.gcePersistentDisk.readOnly && ev.gcePersistentDisk.readOnly)) return true;
    }
    if (v.awsElasticBlockStore && ev.awsElasticBlockStore) {
      if (v.awsElasticBlockStore.volumeID === ev.awsElasticBlockStore.volumeID) return true;
    }
    if (v.iscsi && ev.iscsi) {
      if (v.iscsi.iqn === ev.iscsi.iqn && !(v.iscsi.readOnly && ev.iscsi.readOnly)) return true;
    }
    if (v.rbd && ev.rbd) {
      const pool = v.rbd.pool || 'rbd';
      const epool = ev.rbd.pool || 'rbd';
      if (haveOverlap(v.rbd.monitors ?? [], ev.rbd.monitors ?? []) && pool === epool && v.rbd.image === ev.rbd.image && !(v.rbd.readOnly && ev.rbd.readOnly)) {
        return true;
      }
    }
  }
  return false;
}

interface State {
  conflictingPVCRefCount: number;
}

function podUsesClaim(pod: Pod, ns: string, claim: string): boolean {
  if ((pod.metadata?.namespace ?? 'default') !== ns) return false;
  return (pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim);
}

export const volumeRestrictions: FilterPlugin = {
  name: VOLUME_RESTRICTIONS,
  preFilter(ctx: CycleContext): Status | undefined {
    const { pod, lookups, snapshot } = ctx;
    const ns = pod.metadata?.namespace ?? 'default';
    const rwop: string[] = [];
    for (const v of pod.spec?.volumes ?? []) {
      if (!v.persistentVolumeClaim) continue;
      const name = v.persistentVolumeClaim.claimName;
      const claim = lookups.claim(ns, name);
      if (!claim) return unresolvable(`persistentvolumeclaim ${JSON.stringify(name)} not found`);
      if ((claim.spec?.accessModes ?? []).includes('ReadWriteOncePod') && !rwop.includes(name)) rwop.push(name);
    }
    let conflicting = 0;
    for (const name of rwop) {
      // StorageInfos().IsPVCUsedByPods: any pod in the snapshot (assigned or assumed).
      const used = snapshot.nodes.some((n) => [...n.pods.values()].some((p) => p.pod.metadata?.uid !== pod.metadata?.uid && podUsesClaim(p.pod, ns, name)));
      if (used) conflicting++;
    }
    ctx.state.set(VOLUME_RESTRICTIONS, { conflictingPVCRefCount: conflicting } satisfies State);
    return undefined;
  },
  filter(ctx: CycleContext, info: NodeInfo): Status | undefined {
    for (const v of ctx.pod.spec?.volumes ?? []) {
      if (!needsRestrictionsCheck(v)) continue;
      for (const p of info.pods.values()) if (isVolumeConflict(v, p.pod)) return unschedulable(ERR_REASON_DISK_CONFLICT);
    }
    const state = ctx.state.get(VOLUME_RESTRICTIONS) as State | undefined;
    if (state && state.conflictingPVCRefCount > 0) return unschedulable(ERR_REASON_RWOP_CONFLICT);
    return undefined;
  },
};
