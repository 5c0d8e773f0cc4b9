/**
 * The pods printer: upstream printPod, including the STATUS reason
 * (Init:1/2, ContainerCreating, CrashLoopBackOff, Completed, Error,
 * Terminating, ...) and RESTARTS with the time of the last restart.
 */
import { parseTime } from '../../util/clock/clock.js';
import { humanDuration } from '../table.js';
import { ageColumn, col, nameColumn, type Loose } from './columns.js';

const nodeUnreachablePodReason = 'NodeLost';

export interface PodSummary {
  ready: string;
  status: string;
  restarts: string;
}

function lastTermination(cs: Loose): number | undefined {
  return parseTime(cs?.lastState?.terminated?.finishedAt ?? undefined);
}

/** READY, STATUS and RESTARTS of a pod as kubectl prints them. */
export function podSummary(pod: Loose, nowMs: number): PodSummary {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  let restarts = 0;
  let restartableInitRestarts = 0;
  let totalContainers = (spec.containers ?? []).length;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  let lastRestartableInitRestart: number | undefined;
  const later = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

  let reason: string = status.phase ?? '';
  if (status.reason) reason = status.reason;
  for (const c of status.conditions ?? []) if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';

  const initSpecs = new Map<string, Loose>(((spec.initContainers ?? []) as Loose[]).map((c) => [c.name, c]));
  const restartable = (name: string) => initSpecs.get(name)?.restartPolicy === 'Always';
  for (const c of spec.initContainers ?? []) if (c.restartPolicy === 'Always') totalContainers++;

  const initStatuses: Loose[] = status.initContainerStatuses ?? [];
  for (const cs of initStatuses) {
    restarts += cs.restartCount ?? 0;
    lastRestart = later(lastRestart, lastTermination(cs));
    if (restartable(cs.name)) {
      restartableInitRestarts += cs.restartCount ?? 0;
      lastRestartableInitRestart = later(lastRestartableInitRestart, lastTermination(cs));
    }
  }
  let initializing = false;
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const st = cs.state ?? {};
    if (st.terminated && st.terminated.exitCode === 0) continue;
    if (restartable(cs.name) && cs.started) {
      if (cs.ready) readyContainers++;
      continue;
    }
    if (st.terminated) {
      if (!st.terminated.reason) reason = st.terminated.signal ? `Init:Signal:${st.terminated.signal}` : `Init:ExitCode:${st.terminated.exitCode}`;
      else reason = `Init:${st.terminated.reason}`;
    } else if (st.waiting && st.waiting.reason && st.waiting.reason !== 'PodInitializing') {
      reason = `Init:${st.waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }
  const initializedTrue = (status.conditions ?? []).some((c: Loose) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initializedTrue) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses: Loose[] = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      const st = cs.state ?? {};
      restarts += cs.restartCount ?? 0;
      lastRestart = later(lastRestart, lastTermination(cs));
      if (st.waiting && st.waiting.reason) reason = st.waiting.reason;
      else if (st.terminated && st.terminated.reason) reason = st.terminated.reason;
      else if (st.terminated && !st.terminated.reason) reason = st.terminated.signal ? `Signal:${st.terminated.signal}` : `ExitCode:${st.terminated.exitCode}`;
      else if (cs.ready && st.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const readyCond = (status.conditions ?? []).some((c: Loose) => c.type === 'Ready' && c.status === 'True');
      reason = readyCond ? 'Running' : 'NotReady';
    }
  }
  const phase = status.phase;
  if (pod.metadata?.deletionTimestamp && status.reason === nodeUnreachablePodReason) reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart !== undefined) restartsText = `${restarts} (${humanDuration(nowMs - lastRestart)} ago)`;
  return { ready: `${readyContainers}/${totalContainers}`, status: reason, restarts: restartsText };
}

export const podColumns = [
  nameColumn,
  col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.', (o, now) => podSummary(o, now).ready),
  col('Status', 'string', 'The aggregate status of the containers in this pod.', (o, now) => podSummary(o, now).status),
  col('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.', (o, now) => podSummary(o, now).restarts),
  ageColumn,
  col('IP', 'string', 'The IP address assigned to the pod.', (o) => o.status?.podIPs?.[0]?.ip ?? o.status?.podIP ?? '<none>', 1),
  col('Node', 'string', 'The node that the pod is assigned to.', (o) => o.spec?.nodeName || '<none>', 1),
  col('Nominated Node', 'string', 'The node that the pod is nominated to run on.', (o) => o.status?.nominatedNodeName || '<none>', 1),
  col('Readiness Gates', 'string', 'The readiness gates of the pod.', (o) => {
    const gates: Loose[] = o.spec?.readinessGates ?? [];
    if (!gates.length) return '<none>';
    const conds: Loose[] = o.status?.conditions ?? [];
    const ok = gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length;
    return `${ok}/${gates.length}`;
  }, 1),
];
