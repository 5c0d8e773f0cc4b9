/**
 * DefaultTolerationSeconds: pods tolerate `not-ready` and `unreachable`
 * NoExecute taints for 300 s unless they already say something about them.
 */
import type { Pod, Toleration } from 'kubernetes-types/core/v1.js';
import { type AdmissionPlugin, writes } from './admission.js';

const createsPod = writes('CREATE', '', 'pods');

export const notReadyTaintKey = 'node.kubernetes.io/not-ready';
export const unreachableTaintKey = 'node.kubernetes.io/unreachable';

function tolerates(ts: Toleration[], key: string): boolean {
  return ts.some((t) => (t.key === key && (!t.effect || t.effect === 'NoExecute')) || (!t.key && t.operator === 'Exists' && (!t.effect || t.effect === 'NoExecute')));
}

export function newDefaultTolerationSeconds(opts: { notReadySeconds?: number; unreachableSeconds?: number } = {}): AdmissionPlugin {
  const notReady = opts.notReadySeconds ?? 300;
  const unreachable = opts.unreachableSeconds ?? 300;
  return {
    name: 'DefaultTolerationSeconds',
    admit(a) {
      if (!createsPod(a)) return;
      const pod = a.object as Pod;
      if (!pod.spec) return;
      const ts = [...(pod.spec.tolerations ?? [])];
      if (!tolerates(ts, notReadyTaintKey)) ts.push({ key: notReadyTaintKey, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: notReady });
      if (!tolerates(ts, unreachableTaintKey)) ts.push({ key: unreachableTaintKey, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: unreachable });
      pod.spec.tolerations = ts;
    },
  };
}
