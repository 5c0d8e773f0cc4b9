/**
 * Node and pod helpers of pkg/controller/util/node/controller_utils.go:
 * node events with upstream's object references, and marking the pods of a
 * node not Ready.
 */
import type { Node, NodeCondition, NodeStatus, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import { updatePodCondition } from '../../controller/pod-util.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { EventRecorder, EventType } from '../../tools/record/interfaces.js';
import { rfc3339, type Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export function getNodeCondition(status: NodeStatus | undefined, type: string): NodeCondition | undefined {
  return (status?.conditions ?? []).find((c) => c.type === type);
}

/** An event on a node, referenced by name and uid, worded "Node <name> event: <message>" (RecordNodeEvent). */
export function recordNodeEvent(recorder: EventRecorder, nodeName: string, nodeUID: string, type: EventType, reason: string, message: string): void {
  recorder.event({ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUID, namespace: '' }, type, reason, `Node ${nodeName} event: ${message}`);
}

/** "Node <name> status is now: <status>" (RecordNodeStatusChange), referencing the node by name and uid. */
export function recordNodeStatusChange(recorder: EventRecorder, node: Node, newStatus: string): void {
  const name = node.metadata?.name ?? '';
  recorder.event({ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '', namespace: '' }, 'Normal', newStatus, `Node ${name} status is now: ${newStatus}`);
}

/**
 * Sets the Ready condition of each pod on `nodeName` to False (status
 * update) with a Warning NodeNotReady event (MarkPodsNotReady). Pods
 * already gone are skipped; other failures are collected and thrown (the
 * event is still recorded for them, as upstream does).
 */
export async function markPodsNotReady(
  deps: { client: Client; recorder: EventRecorder; clock: Clock; log: Logger },
  pods: readonly Kube<Pod>[],
  nodeName: string,
): Promise<void> {
  deps.log.v(2).info({ node: nodeName }, 'Update ready status of pods on node');
  const errs: unknown[] = [];
  for (const p of pods) {
    if (p.spec?.nodeName !== nodeName) continue;
    const ready = (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
    if (!ready) continue;
    const pod = deepCopy(p);
    if (!pod.status) (pod as { status?: Pod['status'] }).status = {};
    if (!updatePodCondition(pod.status!, { ...ready, status: 'False' }, rfc3339(deps.clock.now()))) continue;
    deps.log.v(2).info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, 'Updating ready status of pod to false');
    try {
      await deps.client.resource<Kube<Pod>>(GVR.pods).namespace(pod.metadata?.namespace ?? '').updateStatus(pod);
    } catch (err) {
      if (isNotFound(err)) continue;
      deps.log.info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, err: (err as Error).message }, 'Failed to update status for pod');
      errs.push(err);
    }
    deps.recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'NodeNotReady', 'Node is not ready');
  }
  if (errs.length === 1) throw errs[0];
  if (errs.length) throw new AggregateError(errs, `${errs.length} pods on node ${nodeName} could not be marked not ready`);
}

/** The pod index by `spec.nodeName` shared by node controllers (nodeNameKeyIndex). */
export const POD_NODE_NAME_INDEX = 'spec.nodeName';

/** Adds the spec.nodeName index to the pod informer unless another controller already did. */
export function ensurePodNodeNameIndex(informer: { getIndexer(): { getIndexers(): Record<string, unknown> }; addIndexers(i: Record<string, (p: Kube<Pod>) => string[]>): void }): void {
  if (POD_NODE_NAME_INDEX in informer.getIndexer().getIndexers()) return;
  try {
    informer.addIndexers({ [POD_NODE_NAME_INDEX]: (p: Kube<Pod>) => (p.spec?.nodeName ? [p.spec.nodeName] : []) });
  } catch (err) {
    // Lost a race with another controller adding the same index: it is there now.
    if (!(POD_NODE_NAME_INDEX in informer.getIndexer().getIndexers())) throw err;
  }
}
