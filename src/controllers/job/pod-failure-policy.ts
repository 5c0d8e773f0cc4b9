/**
 * Matching a failed pod against a Job's podFailurePolicy
 * (pkg/controller/job/pod_failure_policy.go). Rules are tried in order; the
 * first that matches decides. Only pods in phase Failed are matched.
 */
import type { Job, PodFailurePolicy } from 'kubernetes-types/batch/v1.js';
import type { ContainerStatus, Pod, PodCondition } from 'kubernetes-types/core/v1.js';

export type PodFailurePolicyAction = 'FailJob' | 'FailIndex' | 'Ignore' | 'Count';

export interface PodFailurePolicyMatch {
  /** The FailJob message, when a FailJob rule matched. */
  jobFailureMessage?: string;
  /** Whether the failure counts toward backoffLimit (false only for Ignore). */
  countFailed: boolean;
  /** The action of the matching rule, undefined when no rule matched. */
  action?: PodFailurePolicyAction;
}

const NO_MATCH: PodFailurePolicyMatch = { countFailed: true };

/** The first container (init containers first) whose non-zero exit code satisfies `req`. */
function matchOnExitCodes(pod: Pod, req: NonNullable<PodFailurePolicy['rules'][number]['onExitCodes']>): ContainerStatus | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const cs of statuses) {
    if (req.containerName && req.containerName !== cs.name) continue;
    const code = cs.state?.terminated?.exitCode;
    if (code === undefined || code === 0) continue;
    const inValues = req.values.includes(code);
    if ((req.operator === 'In' && inValues) || (req.operator === 'NotIn' && !inValues)) return cs;
  }
  return undefined;
}

function matchOnPodConditions(pod: Pod, patterns: NonNullable<PodFailurePolicy['rules'][number]['onPodConditions']>): PodCondition | undefined {
  for (const c of pod.status?.conditions ?? []) {
    for (const p of patterns) {
      if (c.type === p.type && c.status === (p.status ?? 'True')) return c;
    }
  }
  return undefined;
}

/** matchPodFailurePolicy: what the policy says about failed `pod`. */
export function matchPodFailurePolicy(policy: PodFailurePolicy | undefined, pod: Pod): PodFailurePolicyMatch {
  if (!policy || pod.status?.phase !== 'Failed') return NO_MATCH;
  const ns = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  for (let index = 0; index < policy.rules.length; index++) {
    const rule = policy.rules[index]!;
    const action = rule.action as PodFailurePolicyAction;
    let describe: (() => string) | undefined;
    if (rule.onExitCodes) {
      const cs = matchOnExitCodes(pod, rule.onExitCodes);
      if (cs) describe = () => `Container ${cs.name} for pod ${ns}/${name} failed with exit code ${cs.state!.terminated!.exitCode} matching ${action} rule at index ${index}`;
    } else if (rule.onPodConditions) {
      const c = matchOnPodConditions(pod, rule.onPodConditions);
      if (c) describe = () => `Pod ${ns}/${name} has condition ${c.type} matching ${action} rule at index ${index}`;
    }
    if (!describe) continue;
    switch (action) {
      case 'Ignore':
        return { countFailed: false, action };
      case 'Count':
      case 'FailIndex':
        return { countFailed: true, action };
      case 'FailJob':
        return { jobFailureMessage: describe(), countFailed: true, action };
      default:
        continue; // unknown action: the API server rejects these
    }
  }
  return NO_MATCH;
}

/** The FailJob message of the first failed pod matching a FailJob rule (getFailJobMessage). */
export function failJobMessage(job: Job, failedPods: readonly Pod[]): string | undefined {
  if (!job.spec?.podFailurePolicy) return undefined;
  for (const p of failedPods) {
    const m = matchPodFailurePolicy(job.spec.podFailurePolicy, p);
    if (m.jobFailureMessage) return m.jobFailureMessage;
  }
  return undefined;
}
