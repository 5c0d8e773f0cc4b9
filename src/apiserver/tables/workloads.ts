/** Printers of the apps, batch, autoscaling and policy kinds (upstream printers.go). */
import { parseTime } from '../../util/clock/clock.js';
import { humanDuration } from '../table.js';
import { ageColumn, col, int, nameColumn, since, templateColumns, formatLabels, type Loose } from './columns.js';

const podSpec = (o: Loose) => o.spec?.template?.spec;
const selector = (o: Loose) => o.spec?.selector;

export const deploymentColumns = [
  nameColumn,
  col('Ready', 'string', 'Number of the pod with ready state', (o) => `${int(o.status?.readyReplicas)}/${int(o.spec?.replicas)}`),
  col('Up-to-date', 'integer', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', (o) => int(o.status?.updatedReplicas)),
  col('Available', 'integer', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', (o) => int(o.status?.availableReplicas)),
  ageColumn,
  ...templateColumns(podSpec, selector),
];

export const replicaSetColumns = [
  nameColumn,
  col('Desired', 'integer', 'Number of desired pods.', (o) => int(o.spec?.replicas)),
  col('Current', 'integer', 'Number of actual replicas.', (o) => int(o.status?.replicas)),
  col('Ready', 'integer', 'Number of ready replicas.', (o) => int(o.status?.readyReplicas)),
  ageColumn,
  ...templateColumns(podSpec, selector),
];

export const statefulSetColumns = [
  nameColumn,
  col('Ready', 'string', 'Number of the pod with ready state', (o) => `${int(o.status?.readyReplicas)}/${int(o.spec?.replicas)}`),
  ageColumn,
  ...templateColumns(podSpec),
];

export const daemonSetColumns = [
  nameColumn,
  col('Desired', 'integer', 'The total number of nodes that should be running the daemon pod.', (o) => int(o.status?.desiredNumberScheduled)),
  col('Current', 'integer', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', (o) => int(o.status?.currentNumberScheduled)),
  col('Ready', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.', (o) => int(o.status?.numberReady)),
  col('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod.', (o) => int(o.status?.updatedNumberScheduled)),
  col('Available', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.', (o) => int(o.status?.numberAvailable)),
  col('Node Selector', 'string', 'NodeSelector is a selector which must be true for the pod to fit on a node.', (o) => formatLabels(o.spec?.template?.spec?.nodeSelector)),
  ageColumn,
  ...templateColumns(podSpec, selector),
];

const hasCondition = (o: Loose, type: string) => ((o.status?.conditions ?? []) as Loose[]).some((c) => c.type === type && c.status === 'True');

/** The STATUS of a job (printJob). */
export function jobStatus(o: Loose): string {
  if (hasCondition(o, 'Complete')) return 'Complete';
  if (hasCondition(o, 'Failed')) return 'Failed';
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  if (hasCondition(o, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(o, 'Suspended')) return 'Suspended';
  if (hasCondition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

export function jobCompletions(o: Loose): string {
  const succeeded = int(o.status?.succeeded);
  const completions = o.spec?.completions;
  const parallelism = o.spec?.parallelism;
  if (completions !== undefined && completions !== null) return `${succeeded}/${completions}`;
  if (parallelism === undefined || parallelism === null) return `${succeeded}/1`;
  if (parallelism > 1) return `${succeeded}/1 of ${parallelism}`;
  return `${succeeded}/1`;
}

export function jobDuration(o: Loose, nowMs: number): string {
  const start = parseTime(o.status?.startTime ?? undefined);
  if (start === undefined) return '';
  const end = parseTime(o.status?.completionTime ?? undefined);
  return humanDuration((end ?? nowMs) - start);
}

export const jobColumns = [
  nameColumn,
  col('Status', 'string', 'Status of the job.', jobStatus),
  col('Completions', 'string', 'The completion status of the job.', jobCompletions),
  col('Duration', 'string', 'Time required to complete the job.', jobDuration),
  ageColumn,
  ...templateColumns(podSpec, selector),
];

export const cronJobColumns = [
  nameColumn,
  col('Schedule', 'string', 'The schedule in Cron format.', (o) => o.spec?.schedule ?? ''),
  col('Timezone', 'string', 'The time zone for the schedule.', (o) => o.spec?.timeZone ?? '<none>'),
  col('Suspend', 'boolean', 'Whether subsequent executions are suspended.', (o) => (o.spec?.suspend === undefined || o.spec?.suspend === null ? '<unset>' : o.spec.suspend ? 'True' : 'False')),
  col('Active', 'integer', 'Number of currently running jobs.', (o) => (o.status?.active ?? []).length),
  col('Last Schedule', 'string', 'When the job was last successfully scheduled.', (o, now) => (o.status?.lastScheduleTime ? since(o.status.lastScheduleTime, now) : '<none>')),
  ageColumn,
  ...templateColumns((o) => o.spec?.jobTemplate?.spec?.template?.spec, (o) => o.spec?.jobTemplate?.spec?.selector),
];

export const controllerRevisionColumns = [
  nameColumn,
  col('Controller', 'string', 'Controller of the object.', (o) => {
    const ref = ((o.metadata?.ownerReferences ?? []) as Loose[]).find((r) => r.controller);
    if (!ref) return '<none>';
    const group = String(ref.apiVersion ?? '').includes('/') ? String(ref.apiVersion).split('/')[0] : '';
    return `${String(ref.kind).toLowerCase()}${group ? `.${group}` : ''}/${ref.name}`;
  }),
  col('Revision', 'integer', 'Revision of the ControllerRevision.', (o) => int(o.revision)),
  ageColumn,
];

function hpaTargets(o: Loose): string {
  const metrics: Loose[] = o.spec?.metrics ?? [];
  const current: Loose[] = o.status?.currentMetrics ?? [];
  if (!metrics.length) return '<none>';
  const parts = metrics.map((m, i) => {
    const cur = current[i];
    if (m.type === 'Resource' && m.resource) {
      const t = m.resource.target ?? {};
      const c = cur?.resource?.current;
      if (t.averageUtilization !== undefined) return `${m.resource.name}: ${c?.averageUtilization !== undefined ? `${c.averageUtilization}%` : '<unknown>'}/${t.averageUtilization}%`;
      return `${m.resource.name}: ${c?.averageValue ?? '<unknown>'}/${t.averageValue ?? t.value ?? '<unknown>'}`;
    }
    return `<unknown>/<unknown>`;
  });
  const shown = parts.slice(0, 2).join(', ');
  return parts.length > 2 ? `${shown} + ${parts.length - 2} more...` : shown;
}

export const hpaColumns = [
  nameColumn,
  col('Reference', 'string', 'Reference to the target resource.', (o) => `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}`),
  col('Targets', 'string', 'Current and target metrics.', hpaTargets),
  col('MinPods', 'string', 'Lower limit for the number of pods.', (o) => String(o.spec?.minReplicas ?? 1)),
  col('MaxPods', 'string', 'Upper limit for the number of pods.', (o) => String(int(o.spec?.maxReplicas))),
  col('Replicas', 'string', 'Current number of replicas of pods managed by this autoscaler.', (o) => String(int(o.status?.currentReplicas))),
  ageColumn,
];

const intOrString = (v: unknown) => (v === undefined || v === null ? 'N/A' : String(v));

export const pdbColumns = [
  nameColumn,
  col('Min Available', 'string', 'The minimum number of pods that must be available.', (o) => intOrString(o.spec?.minAvailable)),
  col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.', (o) => intOrString(o.spec?.maxUnavailable)),
  col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.', (o) => int(o.status?.disruptionsAllowed)),
  ageColumn,
];
