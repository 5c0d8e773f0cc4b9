/**
 * Zones and their health (GetZoneKey, ComputeZoneState, the QPS functions of
 * node_lifecycle_controller.go).
 */
import type { Node, NodeCondition } from 'kubernetes-types/core/v1.js';

export type ZoneState = 'Initial' | 'Normal' | 'FullDisruption' | 'PartialDisruption';

/** `<region>:\0:<zone>` from the topology labels (beta labels as fallback); '' without either. */
export function getZoneKey(node: Node): string {
  const l = node.metadata?.labels;
  if (!l) return '';
  const zone = l['topology.kubernetes.io/zone'] ?? l['failure-domain.beta.kubernetes.io/zone'] ?? '';
  const region = l['topology.kubernetes.io/region'] ?? l['failure-domain.beta.kubernetes.io/region'] ?? '';
  if (region === '' && zone === '') return '';
  return `${region}:\x00:${zone}`;
}

/** Nodes with this label are left out of zone health (labelNodeDisruptionExclusion). */
export const LABEL_NODE_DISRUPTION_EXCLUSION = 'node.kubernetes.io/exclude-disruption';

/**
 * The zone is FullDisruption when no node is Ready, PartialDisruption when
 * more than 2 nodes and at least `unhealthyZoneThreshold` of them are not
 * Ready, Normal otherwise. Returns the number of not-Ready nodes too.
 */
export function computeZoneState(readyConditions: ReadonlyArray<NodeCondition | undefined>, unhealthyZoneThreshold: number): [number, ZoneState] {
  let ready = 0;
  let notReady = 0;
  for (const c of readyConditions) {
    if (c && c.status === 'True') ready++;
    else notReady++;
  }
  if (ready === 0 && notReady > 0) return [notReady, 'FullDisruption'];
  // float32 arithmetic as upstream, so 0.55 compares the same way.
  if (notReady > 2 && Math.fround(notReady / (notReady + ready)) >= Math.fround(unhealthyZoneThreshold)) return [notReady, 'PartialDisruption'];
  return [notReady, 'Normal'];
}
