/**
 * The scheduler's cache (internal/cache): nodes and the pods assigned to them,
 * including pods assumed on a node before their binding is confirmed, so the
 * next decision already counts them.
 *
 * Lifecycle of an assumed pod: assumePod (the decision) -> finishBinding (the
 * binding call returned) -> addPod from the informer confirms it (or
 * forgetPod when the binding failed).
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { NodeChangeLog, newSnapshot, type Snapshot } from './framework.js';
import { addPod, newNodeInfo, newPodInfo, podKey, removePod, replacePod, setNode, type NodeInfo } from './node-info.js';

export interface SchedulerCache {
  addNode(node: Node): void;
  updateNode(node: Node): void;
  removeNode(node: Node): void;
  /** An assigned pod seen by the informer; confirms it if it was assumed. */
  addPod(pod: Pod): void;
  updatePod(oldPod: Pod, newPod: Pod): void;
  removePod(pod: Pod): void;
  /** Places the pod (spec.nodeName set) on its node at once. */
  assumePod(pod: Pod): void;
  /** The binding call succeeded; the pod stays assumed until the informer confirms it. */
  finishBinding(pod: Pod): void;
  /** Undoes assumePod (binding failed). */
  forgetPod(pod: Pod): void;
  isAssumed(pod: Pod): boolean;
  /**
   * The nodes as the plugins see them: the cache's own NodeInfos (pods placed later show in them), in
   * name order. A new Snapshot when nodes or the nodes with (anti-)affinity pods changed.
   */
  snapshot(): Snapshot;
  nodeCount(): number;
  /** The node a known pod is on. */
  podNode(pod: Pod): string | undefined;
}

class Cache implements SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  /** pod key -> node name, for every pod in the cache */
  private readonly podStates = new Map<string, { node: string; assumed: boolean; bindingFinished: boolean }>();
  private cached: Snapshot | undefined;
  /** Changes of the cached snapshot's NodeInfos; a new one with every new node list. */
  private changes = new NodeChangeLog();
  /** Pods with (anti-)affinity came or went since the snapshot's lists of such nodes were made. */
  private affinityStale = false;

  private info(name: string): NodeInfo {
    let n = this.nodes.get(name);
    if (!n) this.nodes.set(name, (n = newNodeInfo()));
    return n;
  }

  /** The node set changed: the next snapshot sorts the nodes again. */
  private changed(): void {
    this.cached = undefined;
    this.changes = new NodeChangeLog();
  }

  /**
   * Changes a node's pods. The snapshot's NodeInfos are the cache's own, so the node list stands; only
   * the lists of nodes with (anti-)affinity pods may need making again. (Upstream's UpdateSnapshot
   * likewise copies only the NodeInfos whose generation moved.)
   */
  private changePods(n: NodeInfo, change: () => void): void {
    const [affinity, antiAffinity] = [n.podsWithAffinity, n.podsWithRequiredAntiAffinity];
    change();
    this.changes.record(n);
    if (n.podsWithAffinity !== affinity || n.podsWithRequiredAntiAffinity !== antiAffinity) this.affinityStale = true;
  }

  addNode(node: Node): void {
    setNode(this.info(node.metadata?.name ?? ''), node);
    this.changed();
  }

  updateNode(node: Node): void {
    this.addNode(node);
  }

  removeNode(node: Node): void {
    const name = node.metadata?.name ?? '';
    const n = this.nodes.get(name);
    if (!n) return;
    // Pods still on a removed node stay counted until they are deleted themselves.
    if (n.pods.size === 0) this.nodes.delete(name);
    else n.node = undefined;
    this.changed();
  }

  private place(pod: Pod, node: string): void {
    const n = this.info(node);
    this.changePods(n, () => addPod(n, newPodInfo(pod)));
  }

  private unplace(pod: Pod, node: string): void {
    const n = this.nodes.get(node);
    if (!n) return;
    this.changePods(n, () => removePod(n, pod));
    if (!n.node && n.pods.size === 0) this.nodes.delete(node);
  }

  addPod(pod: Pod): void {
    const key = podKey(pod);
    const node = pod.spec?.nodeName ?? '';
    const state = this.podStates.get(key);
    const n = state?.node === node ? this.nodes.get(node) : undefined;
    if (n !== undefined && n.pods.has(key)) {
      // An update on the same node (or the confirmation of a pod assumed there).
      this.changePods(n, () => replacePod(n, newPodInfo(pod)));
    } else {
      // Confirmation of a pod assumed on another node, or a re-add.
      if (state) this.unplace(pod, state.node);
      this.place(pod, node);
    }
    this.podStates.set(key, { node, assumed: false, bindingFinished: false });
  }

  updatePod(_oldPod: Pod, newPod: Pod): void {
    this.addPod(newPod);
  }

  removePod(pod: Pod): void {
    const key = podKey(pod);
    const state = this.podStates.get(key);
    if (!state) return;
    this.unplace(pod, state.node);
    this.podStates.delete(key);
  }

  assumePod(pod: Pod): void {
    const key = podKey(pod);
    if (this.podStates.has(key)) throw new Error(`pod ${pod.metadata?.namespace}/${pod.metadata?.name} is in the cache, so can't be assumed`);
    const node = pod.spec?.nodeName ?? '';
    this.place(pod, node);
    this.podStates.set(key, { node, assumed: true, bindingFinished: false });
  }

  finishBinding(pod: Pod): void {
    const state = this.podStates.get(podKey(pod));
    if (state?.assumed) state.bindingFinished = true;
  }

  forgetPod(pod: Pod): void {
    const key = podKey(pod);
    const state = this.podStates.get(key);
    if (!state || !state.assumed) return;
    this.unplace(pod, state.node);
    this.podStates.delete(key);
  }

  isAssumed(pod: Pod): boolean {
    return this.podStates.get(podKey(pod))?.assumed ?? false;
  }

  podNode(pod: Pod): string | undefined {
    return this.podStates.get(podKey(pod))?.node;
  }

  snapshot(): Snapshot {
    if (!this.cached) {
      const nodes = [...this.nodes.values()].filter((n) => n.node !== undefined);
      nodes.sort((a, b) => {
        const x = a.node!.metadata?.name ?? '';
        const y = b.node!.metadata?.name ?? '';
        return x < y ? -1 : x > y ? 1 : 0;
      });
      this.cached = newSnapshot(nodes, this.changes);
    } else if (this.affinityStale) this.cached = newSnapshot(this.cached.nodes, this.changes);
    this.affinityStale = false;
    return this.cached;
  }

  nodeCount(): number {
    let n = 0;
    for (const info of this.nodes.values()) if (info.node) n++;
    return n;
  }
}

export function newSchedulerCache(): SchedulerCache {
  return new Cache();
}
