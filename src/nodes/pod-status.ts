/**
 * The pod status a kubelet reports (pkg/kubelet/status and kubelet_pods.go
 * generateAPIPodStatus), built from a PodRuntime at one instant.
 *
 * - conditions the kubelet owns (PodReadyToStartContainers, Initialized,
 *   ContainersReady, Ready) are computed; every other condition already on
 *   the pod (PodScheduled from the scheduler, DisruptionTarget, readiness
 *   gates' conditions) is kept as it is; PodScheduled is added when missing;
 * - lastTransitionTime is kept from the previous condition when its status
 *   did not change.
 */
import type { ContainerStatus, Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import { rfc3339 } from '../util/clock/clock.js';
import { imageID, normalizeImage } from './image.js';
import type { ContainerSim, PodRuntime, Terminated } from './pod-runtime.js';

/** Condition types written by the kubelet. */
export const KUBELET_CONDITIONS: readonly string[] = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'];

export interface PodNetwork {
  hostIP: string;
  /** Empty until assigned. */
  podIP: string;
}

function terminatedStatus(t: Terminated) {
  return {
    exitCode: t.exitCode,
    reason: t.reason,
    ...(t.message ? { message: t.message } : {}),
    startedAt: rfc3339(t.startedAt),
    finishedAt: rfc3339(t.finishedAt),
    containerID: `kcm://${t.id}`,
  };
}

/** One entry of containerStatuses / initContainerStatuses. */
export function containerStatus(rt: PodRuntime, c: ContainerSim, now: number): ContainerStatus {
  const s = c.state;
  const image = c.spec.image ?? '';
  const out: ContainerStatus = {
    name: c.name,
    image: c.everStarted ? normalizeImage(image) : image,
    imageID: c.everStarted ? imageID(image) : '',
    // A completed regular init container reports ready (prober manager UpdatePodStatus).
    ready: c.init && !c.sidecar ? s.kind === 'terminated' && s.exitCode === 0 : rt.isReady(c, now),
    restartCount: c.restartCount,
    started: rt.isStarted(c, now),
    state: {},
    lastState: c.lastTerminated ? { terminated: terminatedStatus(c.lastTerminated) } : {},
  };
  switch (s.kind) {
    case 'waiting':
      out.state = { waiting: s.message ? { reason: s.reason, message: s.message } : { reason: s.reason } };
      if (c.lastTerminated) out.containerID = `kcm://${c.lastTerminated.id}`;
      break;
    case 'running':
      out.state = { running: { startedAt: rfc3339(s.startedAt) } };
      out.containerID = `kcm://${s.id}`;
      break;
    case 'terminated':
      out.state = { terminated: terminatedStatus(s) };
      out.containerID = `kcm://${s.id}`;
      break;
    default: {
      const never: never = s;
      throw new Error(`unknown container state ${JSON.stringify(never)}`);
    }
  }
  return out;
}

function names(cs: ContainerSim[]): string {
  return `[${cs.map((c) => c.name).join(' ')}]`;
}

/**
 * The phase the kubelet reports: a terminal phase only once no container can
 * still be running (status manager: a pod transitioning to a terminal phase
 * keeps its previous phase while its containers stop).
 */
export function reportedPhase(rt: PodRuntime, pod: Pod): PodStatus['phase'] {
  if (rt.terminal && !rt.settled) return pod.status?.phase === 'Pending' ? 'Pending' : 'Running';
  return rt.phase;
}

/** The kubelet-owned conditions (without timestamps). */
export function kubeletConditions(rt: PodRuntime, pod: Pod, now: number, phase: PodStatus['phase'] = reportedPhase(rt, pod)): PodCondition[] {
  const out: PodCondition[] = [];
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  out.push({ type: 'PodReadyToStartContainers', status: rt.sandboxReadyAt !== undefined && !terminal ? 'True' : 'False' });

  const incompleteInit = rt.initContainers.filter((c) => (c.sidecar ? !rt.isStarted(c, now) : !(c.state.kind === 'terminated' && c.state.exitCode === 0)));
  // Once a regular container has run, the pod stays initialized (kubelet HasAnyRegularContainerStarted).
  const regularStarted = rt.containers.some((c) => c.state.kind === 'running' || c.state.kind === 'terminated');
  if (phase === 'Succeeded') out.push({ type: 'Initialized', status: 'True', reason: 'PodCompleted' });
  else if (incompleteInit.length === 0 || regularStarted) out.push({ type: 'Initialized', status: 'True' });
  else out.push({ type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: ${names(incompleteInit)}` });

  let containersReady: PodCondition;
  if (terminal) {
    containersReady = { type: 'ContainersReady', status: 'False', reason: phase === 'Failed' ? 'PodFailed' : 'PodCompleted' };
  } else {
    // Sidecars and regular containers only (status.GenerateContainersReadyCondition).
    const unready = [...rt.initContainers.filter((c) => c.sidecar), ...rt.containers].filter((c) => !rt.isReady(c, now));
    if (unready.length > 0) {
      containersReady = { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: ${names(unready)}` };
    } else containersReady = { type: 'ContainersReady', status: 'True' };
  }
  out.push(containersReady);

  let ready: PodCondition = { ...containersReady, type: 'Ready' };
  if (ready.status === 'True') {
    const gates = pod.spec?.readinessGates ?? [];
    const missing: string[] = [];
    for (const g of gates) {
      const cond = pod.status?.conditions?.find((c) => c.type === g.conditionType);
      if (!cond) missing.push(`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`);
      else if (cond.status !== 'True') missing.push(`the status of pod readiness gate "${g.conditionType}" is not "True", but ${cond.status}`);
    }
    if (missing.length > 0) ready = { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: missing.join(', ') };
  }
  out.push(ready);
  return out;
}

/** Merges computed conditions into the pod's existing ones, keeping transition times and foreign conditions. */
export function mergeConditions(existing: readonly PodCondition[] | undefined, computed: PodCondition[], now: number): PodCondition[] {
  const old = new Map((existing ?? []).map((c) => [c.type, c]));
  const ts = rfc3339(now);
  const out: PodCondition[] = [];
  const stamp = (c: PodCondition): PodCondition => {
    const prev = old.get(c.type);
    const lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : ts;
    return { ...c, lastTransitionTime };
  };
  for (const c of computed) out.push(stamp(c));
  if (!old.has('PodScheduled')) out.push(stamp({ type: 'PodScheduled', status: 'True' }));
  for (const c of existing ?? []) if (!KUBELET_CONDITIONS.includes(c.type) && !computed.some((x) => x.type === c.type)) out.push(c);
  // Upstream order: PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled, then others.
  const order = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
  const rank = (t: string) => {
    const i = order.indexOf(t);
    return i < 0 ? order.length : i;
  };
  return out.sort((a, b) => rank(a.type) - rank(b.type));
}

/** The full status to write for `pod` now. */
export function buildPodStatus(rt: PodRuntime, pod: Pod, net: PodNetwork, now: number): PodStatus {
  if (rt.rejected) {
    // kubelet rejectPod: the status manager keeps the start time and the conditions it does not own.
    const rejected: PodStatus = {
      phase: 'Failed',
      conditions: mergeConditions(pod.status?.conditions, [], now),
      reason: rt.statusReason!.reason,
      message: rt.statusReason!.message,
      startTime: pod.status?.startTime ?? rfc3339(rt.admittedAt),
    };
    if (pod.status?.qosClass) rejected.qosClass = pod.status.qosClass;
    return rejected;
  }
  const phase = reportedPhase(rt, pod);
  const computed = kubeletConditions(rt, pod, now, phase);
  if (rt.disruption) computed.push({ type: 'DisruptionTarget', status: 'True', reason: rt.disruption.reason, message: rt.disruption.message });
  const status: PodStatus = {
    phase,
    conditions: mergeConditions(pod.status?.conditions, computed, now),
    hostIP: net.hostIP,
    hostIPs: [{ ip: net.hostIP }],
    startTime: pod.status?.startTime ?? rfc3339(rt.admittedAt),
    containerStatuses: rt.containers.map((c) => containerStatus(rt, c, now)),
  };
  if (rt.initContainers.length > 0) status.initContainerStatuses = rt.initContainers.map((c) => containerStatus(rt, c, now));
  const ip = pod.spec?.hostNetwork ? net.hostIP : net.podIP;
  if (rt.sandboxReadyAt !== undefined && ip) {
    status.podIP = ip;
    status.podIPs = [{ ip }];
  }
  if (rt.statusReason && phase === rt.phase) {
    status.reason = rt.statusReason.reason;
    status.message = rt.statusReason.message;
  }
  if (pod.status?.qosClass) status.qosClass = pod.status.qosClass;
  if (pod.status?.nominatedNodeName) status.nominatedNodeName = pod.status.nominatedNodeName;
  return status;
}
