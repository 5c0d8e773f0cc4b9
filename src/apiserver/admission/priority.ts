/**
 * Priority admission for pods: resolves spec.priority (and preemptionPolicy)
 * from spec.priorityClassName, or from the globalDefault PriorityClass, or 0.
 * Unknown classes and a hand-set priority that disagrees are refused (403).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PriorityClass } from 'kubernetes-types/scheduling/v1.js';
import { type AdmissionPlugin, type ObjectReader, onlyWhen, writes } from './admission.js';
import { forbidden } from '../status.js';

/** Classes kube-apiserver creates at start. */
export const systemPriorityClasses: readonly PriorityClass[] = [
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical' }, value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.', preemptionPolicy: 'PreemptLowerPriority' },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-cluster-critical' }, value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.', preemptionPolicy: 'PreemptLowerPriority' },
];

export interface PriorityClassLister {
  list(): Promise<PriorityClass[]>;
}

export function newPriorityAdmission(reader: ObjectReader, classes: PriorityClassLister): AdmissionPlugin {
  return {
    name: 'Priority',
    admit: onlyWhen(writes('CREATE', '', 'pods'), async (a) => {
      const pod = a.object as Pod;
      if (!pod.spec) return;
      let value = 0;
      let policy: string | undefined = 'PreemptLowerPriority';
      const name = pod.spec.priorityClassName;
      if (name) {
        const pc = (await reader.get('scheduling.k8s.io', 'priorityclasses', '', name)) as PriorityClass | undefined;
        if (!pc) throw forbidden(a.resource, a.name, `no PriorityClass with name ${name} was found`);
        value = pc.value;
        policy = pc.preemptionPolicy ?? policy;
      } else {
        const def = (await classes.list()).filter((pc) => pc.globalDefault).sort((x, y) => x.value - y.value)[0];
        if (def) {
          pod.spec.priorityClassName = def.metadata!.name!;
          value = def.value;
          policy = def.preemptionPolicy ?? policy;
        }
      }
      if (pod.spec.priority !== undefined && pod.spec.priority !== null && pod.spec.priority !== value) {
        throw forbidden(a.resource, a.name, `the integer value of priority (${pod.spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`);
      }
      pod.spec.priority = value;
      if (pod.spec.preemptionPolicy && policy && pod.spec.preemptionPolicy !== policy) {
        throw forbidden(a.resource, a.name, `the string value of PreemptionPolicy (${pod.spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
      }
      if (policy) pod.spec.preemptionPolicy = policy;
    }),
  };
}
