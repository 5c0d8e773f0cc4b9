/**
 * batch/v1: jobs and cronjobs (pkg/registry/batch/*, pkg/apis/batch/v1/defaults.go,
 * pkg/apis/batch/validation).
 */
import type { JobSpec, CronJobSpec } from 'kubernetes-types/batch/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { Strategy } from './strategy.js';
import { type FieldError, GoLiteral, invalid, required } from '../../api/validation.js';
import { newStrategy, child, dflt, dfltZero, meta, items } from './generic.js';
import { defaultPodTemplate, validatePodTemplate } from './pod-spec.js';
import { nonNegative, oneOf, deepEqual, immutableMessage, goLabelSelector, immutable } from './meta-validation.js';
import { specOf, validateSelectorAndTemplate } from './workload.js';

type Obj = Record<string, unknown>;

export const jobNameLabel = 'batch.kubernetes.io/job-name';
export const legacyJobNameLabel = 'job-name';
export const controllerUidLabel = 'batch.kubernetes.io/controller-uid';
export const legacyControllerUidLabel = 'controller-uid';

const maxInt32 = 2147483647;

function defaultJobSpec(s: Obj): void {
  if (s.completions == null && s.parallelism == null) {
    s.completions = 1;
    s.parallelism = 1;
  }
  dflt(s, 'parallelism', 1);
  if (s.backoffLimit == null) s.backoffLimit = s.backoffLimitPerIndex != null ? maxInt32 : 6;
  dflt(s, 'completionMode', 'NonIndexed');
  dflt(s, 'suspend', false);
  dflt(s, 'podReplacementPolicy', s.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed');
  for (const r of items(s.podFailurePolicy, 'rules')) {
    for (const c of items(r, 'onPodConditions')) dfltZero(c, 'status', 'True');
  }
  defaultPodTemplate(s.template as never);
}

function templateLabels(obj: KubeObject): Record<string, string> | undefined {
  return ((specOf(obj).template as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
}

/**
 * generateSelector: unless spec.manualSelector, the template gets job-name and
 * controller-uid labels (new and legacy keys) and the selector the uid label.
 */
export function generateJobSelector(obj: KubeObject): void {
  const s = child(obj, 'spec');
  if (s.manualSelector === true) return;
  const name = obj.metadata?.name ?? '';
  const uid = obj.metadata?.uid ?? '';
  const tmeta = child(child(s, 'template'), 'metadata');
  const labels = (tmeta.labels ??= {}) as Record<string, string>;
  for (const [k, v] of [
    [jobNameLabel, name],
    [legacyJobNameLabel, name],
    [controllerUidLabel, uid],
    [legacyControllerUidLabel, uid],
  ]) {
    if (labels[k] === undefined) labels[k] = v;
  }
  const sel = child(s, 'selector');
  const ml = (sel.matchLabels ??= {}) as Record<string, string>;
  if (ml[controllerUidLabel] === undefined) ml[controllerUidLabel] = uid;
}

function validateJobSpec(s: Obj & JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [
    ...nonNegative(s.parallelism, `${path}.parallelism`),
    ...nonNegative(s.completions, `${path}.completions`),
    ...nonNegative(s.backoffLimit, `${path}.backoffLimit`),
    ...nonNegative(s.ttlSecondsAfterFinished, `${path}.ttlSecondsAfterFinished`),
    ...oneOf(s.completionMode, ['NonIndexed', 'Indexed'], `${path}.completionMode`, false),
    ...oneOf(s.podReplacementPolicy, ['TerminatingOrFailed', 'Failed'], `${path}.podReplacementPolicy`, false),
  ];
  if (s.activeDeadlineSeconds != null && s.activeDeadlineSeconds <= 0) {
    errs.push(invalid(`${path}.activeDeadlineSeconds`, s.activeDeadlineSeconds, 'must be greater than or equal to 1'));
  }
  if (s.completionMode === 'Indexed' && s.completions == null) {
    errs.push(required(`${path}.completions`, 'when completion mode is Indexed'));
  }
  errs.push(...validatePodTemplate(s.template, `${path}.template`, ['OnFailure', 'Never']));
  return errs;
}

function jobStrategy(): Strategy {
  return newStrategy({
    group: 'batch',
    kind: 'Job',
    resource: 'jobs',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    // batch/v1 keeps the pre-GC behaviour: pods are orphaned unless asked.
    defaultDeletePropagation: 'Orphan',
    defaults(obj) {
      const s = child(obj, 'spec');
      const m = meta(obj);
      const tl = templateLabels(obj);
      if ((!m.labels || Object.keys(m.labels).length === 0) && tl && Object.keys(tl).length > 0) m.labels = { ...tl };
      defaultJobSpec(s);
    },
    prepareForCreate(obj) {
      generateJobSelector(obj);
      // Job labels default to the (now generated) template labels, as a stored job reads back.
      const m = meta(obj);
      const tl = templateLabels(obj);
      if ((!m.labels || Object.keys(m.labels).length === 0) && tl) m.labels = { ...tl };
    },
    validate(obj) {
      const s = specOf(obj) as Obj & JobSpec;
      const errs = validateJobSpec(s, 'spec');
      if (!s.selector) errs.push(required('spec.selector', ''));
      else errs.push(...validateSelectorAndTemplate(obj, 'job').filter((e) => e.field !== 'spec.selector' || !e.message.includes('empty selector')));
      if (s.manualSelector !== true && s.selector) {
        const uid = obj.metadata?.uid;
        const ml = s.selector.matchLabels ?? {};
        if (uid && ml[controllerUidLabel] !== undefined && ml[controllerUidLabel] !== uid) {
          errs.push(invalid(`spec.selector.matchLabels[${controllerUidLabel}]`, ml[controllerUidLabel], `must be '${uid}'`));
        }
      }
      return errs;
    },
    validateUpdate(n, o) {
      const ns = specOf(n) as Obj & JobSpec;
      const os = specOf(o) as Obj & JobSpec;
      const errs: FieldError[] = [];
      if (!deepEqual(ns.selector, os.selector)) {
        errs.push(invalid('spec.selector', new GoLiteral(goLabelSelector(ns.selector as LabelSelector | undefined)), immutableMessage));
      }
      if (!deepEqual(ns.template, os.template)) {
        errs.push(invalid('spec.template', new GoLiteral('core.PodTemplateSpec{...}'), immutableMessage));
      }
      if (!(ns.completionMode === 'Indexed' && os.completionMode === 'Indexed' && ns.completions === ns.parallelism)) {
        errs.push(...immutable(ns.completions, os.completions, 'spec.completions'));
      }
      errs.push(...immutable(ns.completionMode, os.completionMode, 'spec.completionMode'));
      errs.push(...immutable(ns.podFailurePolicy, os.podFailurePolicy, 'spec.podFailurePolicy'));
      errs.push(...immutable(ns.backoffLimitPerIndex, os.backoffLimitPerIndex, 'spec.backoffLimitPerIndex'));
      return errs;
    },
    fields: { 'status.successful': (o) => String(((o.status as Obj | undefined)?.succeeded as number | undefined) ?? 0) },
  });
}

const cronDescriptors = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/** A standard 5-field cron schedule, a descriptor, or `@every <duration>`; returns a message or undefined. */
export function cronScheduleError(schedule: string): string | undefined {
  const s = schedule.trim();
  if (/^(CRON_)?TZ=/.test(s)) return 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead';
  if (s.startsWith('@')) {
    if (cronDescriptors.includes(s)) return undefined;
    if (/^@every \d+(\.\d+)?(ns|us|µs|ms|s|m|h)(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))*$/.test(s)) return undefined;
    return `unrecognized descriptor: ${s}`;
  }
  const fields = s.split(/\s+/);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  const ranges: [number, number][] = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];
  const names = [[], [], [], ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'], ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']];
  for (const [i, f] of fields.entries()) {
    for (const part of f.split(',')) {
      const m = /^(\*|\?|[0-9a-zA-Z]+(?:-[0-9a-zA-Z]+)?)(?:\/(\d+))?$/.exec(part);
      if (!m) return `failed to parse int from ${part}`;
      if (m[1] === '*' || m[1] === '?') continue;
      for (const v of m[1].split('-')) {
        const n = /^\d+$/.test(v) ? Number(v) : names[i].indexOf(v.toLowerCase()) + (i === 3 ? 1 : 0);
        if (!/^\d+$/.test(v) && names[i].indexOf(v.toLowerCase()) < 0) return `failed to parse int from ${v}: strconv.Atoi: parsing "${v}": invalid syntax`;
        const [lo, hi] = ranges[i];
        if (n < lo) return `beginning of range (${n}) below minimum (${lo}): ${part}`;
        if (n > hi) return `end of range (${n}) above maximum (${hi}): ${part}`;
      }
    }
  }
  return undefined;
}

function cronJobStrategy(): Strategy {
  return newStrategy({
    group: 'batch',
    kind: 'CronJob',
    resource: 'cronjobs',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    defaults(obj) {
      const s = child(obj, 'spec');
      dfltZero(s, 'concurrencyPolicy', 'Allow');
      dflt(s, 'suspend', false);
      dflt(s, 'successfulJobsHistoryLimit', 3);
      dflt(s, 'failedJobsHistoryLimit', 1);
      // Only the pod template inside the job template is defaulted (JobSpec has no defaulter of its own).
      defaultPodTemplate(child(child(s, 'jobTemplate'), 'spec').template as never);
    },
    validate(obj) {
      const s = specOf(obj) as Obj & CronJobSpec;
      const errs: FieldError[] = [];
      const name = obj.metadata?.name ?? '';
      if (name.length > 52) errs.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
      if (!s.schedule) errs.push(required('spec.schedule', ''));
      else {
        const msg = cronScheduleError(s.schedule);
        if (msg) errs.push(invalid('spec.schedule', s.schedule, msg));
      }
      errs.push(...oneOf(s.concurrencyPolicy, ['Allow', 'Forbid', 'Replace'], 'spec.concurrencyPolicy'));
      errs.push(...nonNegative(s.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
      errs.push(...nonNegative(s.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
      errs.push(...nonNegative(s.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
      const js = (s.jobTemplate?.spec ?? {}) as Obj & JobSpec;
      if (!s.jobTemplate?.spec) errs.push(required('spec.jobTemplate.spec', ''));
      else errs.push(...validateJobSpec(js, 'spec.jobTemplate.spec'));
      return errs;
    },
  });
}

export function batchStrategies(): Strategy[] {
  return [jobStrategy(), cronJobStrategy()];
}
