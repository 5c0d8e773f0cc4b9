/**
 * The dashboard's picture of a cluster, kept from watches through the API
 * as any client would: informers on the workload kinds, pods, nodes,
 * namespaces, kube-system's Leases, Events and every custom resource; a
 * summary per object (summary.ts); and, for the timeline, a bounded record
 * of the writes seen (what changed, who wrote it), the Events, and the
 * controllers' syncs read from the controller manager (addReconciles).
 *
 * It starts on first use (start()), so a `kcm up` nobody looks at pays
 * nothing for it; the timeline records from then on.
 */
import type { Event as KEvent } from 'kubernetes-types/core/v1.js';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { GVR } from '../api/gvr.js';
import type { GroupVersionResource, KubeObject } from '../api/types.js';
import type { KubeClient } from '../client/client.js';
import { discoverServed, servedKey, withVersionFallbacks } from '../client/version-fallback.js';
import { newSharedInformerFactory, stripManagedFields, type SharedInformerFactory } from '../tools/cache/factory.js';
import { DeletedFinalStateUnknown, type SharedIndexInformer } from '../tools/cache/interfaces.js';
import type { Logger } from '../util/log/logger.js';
import { parseTime } from '../util/clock/clock.js';
import { Ring } from '../util/ring/ring.js';
import { changedPaths, describeChanges } from './diff.js';
import type { Delta, DebugControllers, ObjectSummary, SchedulingDecision, TimelineEntry, TimelineResponse } from './protocol.js';
import { summarize } from './summary.js';

/** The kinds whose owner trees and states the dashboard shows. */
const WATCHED: readonly GroupVersionResource[] = [
  GVR.namespaces,
  GVR.nodes,
  GVR.pods,
  GVR.deployments,
  GVR.replicaSets,
  GVR.statefulSets,
  GVR.daemonSets,
  GVR.controllerRevisions,
  GVR.jobs,
  GVR.cronJobs,
  GVR.replicationControllers,
  GVR.persistentVolumeClaims,
  GVR.services,
  GVR.endpointSlices,
];

const MAX_WRITES = 50_000;
const MAX_RECONCILES = 20_000;
const MAX_DECISIONS = 500;
const MAX_TIMELINE = 2_000;
const FLUSH_MS = 250;

/** Queue names of kcm's (and kube-controller-manager's) controllers and the kinds their keys name. */
const QUEUE_KINDS: Record<string, readonly string[]> = {
  deployment: ['Deployment'],
  'replicaset-controller': ['ReplicaSet'],
  replicaset: ['ReplicaSet'],
  'replicationcontroller-controller': ['ReplicationController'],
  replicationmanager: ['ReplicationController'],
  statefulset: ['StatefulSet'],
  daemonset: ['DaemonSet'],
  job: ['Job'],
  job_orphan_pod: ['Pod'],
  cronjob: ['CronJob'],
  endpoint: ['Service'],
  endpoint_slice: ['Service'],
  endpoint_slice_mirroring: ['Endpoints'],
  disruption: ['PodDisruptionBudget'],
  namespace: ['Namespace'],
  node_lifecycle_controller: ['Node'],
  node_lifecycle_controller_pods: ['Pod'],
  taint_eviction_controller_nodes: ['Node'],
  taint_eviction_controller_pods: ['Pod'],
  ttl_jobs_to_delete: ['Job'],
  ttlcontroller: ['Node'],
  claims: ['PersistentVolumeClaim'],
  pvcprotection: ['PersistentVolumeClaim'],
  ephemeral_volume: ['Pod'],
  service: ['Service'],
  serviceaccount: ['Namespace'],
};

type WriteEntry = Extract<TimelineEntry, { type: 'write' }>;
type ReconcileEntry = Extract<TimelineEntry, { type: 'reconcile' }>;

/** An object's managedFields entries: who (manager, subresource), how (operation), when, and the size of the field set. */
interface ManagerEntry {
  name: string;
  /** name and operation: one entry per such pair. */
  id: string;
  time: string;
  size: number;
}

function managerEntries(obj: unknown): ManagerEntry[] | undefined {
  const entries = (obj as KubeObject | null)?.metadata?.managedFields;
  if (!entries?.length) return undefined;
  return entries.map((e) => {
    const name = `${e.manager ?? ''}${e.subresource ? ` (${e.subresource})` : ''}`;
    return { name, id: `${name}\u0000${e.operation ?? ''}`, time: String(e.time ?? ''), size: JSON.stringify(e.fieldsV1 ?? {}).length };
  });
}

/**
 * Who made the write from `before` to `after`: an entry that is new or has a new time; else one whose
 * field set changed (a writer in the same second as its last write); else the newest. An entry that only
 * lost fields to another writer keeps its time, so it is not taken for the writer.
 */
function writer(before: ManagerEntry[] | undefined, after: ManagerEntry[] | undefined): string | undefined {
  if (!after?.length) return undefined;
  const old = new Map(before?.map((e) => [e.id, e]));
  const touched = after.filter((e) => old.get(e.id)?.time !== e.time);
  const grown = after.filter((e) => (old.get(e.id)?.size ?? 0) < e.size);
  const pool = touched.length ? touched : grown.length ? grown : after;
  let best = pool[0]!;
  for (const e of pool) if (e.time > best.time) best = e;
  return best.name || undefined;
}

function eventTime(e: KEvent): number {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  return (t ? parseTime(String(t)) : undefined) ?? 0;
}

function eventSource(e: KEvent): string {
  return e.reportingComponent || e.source?.component || '';
}

function objectKey(s: Pick<ObjectSummary, 'namespace' | 'name'>): string {
  return s.namespace ? `${s.namespace}/${s.name}` : s.name;
}

export interface ClusterModelOptions {
  client: KubeClient;
  logger: Logger;
  /** Wall-clock time in ms (tests pass their own). */
  now?: () => number;
}

export type DeltaListener = (d: Delta) => void;
export type SchedulingListener = (d: SchedulingDecision[]) => void;

export class ClusterModel {
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly objects = new Map<string, { obj: KubeObject; summary: ObjectSummary }>();
  /** owner uid -> dependent uids. */
  private readonly children = new Map<string, Set<string>>();
  private readonly writes = new Ring<WriteEntry>(MAX_WRITES);
  private readonly reconciles = new Ring<ReconcileEntry>(MAX_RECONCILES);
  private readonly reconcileSeen = new Map<string, number>();
  private readonly decisions = new Ring<SchedulingDecision>(MAX_DECISIONS);
  private readonly managers = new WeakMap<object, ManagerEntry[]>();
  private readonly deltaListeners = new Set<DeltaListener>();
  private readonly schedulingListeners = new Set<SchedulingListener>();
  private pending: { upserts: Map<string, ObjectSummary>; deletes: Set<string>; touched: Set<string>; namespaces: boolean } = this.emptyPending();
  private newDecisions: SchedulingDecision[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private factory: SharedInformerFactory | undefined;
  private leaseFactory: SharedInformerFactory | undefined;
  private events: SharedIndexInformer<KEvent & KubeObject> | undefined;
  private readonly ac = new AbortController();
  private started: Promise<void> | undefined;
  private readonly crdResources = new Set<string>();
  /** namespace -> StatefulSet name -> its uid and volumeClaimTemplate names (for claimLink). */
  private readonly statefulSets = new Map<string, Map<string, { uid: string; templates: string[] }>>();

  constructor(private readonly opts: ClusterModelOptions) {
    this.now = opts.now ?? Date.now;
    this.log = opts.logger;
  }

  private emptyPending() {
    return { upserts: new Map<string, ObjectSummary>(), deletes: new Set<string>(), touched: new Set<string>(), namespaces: false };
  }

  /** Starts the watches (once) and resolves when the first lists are in. */
  start(): Promise<void> {
    this.started ??= this.doStart();
    return this.started;
  }

  private transform = (obj: unknown): unknown => {
    const entries = managerEntries(obj);
    const out = stripManagedFields(obj);
    if (entries && out && typeof out === 'object') this.managers.set(out, entries);
    return out;
  };

  private async doStart(): Promise<void> {
    // Only what the server serves, in the version it serves (a 1.20 server has batch/v1beta1 CronJobs and
    // discovery.k8s.io/v1beta1 EndpointSlices): an informer on a resource it does not serve never syncs.
    let client = this.opts.client;
    let served: (r: GroupVersionResource) => boolean = () => true;
    try {
      const d = await discoverServed(client);
      if (d.error) this.log.info({ error: d.error.message }, 'some API groups could not be discovered');
      client = withVersionFallbacks(client, d.fallbacks);
      served = (r) => d.served.has(servedKey(r));
    } catch (err) {
      this.log.error(err, 'cannot discover the served resources; watching every kind');
    }
    const logger = this.log.child({}, 'informers');
    this.factory = newSharedInformerFactory(client, { transform: this.transform, logger });
    this.leaseFactory = newSharedInformerFactory(client, { namespace: 'kube-system', transform: this.transform, logger });
    for (const r of WATCHED) if (served(r)) this.watch(this.factory.forResource(r));
    if (served(GVR.leases)) this.watch(this.leaseFactory.forResource(GVR.leases));
    this.events = this.factory.forResource<KEvent & KubeObject>(GVR.events);
    this.events.addEventHandler({
      onAdd: (e, initial) => this.onEvent(e, initial),
      onUpdate: (_o, e) => this.onEvent(e, false),
    });
    // Custom resources: one informer per CRD's storage version, added as CRDs appear.
    if (served(GVR.customResourceDefinitions)) this.factory.forResource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions).addEventHandler({
      onAdd: (crd) => this.watchCustomResource(crd),
      onUpdate: (_o, crd) => this.watchCustomResource(crd),
    });
    this.factory.start(this.ac.signal);
    this.leaseFactory.start(this.ac.signal);
    await this.factory.waitForCacheSync(this.ac.signal);
    await this.leaseFactory.waitForCacheSync(this.ac.signal);
  }

  private watchCustomResource(crd: CustomResourceDefinition): void {
    const version = crd.spec?.versions?.find((v) => v.storage)?.name ?? crd.spec?.versions?.[0]?.name;
    const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (!version || !established || !this.factory) return;
    const r: GroupVersionResource = { group: crd.spec.group, version, resource: crd.spec.names.plural };
    const key = `${r.group}/${r.version}/${r.resource}`;
    if (this.crdResources.has(key)) return;
    this.crdResources.add(key);
    this.watch(this.factory.forResource(r));
    this.factory.start(this.ac.signal);
  }

  private watch(inf: SharedIndexInformer<KubeObject>): void {
    inf.addEventHandler({
      onAdd: (o, initial) => this.upsert(undefined, o, initial),
      onUpdate: (old, o) => this.upsert(old, o, false),
      onDelete: (o) => this.remove(o instanceof DeletedFinalStateUnknown ? (o.obj as KubeObject) : o),
    });
  }

  private upsert(old: KubeObject | undefined, obj: KubeObject, initial: boolean): void {
    const uid = obj.metadata?.uid;
    if (!uid) return;
    const prev = this.objects.get(uid);
    const summary = this.claimLink(summarize(obj));
    if (obj.kind === 'StatefulSet') this.noteStatefulSet(obj, true);
    if (prev) for (const o of prev.summary.owners) this.unlink(o.uid, uid);
    for (const o of summary.owners) this.link(o.uid, uid);
    this.objects.set(uid, { obj, summary });
    this.pending.upserts.set(uid, summary);
    this.pending.deletes.delete(uid);
    if (obj.kind === 'Namespace') this.pending.namespaces = true;
    if (!initial) {
      const changes = old ? changedPaths(old, obj) : [];
      if (old && changes.length === 0) return this.scheduleFlush();
      this.record(obj, summary, old ? 'MODIFIED' : 'ADDED', changes.map((c) => c.path), old ? describeChanges(changes) : 'created', old);
    }
    this.scheduleFlush();
  }

  private remove(obj: KubeObject): void {
    const uid = obj.metadata?.uid;
    if (!uid) return;
    const prev = this.objects.get(uid);
    if (!prev) return;
    for (const o of prev.summary.owners) this.unlink(o.uid, uid);
    if (obj.kind === 'StatefulSet') this.noteStatefulSet(obj, false);
    this.objects.delete(uid);
    if (this.children.get(uid)?.size === 0) this.children.delete(uid);
    this.pending.upserts.delete(uid);
    this.pending.deletes.add(uid);
    if (obj.kind === 'Namespace') this.pending.namespaces = true;
    this.record(obj, prev.summary, 'DELETED', [], 'deleted');
    this.scheduleFlush();
  }

  /** A PVC made from a live StatefulSet's volumeClaimTemplate, and not owned by it, gets a claim link to it (OwnerRef.claim). */
  private claimLink(s: ObjectSummary): ObjectSummary {
    if (s.kind !== 'PersistentVolumeClaim' || !s.namespace) return s;
    for (const [set, { uid, templates }] of this.statefulSets.get(s.namespace) ?? []) {
      if (s.owners.some((o) => o.uid === uid)) return s;
      for (const t of templates) {
        const prefix = `${t}-${set}-`;
        if (s.name.startsWith(prefix) && /^\d+$/.test(s.name.slice(prefix.length))) {
          return { ...s, owners: [...s.owners, { uid, kind: 'StatefulSet', name: set, controller: false, claim: true }] };
        }
      }
    }
    return s;
  }

  /** Keeps the StatefulSets' claim templates, and relinks the namespace's claims when they change. */
  private noteStatefulSet(obj: KubeObject, present: boolean): void {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    const templates = ((obj as { spec?: { volumeClaimTemplates?: { metadata?: { name?: string } }[] } }).spec?.volumeClaimTemplates ?? []).map((t) => t.metadata?.name ?? '').filter(Boolean);
    let sets = this.statefulSets.get(ns);
    const before = sets?.get(name);
    if (present && templates.length > 0 && obj.metadata?.uid) {
      if (before && before.uid === obj.metadata.uid && before.templates.join() === templates.join()) return;
      if (!sets) this.statefulSets.set(ns, (sets = new Map()));
      sets.set(name, { uid: obj.metadata.uid, templates });
    } else {
      if (!before) return;
      sets!.delete(name);
      if (sets!.size === 0) this.statefulSets.delete(ns);
    }
    for (const [uid, o] of this.objects) {
      if (o.summary.kind !== 'PersistentVolumeClaim' || o.summary.namespace !== ns) continue;
      const plain = { ...o.summary, owners: o.summary.owners.filter((r) => !r.claim) };
      const next = this.claimLink(plain);
      for (const r of o.summary.owners) if (r.claim) this.unlink(r.uid, uid);
      for (const r of next.owners) if (r.claim) this.link(r.uid, uid);
      o.summary = next;
      this.pending.upserts.set(uid, next);
    }
    this.scheduleFlush();
  }

  private link(owner: string, dependent: string): void {
    let set = this.children.get(owner);
    if (!set) this.children.set(owner, (set = new Set()));
    set.add(dependent);
  }

  /** Forgets that `dependent` names `owner`; an emptied set of an owner that is gone goes too. */
  private unlink(owner: string, dependent: string): void {
    const set = this.children.get(owner);
    if (!set) return;
    set.delete(dependent);
    if (set.size === 0 && !this.objects.has(owner)) this.children.delete(owner);
  }

  private record(obj: KubeObject, s: ObjectSummary, op: WriteEntry['op'], changed: string[], text: string, old?: KubeObject): void {
    const manager = writer(old && this.managers.get(old), this.managers.get(obj));
    this.writes.push({
      type: 'write',
      time: this.now(),
      uid: s.uid,
      kind: s.kind,
      ...(s.namespace ? { namespace: s.namespace } : {}),
      name: s.name,
      op,
      resourceVersion: s.resourceVersion,
      ...(manager && op !== 'DELETED' ? { manager } : {}),
      changed,
      text,
    });
    this.pending.touched.add(s.uid);
  }

  private onEvent(e: KEvent, initial: boolean): void {
    const uid = e.involvedObject?.uid;
    if (uid) this.pending.touched.add(uid);
    const source = eventSource(e);
    if (!initial && source === 'default-scheduler' && e.involvedObject?.kind === 'Pod') {
      const node = e.reason === 'Scheduled' ? /to (\S+)$/.exec(e.message ?? '')?.[1] : undefined;
      const d: SchedulingDecision = {
        time: eventTime(e) || this.now(),
        namespace: e.involvedObject.namespace ?? '',
        pod: e.involvedObject.name ?? '',
        ...(uid ? { podUid: uid } : {}),
        reason: e.reason ?? '',
        ...(node ? { node } : {}),
        message: e.message ?? '',
      };
      this.decisions.push(d);
      this.newDecisions.push(d);
    }
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer || (this.deltaListeners.size === 0 && this.schedulingListeners.size === 0)) return;
    this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
    this.flushTimer.unref?.();
  }

  /** Sends what changed since the last delta to every listener. */
  flush(): void {
    this.flushTimer = undefined;
    const p = this.pending;
    this.pending = this.emptyPending();
    if (p.upserts.size || p.deletes.size || p.touched.size || p.namespaces) {
      const d: Delta = { time: this.now(), upserts: [...p.upserts.values()], deletes: [...p.deletes], touched: [...p.touched], ...(p.namespaces ? { namespaces: this.namespaces() } : {}) };
      for (const l of this.deltaListeners) l(d);
    }
    if (this.newDecisions.length) {
      const ds = this.newDecisions;
      this.newDecisions = [];
      for (const l of this.schedulingListeners) l(ds);
    }
  }

  onDelta(l: DeltaListener): () => void {
    this.deltaListeners.add(l);
    return () => this.deltaListeners.delete(l);
  }

  onScheduling(l: SchedulingListener): () => void {
    this.schedulingListeners.add(l);
    return () => this.schedulingListeners.delete(l);
  }

  namespaces(): string[] {
    return [...this.objects.values()].filter((o) => o.summary.kind === 'Namespace').map((o) => o.summary.name).sort();
  }

  summaries(): ObjectSummary[] {
    return [...this.objects.values()].map((o) => o.summary);
  }

  scheduling(): SchedulingDecision[] {
    return [...this.decisions];
  }

  object(uid: string): KubeObject | undefined {
    return this.objects.get(uid)?.obj;
  }

  /** The uids of the object and everything it owns, transitively. */
  descendants(uid: string): string[] {
    const out = [uid];
    const seen = new Set(out);
    for (let i = 0; i < out.length; i++) {
      for (const c of this.children.get(out[i]!) ?? []) {
        if (!seen.has(c)) {
          seen.add(c);
          out.push(c);
        }
      }
    }
    return out;
  }

  /** Takes the controller manager's recent syncs (each once) into the timeline's record. */
  addReconciles(d: Pick<DebugControllers, 'recent' | 'queues'>): void {
    const controllerOf = new Map(d.queues.map((q) => [q.name, q.controller ?? q.name]));
    for (const r of d.recent) {
      const id = `${r.queue}\u0000${r.key}\u0000${r.start}`;
      if (this.reconcileSeen.has(id)) continue;
      this.reconcileSeen.set(id, r.start);
      this.reconciles.push({
        type: 'reconcile',
        time: r.start,
        controller: controllerOf.get(r.queue) ?? r.queue,
        queue: r.queue,
        key: r.key,
        durationMs: r.durationMs,
        ...(r.error ? { error: r.error } : {}),
      });
    }
    if (this.reconcileSeen.size > MAX_RECONCILES * 2) {
      // Forget the oldest half of the ids (they have left the ring by now or soon will).
      const cut = [...this.reconcileSeen.values()].sort((a, b) => a - b)[MAX_RECONCILES]!;
      for (const [id, t] of this.reconcileSeen) if (t < cut) this.reconcileSeen.delete(id);
    }
  }

  timeline(uid: string, withDescendants: boolean): TimelineResponse {
    const uids = withDescendants ? this.descendants(uid) : [uid];
    const set = new Set(uids);
    const entries: TimelineEntry[] = [];
    for (const w of this.writes) if (set.has(w.uid)) entries.push(w);
    // Names of the objects (live, or known from their writes) to match event involvedObjects and queue keys.
    const known = new Map<string, { kind: string; key: string }>();
    for (const u of uids) {
      const s = this.objects.get(u)?.summary;
      if (s) known.set(u, { kind: s.kind, key: objectKey(s) });
    }
    for (const w of entries) if (w.type === 'write' && !known.has(w.uid)) known.set(w.uid, { kind: w.kind, key: objectKey(w) });
    for (const e of this.events?.getStore().list() ?? []) {
      const io = e.involvedObject;
      if (!io?.uid || !set.has(io.uid)) continue;
      entries.push({
        type: 'event',
        time: eventTime(e),
        uid: io.uid,
        kind: io.kind ?? '',
        ...(io.namespace ? { namespace: io.namespace } : {}),
        name: io.name ?? '',
        reason: e.reason ?? '',
        message: e.message ?? '',
        eventType: e.type ?? 'Normal',
        source: eventSource(e),
        count: e.count ?? 1,
      });
    }
    const byKey = new Map<string, Set<string>>();
    for (const [u, { kind, key }] of known) {
      let kinds = byKey.get(key);
      if (!kinds) byKey.set(key, (kinds = new Set()));
      kinds.add(kind);
      // The garbage collector's queues name objects by uid.
      byKey.set(u, new Set(['*']));
    }
    for (const r of this.reconciles) {
      const kinds = byKey.get(r.key);
      if (!kinds) continue;
      const want = QUEUE_KINDS[r.queue];
      if (kinds.has('*') || !want || want.some((k) => kinds.has(k))) entries.push(r);
    }
    entries.sort((a, b) => a.time - b.time);
    return { uid, uids, entries: entries.slice(-MAX_TIMELINE) };
  }

  async stop(): Promise<void> {
    this.ac.abort();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.factory?.shutdown();
    await this.leaseFactory?.shutdown();
  }
}
