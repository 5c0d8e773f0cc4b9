/**
 * The kubelet's pod admission (pkg/kubelet/lifecycle/predicate.go): before a
 * pod bound to the node runs, the kubelet checks it against the node and the
 * pods already active there, with the scheduler's own admission checks
 * (scheduler.AdmissionCheck: resources, node affinity, node name, host
 * ports) and the NoExecute taints. A refused pod is not run: rejectPod sets
 * phase Failed, the reason and `Pod was rejected: <message>`, and records a
 * Warning event with the reason.
 *
 * Like the kubelet, which imports the scheduler's framework for this, this
 * module reuses the scheduler's node bookkeeping and filters (a deliberate
 * exception to nodes/ using only api/, client/ and tools/).
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { findUntoleratedTaint } from '../api/taints.js';
import { addPod, hostPortConflicts, newNodeInfo, newPodInfo, podHostPorts, type PodInfo } from '../scheduler/node-info.js';
import { podMatchesNodeSelectorAndAffinity } from '../scheduler/node-selector.js';
import { ERR_REASON_NODE_AFFINITY } from '../scheduler/plugins/node-affinity.js';
import { ERR_REASON_NODE_NAME } from '../scheduler/plugins/node-name.js';
import { ERR_REASON_NODE_PORTS } from '../scheduler/plugins/node-ports.js';
import { insufficientResources } from '../scheduler/plugins/node-resources-fit.js';
import type { AdmitResult } from './eviction.js';

/** tainttoleration.ErrReasonNotMatch. */
export const ERR_REASON_TAINTS = "node(s) had taints that the pod didn't tolerate";

const OUT_OF: Readonly<Record<string, string>> = { cpu: 'OutOfcpu', memory: 'OutOfmemory', 'ephemeral-storage': 'OutOfephemeral-storage', pods: 'OutOfpods' };

function predicateFailure(name: string, desc: string): AdmitResult {
  return { admit: false, reason: name, message: `Predicate ${name} failed: ${desc}` };
}

/**
 * What admission needs of a pod already active on the node (the scheduler's PodInfo: requests, host
 * ports). It depends only on fields of the pod spec that cannot change, so a caller makes it once per
 * pod and passes it to every later admission on the node (at 30 pods a node, remaking them for each
 * admission was most of the simulated kubelets' admission time). It keeps only the pod's identity,
 * not the pod object it was made from (a kept pod version would outlive its informer's replacement).
 */
export type ActivePodInfo = PodInfo;
export function activePodInfo(pod: Pod): ActivePodInfo {
  const { uid, namespace, name } = pod.metadata ?? {};
  return { ...newPodInfo(pod), pod: { metadata: { uid, namespace, name } } };
}

/**
 * Whether the kubelet of `node` admits `pod`, given the `active` pods already
 * admitted there (not finished). Only the first failure is reported, as
 * kubelet does.
 */
export function kubeletAdmit(pod: Pod, node: Node, active: readonly ActivePodInfo[]): AdmitResult {
  const os = pod.metadata?.labels?.['kubernetes.io/os'];
  const nodeOS = node.metadata?.labels?.['kubernetes.io/os'] ?? 'linux';
  if (os !== undefined && os !== nodeOS) {
    return { admit: false, reason: 'PodOSSelectorNodeLabelDoesNotMatch', message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" };
  }
  if (pod.spec?.os?.name !== undefined && pod.spec.os.name !== 'linux') {
    return { admit: false, reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" };
  }
  const info = newNodeInfo(node);
  for (const p of active) if (p.pod.metadata?.uid !== pod.metadata?.uid) addPod(info, p);
  const short = insufficientResources(newPodInfo(pod).requests, info);
  if (short.length > 0) {
    const s = short[0]!;
    return {
      admit: false,
      reason: OUT_OF[s.resource] ?? `OutOf${s.resource}`,
      message: `Node didn't have enough resource: ${s.resource}, requested: ${s.requested}, used: ${s.used}, capacity: ${s.capacity}`,
    };
  }
  if (!podMatchesNodeSelectorAndAffinity(pod, node)) return predicateFailure('NodeAffinity', ERR_REASON_NODE_AFFINITY);
  if (pod.spec?.nodeName && pod.spec.nodeName !== node.metadata?.name) return predicateFailure('NodeName', ERR_REASON_NODE_NAME);
  if (podHostPorts(pod).some((want) => hostPortConflicts(info.usedPorts, want))) return predicateFailure('NodePorts', ERR_REASON_NODE_PORTS);
  if (findUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations, (t) => t.effect === 'NoExecute')) return predicateFailure('TaintToleration', ERR_REASON_TAINTS);
  return { admit: true };
}
