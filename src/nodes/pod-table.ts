/**
 * The simulated kubelets' pods by key, indexed by node as well: a kubelet
 * only ever looks at its own pods (admission, usage, volumes in use), and
 * walking every pod of the cluster for one node made each pod's admission
 * cost grow with the cluster.
 */
export class PodTable<E extends { readonly node: string }> {
  private readonly all = new Map<string, E>();
  private readonly byNode = new Map<string, Map<string, E>>();

  get size(): number {
    return this.all.size;
  }

  get(key: string): E | undefined {
    return this.all.get(key);
  }

  has(key: string): boolean {
    return this.all.has(key);
  }

  set(key: string, e: E): void {
    this.delete(key);
    this.all.set(key, e);
    let on = this.byNode.get(e.node);
    if (!on) this.byNode.set(e.node, (on = new Map()));
    on.set(key, e);
  }

  delete(key: string): boolean {
    const e = this.all.get(key);
    if (!e) return false;
    this.all.delete(key);
    const on = this.byNode.get(e.node);
    on?.delete(key);
    if (on?.size === 0) this.byNode.delete(e.node);
    return true;
  }

  keys(): IterableIterator<string> {
    return this.all.keys();
  }

  values(): IterableIterator<E> {
    return this.all.values();
  }

  [Symbol.iterator](): IterableIterator<[string, E]> {
    return this.all.entries();
  }

  /** The node's pods, key and entry. */
  onNode(node: string): Iterable<[string, E]> {
    return this.byNode.get(node)?.entries() ?? [];
  }
}
