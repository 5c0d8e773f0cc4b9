/**
 * VolumeZone (plugins/volumezone): a pod's bound volumes labelled with a zone
 * or region (topology.kubernetes.io/zone|region and the deprecated
 * failure-domain.beta.kubernetes.io labels; `a__b` lists several zones) can
 * only be used on nodes in that zone or region. Nodes without any of those
 * labels accept every volume. Unbound WaitForFirstConsumer claims are left to
 * VolumeBinding.
 */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import { claimClass } from '../../api/volume.js';
import { unresolvable, type CycleContext, type FilterPlugin, type Status } from '../framework.js';
import type { NodeInfo } from '../node-info.js';

export const VOLUME_ZONE = 'VolumeZone';
export const ERR_REASON_VOLUME_ZONE_CONFLICT = 'node(s) had no available volume zone';

const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const BETA_REGION = 'failure-domain.beta.kubernetes.io/region';
const ZONE = 'topology.kubernetes.io/zone';
const REGION = 'topology.kubernetes.io/region';
const TOPOLOGY_LABELS = [BETA_ZONE, BETA_REGION, ZONE, REGION];

function toGALabel(key: string): string {
  if (key === BETA_ZONE) return ZONE;
  if (key === BETA_REGION) return REGION;
  return key;
}

interface PVTopology {
  key: string;
  values: Set<string>;
}

/** LabelZonesToSet: `a__b` is the set {a, b}. */
function zonesToSet(value: string): Set<string> {
  return new Set(value.split('__').filter((z) => z !== ''));
}

function pvTopologies(pv: PersistentVolume): PVTopology[] {
  const out: PVTopology[] = [];
  for (const key of TOPOLOGY_LABELS) {
    const v = pv.metadata?.labels?.[key];
    if (v !== undefined) out.push({ key, values: zonesToSet(v) });
  }
  return out;
}

export const volumeZone: FilterPlugin = {
  name: VOLUME_ZONE,
  preFilter(ctx: CycleContext): Status | undefined {
    const { pod, lookups } = ctx;
    const ns = pod.metadata?.namespace ?? 'default';
    const topologies: PVTopology[] = [];
    for (const v of pod.spec?.volumes ?? []) {
      if (!v.persistentVolumeClaim) continue;
      const name = v.persistentVolumeClaim.claimName;
      if (!name) return unresolvable('PersistentVolumeClaim had no name');
      const claim = lookups.claim(ns, name);
      if (!claim) return unresolvable(`persistentvolumeclaim ${JSON.stringify(name)} not found`);
      const pvName = claim.spec?.volumeName ?? '';
      if (!pvName) {
        const scName = claimClass(claim);
        if (!scName) return unresolvable('PersistentVolumeClaim had no pv name and storageClass name');
        const sc = lookups.storageClass(scName);
        if (!sc) return unresolvable(`storageclass.storage.k8s.io ${JSON.stringify(scName)} not found`);
        if (!sc.volumeBindingMode) return unresolvable(`VolumeBindingMode not set for StorageClass ${JSON.stringify(scName)}`);
        if (sc.volumeBindingMode === 'WaitForFirstConsumer') continue;
        return unresolvable('PersistentVolume had no name');
      }
      const pv = lookups.persistentVolume(pvName);
      if (!pv) return unresolvable(`persistentvolume ${JSON.stringify(pvName)} not found`);
      topologies.push(...pvTopologies(pv));
    }
    ctx.state.set(VOLUME_ZONE, topologies);
    return undefined;
  },
  filter(ctx: CycleContext, info: NodeInfo): Status | undefined {
    const topologies = ctx.state.get(VOLUME_ZONE) as PVTopology[] | undefined;
    if (!topologies || topologies.length === 0) return undefined;
    const labels = info.node?.metadata?.labels ?? {};
    if (!TOPOLOGY_LABELS.some((k) => Object.prototype.hasOwnProperty.call(labels, k))) return undefined;
    for (const t of topologies) {
      let v = labels[t.key];
      if (v === undefined) v = labels[toGALabel(t.key)];
      if (v === undefined || !t.values.has(v)) return unresolvable(ERR_REASON_VOLUME_ZONE_CONFLICT);
    }
    return undefined;
  },
};
