/**
 * The pod nominator (PodNominator): pending pods that preemption nominated
 * to a node (status.nominatedNodeName), kept by node so that scheduling
 * other pods counts them as if placed there when they have at least the
 * same priority (the room their preemption freed is theirs).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { newPodInfo, podKey, type PodInfo } from './node-info.js';

export interface PodNominator {
  /** Records the pod as nominated to `node` (replacing an earlier nomination). */
  add(pod: Pod, node: string): void;
  /**
   * Follows a pending pod's informer copies: a nominatedNodeName set or
   * changed is taken; one removed removes the nomination; a pod that never
   * showed one keeps the nomination made in this process (its status patch
   * may not have arrived yet).
   */
  update(oldPod: Pod | undefined, pod: Pod): void;
  delete(pod: Pod): void;
  /** The pods nominated to `node`. */
  podsForNode(node: string): readonly PodInfo[];
  nominatedNode(pod: Pod): string | undefined;
}

class Nominator implements PodNominator {
  private readonly byNode = new Map<string, Map<string, PodInfo>>();
  private readonly nodeOf = new Map<string, string>();

  add(pod: Pod, node: string): void {
    this.delete(pod);
    if (!node) return;
    const key = podKey(pod);
    let pods = this.byNode.get(node);
    if (!pods) this.byNode.set(node, (pods = new Map()));
    pods.set(key, newPodInfo(pod));
    this.nodeOf.set(key, node);
  }

  update(oldPod: Pod | undefined, pod: Pod): void {
    const node = pod.status?.nominatedNodeName;
    if (node) this.add(pod, node);
    else if (oldPod?.status?.nominatedNodeName) this.delete(pod);
    else {
      const cur = this.nodeOf.get(podKey(pod));
      if (cur !== undefined) this.add(pod, cur);
    }
  }

  delete(pod: Pod): void {
    const key = podKey(pod);
    const node = this.nodeOf.get(key);
    if (node === undefined) return;
    this.nodeOf.delete(key);
    const pods = this.byNode.get(node);
    pods?.delete(key);
    if (pods?.size === 0) this.byNode.delete(node);
  }

  podsForNode(node: string): readonly PodInfo[] {
    const pods = this.byNode.get(node);
    return pods ? [...pods.values()] : NO_PODS;
  }

  nominatedNode(pod: Pod): string | undefined {
    return this.nodeOf.get(podKey(pod));
  }
}

/** Shared by every node without nominated pods (the scheduler asks for each node it filters). */
const NO_PODS: readonly PodInfo[] = Object.freeze([]);

export function newPodNominator(): PodNominator {
  return new Nominator();
}
