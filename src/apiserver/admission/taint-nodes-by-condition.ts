/**
 * TaintNodesByCondition: new nodes start with the not-ready NoSchedule taint;
 * the node lifecycle controller removes it once the node reports Ready.
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { type AdmissionPlugin, writes } from './admission.js';

const createsNode = writes('CREATE', '', 'nodes');

export function newTaintNodesByCondition(): AdmissionPlugin {
  return {
    name: 'TaintNodesByCondition',
    admit(a) {
      if (!createsNode(a)) return;
      const node = a.object as Node;
      node.spec ??= {};
      const taints = node.spec.taints ?? [];
      if (!taints.some((t) => t.key === 'node.kubernetes.io/not-ready' && t.effect === 'NoSchedule')) {
        node.spec.taints = [...taints, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }];
      }
    },
  };
}
