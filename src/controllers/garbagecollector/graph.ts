/**
 * The garbage collector's ownership graph (pkg/controller/garbagecollector,
 * graph.go and graph_builder.go): one node per object uid, edges from
 * owners to dependents taken from metadata.ownerReferences.
 *
 * A node is *observed* once an informer delivered its object; a *virtual*
 * node stands for an owner only named by a dependent's reference. Virtual
 * nodes are queued for a live read: an owner that does not exist becomes a
 * virtual delete event, which removes the node and queues its dependents.
 *
 * The builder is fed informer events (processEvent) and calls back into the
 * collector through `GraphSink`: it never talks to the API itself.
 */
import type { OwnerReference } from '../../api/types.js';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';

/** Who an object is: owner-reference coordinates plus its namespace ('' when cluster-scoped). */
export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  namespace: string;
}

/** `[apps/v1/Deployment, namespace: ns, name: web, uid: 1234]`, upstream's objectReference.String(). */
export function identityString(id: ObjectIdentity): string {
  return `[${id.apiVersion}/${id.kind}, namespace: ${id.namespace}, name: ${id.name}, uid: ${id.uid}]`;
}

export class GraphNode {
  identity: ObjectIdentity;
  readonly dependents = new Set<GraphNode>();
  /** The object's ownerReferences as last observed (virtual nodes: none). */
  owners: OwnerReference[] = [];
  /** The object has a deletionTimestamp. */
  beingDeleted = false;
  /** Deleting in foreground: waiting for its blocking dependents to go. */
  deletingDependents = false;
  /** Delivered by an informer (false: virtual). */
  observed: boolean;

  constructor(identity: ObjectIdentity, observed: boolean) {
    this.identity = identity;
    this.observed = observed;
  }

  /** Dependents whose reference to this node has blockOwnerDeletion set. */
  blockingDependents(): GraphNode[] {
    const out: GraphNode[] = [];
    for (const dep of this.dependents) {
      if (dep.owners.some((r) => r.uid === this.identity.uid && r.blockOwnerDeletion === true)) out.push(dep);
    }
    return out;
  }
}

/** What the builder asks of the collector. */
export interface GraphSink {
  attemptToDelete(node: GraphNode): void;
  attemptToOrphan(node: GraphNode): void;
  /**
   * An owner with dependents is gone (its deletion observed, or a virtual
   * node verified absent): the collector records it in its absent-owner
   * cache, so its dependents' checks need no live lookup (as upstream's
   * GraphBuilder does).
   */
  ownerGone?(identity: ObjectIdentity): void;
}

/** Object metadata as the graph needs it. */
export interface ObservedObject {
  identity: ObjectIdentity;
  owners: OwnerReference[];
  deletionTimestamp?: string | undefined;
  finalizers: string[];
}

export type GraphEvent =
  | { type: 'add' | 'update'; object: ObservedObject; old?: ObservedObject | undefined }
  | { type: 'delete'; object: ObservedObject }
  /** An owner verified absent (or present with another uid) by a live read. */
  | { type: 'virtualDelete'; identity: ObjectIdentity };

function hasFinalizer(o: ObservedObject | undefined, f: string): boolean {
  return !!o && o.finalizers.includes(f);
}
function deletingWith(o: ObservedObject | undefined, f: string): boolean {
  return !!o && !!o.deletionTimestamp && hasFinalizer(o, f);
}

function ownerCoordinatesEqual(a: OwnerReference, b: OwnerReference): boolean {
  return a.uid === b.uid && a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name;
}

export interface Graph {
  /** The node of `uid`, if any (observed or virtual). */
  node(uid: string): GraphNode | undefined;
  size(): number;
  processEvent(event: GraphEvent): void;
}

class GraphImpl implements Graph {
  private readonly uidToNode = new Map<string, GraphNode>();

  constructor(private readonly sink: GraphSink) {}

  node(uid: string): GraphNode | undefined {
    return this.uidToNode.get(uid);
  }
  size(): number {
    return this.uidToNode.size;
  }

  processEvent(e: GraphEvent): void {
    switch (e.type) {
      case 'add':
      case 'update':
        this.addOrUpdate(e.object, e.old);
        return;
      case 'delete':
        this.remove(e.object.identity.uid, e.object.identity);
        return;
      case 'virtualDelete':
        this.virtualDelete(e.identity);
        return;
    }
  }

  private addOrUpdate(obj: ObservedObject, old: ObservedObject | undefined): void {
    const uid = obj.identity.uid;
    const existing = this.uidToNode.get(uid);
    if (!existing) {
      const n = new GraphNode(obj.identity, true);
      n.owners = [...obj.owners];
      n.beingDeleted = !!obj.deletionTimestamp;
      this.uidToNode.set(uid, n);
      this.addDependentToOwners(n, n.owners);
      this.processTransitions(old, obj, n);
      return;
    }
    if (!existing.observed) {
      // A virtual node is now backed by a real object: take its identity.
      existing.observed = true;
      existing.identity = obj.identity;
    }
    const { added, removed, changed } = referencesDiff(existing.owners, obj.owners);
    if (added.length || removed.length || changed.length) {
      // Owners waiting for this dependent may be unblocked.
      this.addUnblockedOwnersToDeleteQueue(removed, changed);
      existing.owners = [...obj.owners];
      this.addDependentToOwners(existing, added);
      this.removeDependentFromOwners(existing, removed);
    }
    if (obj.deletionTimestamp) existing.beingDeleted = true;
    this.processTransitions(old, obj, existing);
  }

  private processTransitions(old: ObservedObject | undefined, obj: ObservedObject, n: GraphNode): void {
    if (!deletingWith(old, FINALIZER_ORPHAN) && deletingWith(obj, FINALIZER_ORPHAN)) {
      this.sink.attemptToOrphan(n);
      return;
    }
    if (!deletingWith(old, FINALIZER_DELETE_DEPENDENTS) && deletingWith(obj, FINALIZER_DELETE_DEPENDENTS)) {
      n.deletingDependents = true;
      for (const dep of n.dependents) this.sink.attemptToDelete(dep);
      this.sink.attemptToDelete(n);
    }
  }

  /** Links `n` under each owner, creating (and queueing for verification) virtual owners. */
  private addDependentToOwners(n: GraphNode, owners: OwnerReference[]): void {
    for (const ref of owners) {
      let owner = this.uidToNode.get(ref.uid);
      if (!owner) {
        owner = new GraphNode(
          { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: n.identity.namespace },
          false,
        );
        this.uidToNode.set(ref.uid, owner);
        owner.dependents.add(n);
        this.sink.attemptToDelete(owner);
        continue;
      }
      owner.dependents.add(n);
    }
  }

  private removeDependentFromOwners(n: GraphNode, owners: OwnerReference[]): void {
    for (const ref of owners) this.uidToNode.get(ref.uid)?.dependents.delete(n);
  }

  /**
   * A reference removed, or one whose blockOwnerDeletion went from true to
   * false, may unblock an owner deleting in foreground: queue it.
   */
  private addUnblockedOwnersToDeleteQueue(removed: OwnerReference[], changed: Array<{ old: OwnerReference; now: OwnerReference }>): void {
    for (const ref of removed) {
      if (ref.blockOwnerDeletion !== true) continue;
      const owner = this.uidToNode.get(ref.uid);
      if (owner?.deletingDependents) this.sink.attemptToDelete(owner);
    }
    for (const { old, now } of changed) {
      if (old.blockOwnerDeletion === true && now.blockOwnerDeletion !== true) {
        const owner = this.uidToNode.get(now.uid);
        if (owner?.deletingDependents) this.sink.attemptToDelete(owner);
      }
    }
  }

  /** Removes a node: its dependents are queued, owners waiting on it are re-checked. */
  private remove(uid: string, _identity: ObjectIdentity): void {
    const n = this.uidToNode.get(uid);
    if (!n) return;
    this.uidToNode.delete(uid);
    this.removeDependentFromOwners(n, n.owners);
    if (n.dependents.size > 0) this.sink.ownerGone?.(n.identity);
    for (const dep of n.dependents) this.sink.attemptToDelete(dep);
    for (const ref of n.owners) {
      const owner = this.uidToNode.get(ref.uid);
      if (owner?.deletingDependents) this.sink.attemptToDelete(owner);
    }
  }

  private virtualDelete(identity: ObjectIdentity): void {
    const n = this.uidToNode.get(identity.uid);
    if (!n) return;
    if (!n.observed) {
      // The owner never existed (or is gone): drop the virtual node.
      this.remove(identity.uid, identity);
      return;
    }
    // The uid exists, but dependents named it with other coordinates (another
    // kind, or a namespace it is not in): those references are dangling.
    for (const dep of n.dependents) {
      const ref = dep.owners.find((r) => r.uid === identity.uid);
      if (!ref) continue;
      if (ref.apiVersion !== n.identity.apiVersion || ref.kind !== n.identity.kind || dep.identity.namespace !== n.identity.namespace) {
        this.sink.attemptToDelete(dep);
      }
    }
  }
}

/** Owner references added, removed and changed (same uid, other fields), by uid. */
export function referencesDiff(
  old: OwnerReference[],
  now: OwnerReference[],
): { added: OwnerReference[]; removed: OwnerReference[]; changed: Array<{ old: OwnerReference; now: OwnerReference }> } {
  const oldByUid = new Map(old.map((r) => [r.uid, r]));
  const nowByUid = new Map(now.map((r) => [r.uid, r]));
  const added = now.filter((r) => !oldByUid.has(r.uid));
  const removed = old.filter((r) => !nowByUid.has(r.uid));
  const changed: Array<{ old: OwnerReference; now: OwnerReference }> = [];
  for (const r of now) {
    const o = oldByUid.get(r.uid);
    if (o && (!ownerCoordinatesEqual(o, r) || (o.blockOwnerDeletion ?? false) !== (r.blockOwnerDeletion ?? false) || (o.controller ?? false) !== (r.controller ?? false))) {
      changed.push({ old: o, now: r });
    }
  }
  return { added, removed, changed };
}

export function newGraph(sink: GraphSink): Graph {
  return new GraphImpl(sink);
}
