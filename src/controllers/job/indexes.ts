/**
 * Completion indexes of Indexed Jobs (pkg/controller/job/indexed_job_utils.go):
 * the `completedIndexes` / `failedIndexes` interval strings ("1,3-5"), the
 * index annotation and label, and which indexes still need a pod.
 */
import type { Job, SuccessPolicy } from 'kubernetes-types/batch/v1.js';
import type { Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { JOB_COMPLETION_INDEX_ANNOTATION, JOB_COMPLETION_INDEX_ENV } from './job-util.js';

/** Disjoint, ascending, non-adjacent closed intervals [first, last]. */
export type Intervals = Array<[number, number]>;

export function intervalsTotal(iv: Intervals): number {
  let n = 0;
  for (const [a, b] of iv) n += b - a + 1;
  return n;
}

export function intervalsHas(iv: Intervals, x: number): boolean {
  return iv.some(([a, b]) => a <= x && x <= b);
}

/** "1,3-5,7": the representation Kubernetes stores. */
export function formatIntervals(iv: Intervals): string {
  return iv.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');
}

/** Intervals from a set of indexes. */
export function intervalsFromIndexes(indexes: Iterable<number>): Intervals {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const out: Intervals = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x === last[1] + 1) last[1] = x;
    else out.push([x, x]);
  }
  return out;
}

/** Adds indexes to intervals (withOrderedIndexes), merging neighbours. */
export function withIndexes(iv: Intervals, indexes: Iterable<number>): Intervals {
  const all: number[] = [];
  for (const [a, b] of iv) for (let x = a; x <= b; x++) all.push(x);
  for (const x of indexes) all.push(x);
  return intervalsFromIndexes(all);
}

/**
 * Parses an interval string, dropping indexes >= completions; returns what
 * parsed before the first malformed element (parseIndexesFromString).
 */
export function parseIntervals(s: string | undefined | null, completions: number): Intervals {
  const out: Intervals = [];
  if (!s) return out;
  for (const part of s.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) break;
    const a = Number(m[1]);
    let b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) break;
    if (a >= completions) break;
    b = Math.min(b, completions - 1);
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The pod's completion index, or -1 when missing or invalid. */
export function getCompletionIndex(pod: Pod): number {
  const v = pod.metadata?.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION];
  if (v === undefined || !/^\d+$/.test(v)) return -1;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : -1;
}

/** A valid index below completions. */
export function hasValidIndex(pod: Pod, job: Job): boolean {
  const ix = getCompletionIndex(pod);
  return ix >= 0 && ix < (job.spec?.completions ?? 0);
}

/**
 * Adds JOB_COMPLETION_INDEX (from the index annotation) to every container
 * and init container that does not set it (addCompletionIndexEnvVariables).
 */
export function addCompletionIndexEnv(template: PodTemplateSpec): void {
  const spec = template.spec;
  if (!spec) return;
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    c.env ??= [];
    if (c.env.some((e) => e.name === JOB_COMPLETION_INDEX_ENV)) continue;
    c.env.push({
      name: JOB_COMPLETION_INDEX_ENV,
      valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX_ANNOTATION}']` } },
    });
  }
}

/** The template of the pod for `index`: annotation, label and hostname `<job>-<index>`. */
export function applyCompletionIndex(template: PodTemplateSpec, jobName: string, index: number): void {
  template.metadata ??= {};
  template.metadata.annotations = { ...(template.metadata.annotations ?? {}), [JOB_COMPLETION_INDEX_ANNOTATION]: String(index) };
  template.metadata.labels = { ...(template.metadata.labels ?? {}), [JOB_COMPLETION_INDEX_ANNOTATION]: String(index) };
  if (template.spec) template.spec.hostname = `${jobName}-${index}`;
}

/** generateName of an indexed pod: `<job>-<index>-` (podGenerateNameWithIndex, trimmed to fit). */
export function podGenerateNameWithIndex(jobName: string, index: number): string {
  const appendix = `-${index}-`;
  const maxPrefix = 63 - 5 - appendix.length; // leave room for the random suffix
  return (jobName.length > maxPrefix ? jobName.slice(0, maxPrefix) : jobName) + appendix;
}

/**
 * Up to `count` lowest indexes below completions that are neither
 * succeeded, failed, nor held by a pod in `busy` (firstPendingIndexes).
 */
export function firstPendingIndexes(completions: number, count: number, nonPending: Intervals, busy: readonly Pod[]): number[] {
  const taken = new Set<number>();
  for (const p of busy) {
    const ix = getCompletionIndex(p);
    if (ix >= 0) taken.add(ix);
  }
  const out: number[] = [];
  for (let ix = 0; ix < completions && out.length < count; ix++) {
    if (taken.has(ix) || intervalsHas(nonPending, ix)) continue;
    out.push(ix);
  }
  return out;
}

/**
 * Active pods to delete because their index is invalid or repeated: of pods
 * sharing an index all but the one `keepLess` orders last are removed
 * (appendDuplicatedIndexPodsForRemoval). Returns [remove, keep].
 */
export function duplicatedIndexPods<P extends Pod>(pods: readonly P[], completions: number, keepLess: (a: Pod, b: Pod) => boolean): [P[], P[]] {
  const rm: P[] = [];
  const keep: P[] = [];
  const byIndex = new Map<number, P[]>();
  for (const p of pods) {
    const ix = getCompletionIndex(p);
    if (ix < 0 || ix >= completions) {
      rm.push(p);
      continue;
    }
    const list = byIndex.get(ix) ?? [];
    list.push(p);
    byIndex.set(ix, list);
  }
  for (const ix of [...byIndex.keys()].sort((a, b) => a - b)) {
    const list = byIndex.get(ix)!;
    list.sort((a, b) => (keepLess(a, b) ? -1 : keepLess(b, a) ? 1 : 0));
    rm.push(...list.slice(0, -1));
    keep.push(list[list.length - 1]!);
  }
  return [rm, keep];
}

/**
 * Whether succeeded indexes satisfy the Job's successPolicy: the message
 * `Matched rules at index <i>` of the first rule met (matchSuccessPolicy).
 */
export function matchSuccessPolicy(policy: SuccessPolicy | undefined, completions: number, succeeded: Intervals): string | undefined {
  if (!policy || intervalsTotal(succeeded) === 0) return undefined;
  for (let i = 0; i < policy.rules.length; i++) {
    const rule = policy.rules[i]!;
    if (rule.succeededIndexes != null) {
      const required = parseIntervals(rule.succeededIndexes, completions);
      if (required.length === 0) continue;
      let matched = 0;
      for (const [a, b] of required) for (let x = a; x <= b; x++) if (intervalsHas(succeeded, x)) matched++;
      const want = rule.succeededCount ?? intervalsTotal(required);
      if (matched >= want) return `Matched rules at index ${i}`;
    } else if (rule.succeededCount != null && intervalsTotal(succeeded) >= rule.succeededCount) {
      return `Matched rules at index ${i}`;
    }
  }
  return undefined;
}
