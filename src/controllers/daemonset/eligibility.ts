/**
 * Which nodes a DaemonSet runs on (pkg/controller/daemon: NodeShouldRunDaemonPod,
 * predicates; pkg/controller/daemon/util: default tolerations, node-name
 * affinity, pod template).
 *
 * A node is eligible when the daemon pod fits its name, its nodeSelector and
 * required node affinity, and tolerates its NoSchedule and NoExecute taints.
 * A pod already there keeps running while only NoSchedule taints are
 * untolerated.
 */
import type { DaemonSet } from 'kubernetes-types/apps/v1.js';
import type {
  Affinity,
  Node,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  Pod,
  PodSpec,
  PodTemplateSpec,
  Toleration,
} from 'kubernetes-types/core/v1.js';
import { findUntoleratedTaint } from '../../api/taints.js';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../controller/history/controller-history.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** Set by the API server on DaemonSets (the template generation). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** The tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations). */
export function defaultDaemonTolerations(hostNetwork: boolean): Toleration[] {
  const t: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (hostNetwork) t.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  return t;
}

/** Adds the default tolerations, replacing existing ones with the same key and effect. */
export function addDaemonPodTolerations(spec: PodSpec): void {
  let tolerations = [...(spec.tolerations ?? [])];
  for (const d of defaultDaemonTolerations(spec.hostNetwork === true)) {
    tolerations = tolerations.filter((t) => !(t.key === d.key && t.effect === d.effect));
    tolerations.push(d);
  }
  spec.tolerations = tolerations;
}

/** An affinity whose required node terms are replaced by `metadata.name In [nodeName]` (ReplaceDaemonSetPodNodeNameNodeAffinity). */
export function replaceNodeNameAffinity(affinity: Affinity | undefined, nodeName: string): Affinity {
  const term: NodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
  const a = deepCopy(affinity ?? {});
  a.nodeAffinity = {
    ...(a.nodeAffinity ?? {}),
    requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] },
  };
  return a;
}

/** The node a daemon pod is for: spec.nodeName, or the name in its `metadata.name` affinity term (GetTargetNodeName). */
export function getTargetNodeName(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  for (const term of pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of term.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

/** The template generation: the API server's annotation, else metadata.generation. */
export function templateGeneration(ds: DaemonSet): number | undefined {
  const a = ds.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (a !== undefined && /^[0-9]+$/.test(a)) return Number(a);
  return ds.metadata?.generation;
}

/** The daemon pod template with default tolerations and the generation and hash labels (CreatePodTemplate). */
export function createPodTemplate(template: PodTemplateSpec, generation: number | undefined, hash: string): PodTemplateSpec {
  const t = deepCopy(template);
  t.spec ??= { containers: [] };
  addDaemonPodTolerations(t.spec);
  const labels: Record<string, string> = { ...(t.metadata?.labels ?? {}) };
  if (generation !== undefined) labels[POD_TEMPLATE_GENERATION_LABEL] = String(generation);
  if (hash) labels[CONTROLLER_REVISION_HASH_LABEL] = hash;
  t.metadata = { ...(t.metadata ?? {}), labels };
  return t;
}

/** The pod is at the DaemonSet's current template: same hash, or same template generation (IsPodUpdated). */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata?.labels ?? {};
  const templateMatches = generation !== undefined && labels[POD_TEMPLATE_GENERATION_LABEL] === String(generation);
  const hashMatches = hash.length > 0 && labels[CONTROLLER_REVISION_HASH_LABEL] === hash;
  return hashMatches || templateMatches;
}

function requirementMatches(req: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const a = Number.parseInt(value, 10);
      const b = Number.parseInt(values[0]!, 10);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return req.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false; // an empty term matches nothing
  const labels = node.metadata?.labels ?? {};
  if (!exprs.every((r) => requirementMatches(r, labels[r.key]))) return false;
  return fields.every((r) => requirementMatches(r, r.key === 'metadata.name' ? node.metadata?.name : undefined));
}

/** nodeSelector and required node affinity of the pod match the node. */
export function fitsNodeAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => termMatches(t, node));
}

/** The pod the DaemonSet would run on `nodeName` (NewPod): template spec with default tolerations. */
export function newDaemonPod(ds: DaemonSet, nodeName: string): Pod {
  const spec = deepCopy(ds.spec?.template?.spec ?? { containers: [] });
  addDaemonPodTolerations(spec);
  return { metadata: { ...(ds.spec?.template?.metadata ?? {}) }, spec: { ...spec, nodeName } };
}

/**
 * Whether a daemon pod should be created on the node (shouldRun) and whether
 * one already there may stay (shouldContinueRunning).
 */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const pod = newDaemonPod(ds, node.metadata?.name ?? '');
  const specNodeName = ds.spec?.template?.spec?.nodeName;
  if (specNodeName && specNodeName !== node.metadata?.name) return { shouldRun: false, shouldContinueRunning: false };
  if (!fitsNodeAffinity(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = node.spec?.taints ?? [];
  const tolerations = pod.spec?.tolerations ?? [];
  const untolerated = findUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  if (untolerated) {
    const noExecute = findUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoExecute');
    return { shouldRun: false, shouldContinueRunning: !noExecute };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}
