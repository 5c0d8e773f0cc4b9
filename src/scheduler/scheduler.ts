/**
 * The default scheduler: watches pods and nodes with shared informers, takes
 * pending pods from the scheduling queue one at a time, picks a node with the
 * default profile, assumes the pod there at once and binds it in the
 * background (pods/binding). A pod that fits nowhere gets a FailedScheduling
 * event and a PodScheduled=False condition with the same message, and waits
 * in the queue until the cluster changes.
 */
import type { Binding, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodCondition, ReplicationController, Service } from 'kubernetes-types/core/v1.js';
import type { CSINode, StorageClass } from 'kubernetes-types/storage/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import type { ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import { GVR } from '../api/gvr.js';
import { selectorFromLabelSelector, selectorFromSet, type Labels, type Selector } from '../api/labels.js';
import { isNotFound } from '../client/errors.js';
import type { Client } from '../client/interfaces.js';
import type { SharedInformerFactory } from '../tools/cache/factory.js';
import { DeletedFinalStateUnknown, type SharedIndexInformer } from '../tools/cache/interfaces.js';
import type { EventRecorder } from '../tools/record/interfaces.js';
import { realClock, rfc3339, type Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { fitErrorMessage, schedulePod } from './algorithm.js';
import type { ClusterLookups, CycleContext, Status } from './framework.js';
import { defaultProfile, DEFAULT_SCHEDULER_NAME, type Profile } from './profile.js';
import type { Random } from './random.js';
import { newSchedulerCache, type SchedulerCache } from './scheduler-cache.js';
import { newSchedulingQueue, type QueuedPod, type SchedulingQueue } from './scheduling-queue.js';

export interface SchedulerOptions {
  client: Client;
  informers: SharedInformerFactory;
  recorder: EventRecorder;
  clock?: Clock;
  logger?: Logger;
  /** Tie-breaking among equally scored nodes (default Math.random; seed it in tests). */
  random?: Random;
  profile?: Profile;
}

export interface Scheduler {
  /**
   * Starts the informers it needs, waits for their caches, then schedules
   * until the signal aborts. Resolves once in-flight bindings have settled.
   */
  run(signal: AbortSignal): Promise<void>;
  /** Pops and schedules one pod; false when the queue closed. For tests and tools. */
  scheduleOne(signal: AbortSignal): Promise<boolean>;
  /** Resolves when every binding started so far has finished. */
  waitForBindings(): Promise<void>;
  readonly queue: SchedulingQueue;
  readonly cache: SchedulerCache;
  healthy(): boolean;
}

/** Plugins whose verdict a newly assigned pod can change (it can only add load, which no other filter welcomes). */
const AFFINITY_PLUGINS = ['InterPodAffinity', 'PodTopologySpread'];

/**
 * The plugins each storage event can help (their EventsToRegister): claims
 * and volumes for every volume plugin, classes for VolumeBinding and
 * VolumeZone, CSINodes for VolumeBinding and NodeVolumeLimits.
 */
const CLAIM_PLUGINS = ['VolumeBinding', 'VolumeRestrictions', 'VolumeZone', 'NodeVolumeLimits'];
const VOLUME_PLUGINS = ['VolumeBinding', 'VolumeZone', 'NodeVolumeLimits'];
const CLASS_PLUGINS = ['VolumeBinding', 'VolumeZone'];
const CSINODE_PLUGINS = ['VolumeBinding', 'NodeVolumeLimits'];

/** Events longer than this are cut (as the scheduler's truncateMessage). */
const MAX_EVENT_MESSAGE = 1024;

export function truncateMessage(message: string): string {
  if (message.length <= MAX_EVENT_MESSAGE) return message;
  const suffix = ' ...';
  return message.slice(0, MAX_EVENT_MESSAGE - suffix.length) + suffix;
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isAssigned(pod: Pod): boolean {
  return !!pod.spec?.nodeName;
}

function podRef(pod: Pod): ObjectReference {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: pod.metadata?.namespace,
    name: pod.metadata?.name,
    uid: pod.metadata?.uid,
    resourceVersion: pod.metadata?.resourceVersion,
  };
}

function unwrap<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Node changes that can make a pod fit: spec (taints, unschedulable), labels, allocatable. */
function nodeSchedulingChanged(oldNode: Node, newNode: Node): boolean {
  return (
    !same(oldNode.spec, newNode.spec) ||
    !same(oldNode.metadata?.labels, newNode.metadata?.labels) ||
    !same(oldNode.status?.allocatable, newNode.status?.allocatable) ||
    !same(oldNode.status?.images?.length, newNode.status?.images?.length)
  );
}

/** Assigned-pod changes that can free room or change affinity: labels or resource requests. */
function assignedPodChanged(oldPod: Pod, newPod: Pod): boolean {
  const requests = (p: Pod) => [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])].map((c) => c.resources?.requests);
  return !same(oldPod.metadata?.labels, newPod.metadata?.labels) || !same(requests(oldPod), requests(newPod));
}

class DefaultScheduler implements Scheduler {
  readonly queue: SchedulingQueue;
  readonly cache: SchedulerCache = newSchedulerCache();
  private readonly client: Client;
  private readonly informers: SharedInformerFactory;
  private readonly recorder: EventRecorder;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: Random;
  private readonly profile: Profile;
  private readonly podInformer: SharedIndexInformer<Pod & { [k: string]: unknown }>;
  private readonly nodeInformer: SharedIndexInformer<Node & { [k: string]: unknown }>;
  private readonly nsInformer: SharedIndexInformer<Namespace & { [k: string]: unknown }>;
  private readonly svcInformer: SharedIndexInformer<Service & { [k: string]: unknown }>;
  private readonly rcInformer: SharedIndexInformer<ReplicationController & { [k: string]: unknown }>;
  private readonly rsInformer: SharedIndexInformer<ReplicaSet & { [k: string]: unknown }>;
  private readonly stsInformer: SharedIndexInformer<StatefulSet & { [k: string]: unknown }>;
  private readonly pvcInformer: SharedIndexInformer<PersistentVolumeClaim & { [k: string]: unknown }>;
  private readonly pvInformer: SharedIndexInformer<PersistentVolume & { [k: string]: unknown }>;
  private readonly scInformer: SharedIndexInformer<StorageClass & { [k: string]: unknown }>;
  private readonly csiNodeInformer: SharedIndexInformer<CSINode & { [k: string]: unknown }>;
  private readonly bindings = new Set<Promise<void>>();
  private running = false;
  private readonly lookups: ClusterLookups;

  constructor(opts: SchedulerOptions) {
    this.client = opts.client;
    this.informers = opts.informers;
    this.recorder = opts.recorder;
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? newLogger('scheduler');
    this.random = opts.random ?? Math.random;
    this.profile = opts.profile ?? defaultProfile({ client: this.client, clock: this.clock });
    this.queue = newSchedulingQueue({ clock: this.clock });
    this.podInformer = this.informers.pods();
    this.nodeInformer = this.informers.nodes();
    this.nsInformer = this.informers.namespaces();
    this.svcInformer = this.informers.services();
    this.rcInformer = this.informers.replicationControllers();
    this.rsInformer = this.informers.replicaSets();
    this.stsInformer = this.informers.statefulSets();
    this.pvcInformer = this.informers.persistentVolumeClaims();
    this.pvInformer = this.informers.persistentVolumes();
    this.scInformer = this.informers.storageClasses();
    this.csiNodeInformer = this.informers.csiNodes();
    this.lookups = {
      namespaceLabels: (ns) => (this.nsInformer.getStore().getByKey(ns)?.metadata?.labels ?? undefined) as Labels | undefined,
      ownerSelectors: (pod) => this.ownerSelectors(pod),
      pod: (ns, name) => this.podInformer.getStore().getByKey(`${ns}/${name}`),
      claim: (ns, name) => this.pvcInformer.getStore().getByKey(`${ns}/${name}`),
      persistentVolume: (name) => this.pvInformer.getStore().getByKey(name),
      persistentVolumes: () => this.pvInformer.getStore().list(),
      storageClass: (name) => this.scInformer.getStore().getByKey(name),
      csiNode: (name) => this.csiNodeInformer.getStore().getByKey(name),
    };
    this.addHandlers();
  }

  /** Whether this scheduler is responsible for the pod at all. */
  private responsibleFor(pod: Pod): boolean {
    const name = pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME;
    return name === this.profile.schedulerName;
  }

  /** Whether a pending pod should be in the queue now. */
  private pendingAndReady(pod: Pod): boolean {
    return !isAssigned(pod) && !isTerminal(pod) && !pod.metadata?.deletionTimestamp && (pod.spec?.schedulingGates ?? []).length === 0 && this.responsibleFor(pod);
  }

  private addHandlers(): void {
    this.podInformer.addEventHandler({
      onAdd: (pod) => {
        if (isAssigned(pod)) {
          if (isTerminal(pod)) return;
          this.cache.addPod(pod);
          this.queue.moveAllToActiveOrBackoff('AssignedPodAdd', AFFINITY_PLUGINS);
        } else if (this.pendingAndReady(pod)) this.queue.add(pod);
      },
      onUpdate: (oldPod, newPod) => {
        if (isAssigned(newPod)) {
          if (!isAssigned(oldPod)) this.queue.delete(newPod); // bound (by us or someone else)
          if (isTerminal(newPod)) {
            this.cache.removePod(newPod);
            this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
            return;
          }
          const known = this.cache.podNode(newPod) !== undefined;
          this.cache.updatePod(oldPod, newPod);
          if (!known) this.queue.moveAllToActiveOrBackoff('AssignedPodAdd', AFFINITY_PLUGINS);
          else if (assignedPodChanged(oldPod, newPod)) this.queue.moveAllToActiveOrBackoff('AssignedPodUpdate');
          return;
        }
        if (this.pendingAndReady(newPod)) this.queue.update(oldPod, newPod);
        else this.queue.delete(newPod);
      },
      onDelete: (obj) => {
        const pod = unwrap(obj);
        if (this.cache.podNode(pod) !== undefined) {
          this.cache.removePod(pod);
          this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
        }
        this.queue.delete(pod);
      },
    });
    this.nodeInformer.addEventHandler({
      onAdd: (node) => {
        this.cache.addNode(node);
        this.queue.moveAllToActiveOrBackoff('NodeAdd');
      },
      onUpdate: (oldNode, newNode) => {
        this.cache.updateNode(newNode);
        if (nodeSchedulingChanged(oldNode, newNode)) this.queue.moveAllToActiveOrBackoff('NodeUpdate');
      },
      onDelete: (obj) => this.cache.removeNode(unwrap(obj)),
    });
    // Storage changes retry the pods a volume plugin rejected (add and update; deletions help no pod).
    const onStorage = (event: string, plugins: readonly string[]) => ({
      onAdd: () => this.queue.moveAllToActiveOrBackoff(`${event}Add`, plugins),
      onUpdate: () => this.queue.moveAllToActiveOrBackoff(`${event}Update`, plugins),
    });
    this.pvcInformer.addEventHandler(onStorage('Pvc', CLAIM_PLUGINS));
    this.pvInformer.addEventHandler(onStorage('Pv', VOLUME_PLUGINS));
    this.scInformer.addEventHandler(onStorage('StorageClass', CLASS_PLUGINS));
    this.csiNodeInformer.addEventHandler(onStorage('CSINode', CSINODE_PLUGINS));
  }

  /** DefaultSelector: the selectors of Services, RCs, ReplicaSets and StatefulSets in the pod's namespace that select it. */
  private ownerSelectors(pod: Pod): Selector[] {
    const ns = pod.metadata?.namespace ?? 'default';
    const labels = pod.metadata?.labels ?? {};
    const out: Selector[] = [];
    const inNs = <T extends { metadata?: { namespace?: string } }>(xs: T[]) => xs.filter((x) => x.metadata?.namespace === ns);
    for (const s of inNs(this.svcInformer.getStore().list())) {
      const sel = s.spec?.selector;
      if (sel && Object.keys(sel).length > 0) {
        const v = selectorFromSet(sel);
        if (v.matches(labels)) out.push(v);
      }
    }
    for (const rc of inNs(this.rcInformer.getStore().list())) {
      const sel = rc.spec?.selector;
      if (sel && Object.keys(sel).length > 0) {
        const v = selectorFromSet(sel);
        if (v.matches(labels)) out.push(v);
      }
    }
    for (const o of [...inNs(this.rsInformer.getStore().list()), ...inNs(this.stsInformer.getStore().list())]) {
      try {
        const v = selectorFromLabelSelector(o.spec?.selector);
        if (!v.empty() && v.matches(labels)) out.push(v);
      } catch (err) {
        this.log.v(4).info({ err: String(err), owner: o.metadata?.name }, 'ignoring invalid selector');
      }
    }
    return out;
  }

  healthy(): boolean {
    return this.running;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.informers.start(signal);
    const synced = await this.informers.waitForCacheSync(signal);
    if (signal.aborted) return;
    for (const [key, ok] of synced) if (!ok) this.log.warn({ informer: key }, 'cache did not sync');
    this.queue.run(signal);
    this.running = true;
    this.log.info({ profile: this.profile.schedulerName }, 'scheduler started');
    try {
      while (!signal.aborted) {
        if (!(await this.scheduleOne(signal))) break;
      }
    } finally {
      this.running = false;
      this.queue.close();
      await this.waitForBindings();
    }
  }

  async waitForBindings(): Promise<void> {
    while (this.bindings.size > 0) await Promise.allSettled([...this.bindings]);
  }

  /** The informer's current copy of a pod, if any. */
  private current(pod: Pod): Pod | undefined {
    return this.podInformer.getStore().getByKey(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
  }

  async scheduleOne(signal: AbortSignal): Promise<boolean> {
    const qp = await this.queue.pop(signal);
    if (!qp) return false;
    const pod = this.current(qp.pod) ?? qp.pod;
    if (!this.pendingAndReady(pod) || this.cache.isAssumed(pod)) {
      this.queue.done(qp);
      return true;
    }
    qp.pod = pod;
    const cycle = this.queue.schedulingCycle();
    const start = this.clock.now();
    const result = schedulePod(pod, { profile: this.profile, snapshot: this.cache.snapshot(), lookups: this.lookups, random: this.random });
    const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    if (result.kind === 'error') {
      this.log.error(result.message, { pod: key }, 'error scheduling pod; retrying');
      this.handleFailure(qp, 'SchedulerError', result.message, cycle);
      return true;
    }
    if (result.kind === 'unschedulable') {
      this.log.v(2).info({ pod: key, reason: result.message }, 'unable to schedule pod; waiting');
      qp.unschedulablePlugins = new Set([...result.nodeStatuses.values()].map((s) => s.plugin ?? ''));
      this.handleFailure(qp, 'Unschedulable', result.message, cycle);
      return true;
    }
    const { ctx, node } = result;
    const reserveFailure = this.runReserve(ctx, node);
    if (reserveFailure) {
      this.unreserve(ctx, node);
      if (reserveFailure.code === 'Error') this.handleFailure(qp, 'SchedulerError', `running Reserve plugin ${JSON.stringify(reserveFailure.plugin)}: ${reserveFailure.reasons.join(', ')}`, cycle);
      else {
        qp.unschedulablePlugins = new Set([reserveFailure.plugin ?? '']);
        const msg = fitErrorMessage({ numAllNodes: this.cache.nodeCount(), nodeStatuses: new Map([[node, reserveFailure]]) });
        this.handleFailure(qp, 'Unschedulable', msg, cycle);
      }
      return true;
    }
    const assumed: Pod = { ...pod, spec: { ...pod.spec!, nodeName: node } };
    try {
      this.cache.assumePod(assumed);
    } catch (err) {
      this.log.error(err, { pod: key }, 'assuming pod failed');
      this.unreserve(ctx, node);
      this.handleFailure(qp, 'SchedulerError', String((err as Error).message ?? err), cycle);
      return true;
    }
    this.log.v(2).info({ pod: key, node, evaluatedNodes: result.evaluatedNodes, feasibleNodes: result.feasibleNodes, durationMs: this.clock.since(start) }, 'scheduled pod');
    const p = this.bind(qp, assumed, node, ctx, signal).finally(() => this.bindings.delete(p));
    this.bindings.add(p);
    return true;
  }

  /** RunReservePluginsReserve: the first failure, with its plugin. */
  private runReserve(ctx: CycleContext, node: string): Status | undefined {
    for (const r of this.profile.reserves ?? []) {
      const s = r.reserve(ctx, node);
      if (s) return { ...s, plugin: r.name };
    }
    return undefined;
  }

  /** RunReservePluginsUnreserve: every reserve plugin, in reverse order. */
  private unreserve(ctx: CycleContext, node: string): void {
    const rs = this.profile.reserves ?? [];
    for (let i = rs.length - 1; i >= 0; i--) {
      try {
        rs[i]!.unreserve(ctx, node);
      } catch (err) {
        this.log.error(err, { plugin: rs[i]!.name }, 'unreserve failed');
      }
    }
  }

  /** RunPreBindPlugins: the first failure as the message FailedScheduling carries. */
  private async runPreBind(ctx: CycleContext, node: string, signal: AbortSignal): Promise<string | undefined> {
    for (const p of this.profile.preBinds ?? []) {
      let s: Status | undefined;
      try {
        s = await p.preBind(ctx, node, signal);
      } catch (err) {
        s = { code: 'Error', reasons: [String((err as Error)?.message ?? err)] };
      }
      if (s) return `running PreBind plugin ${JSON.stringify(p.name)}: ${s.reasons.join(', ')}`;
    }
    return undefined;
  }

  private async bind(qp: QueuedPod, assumed: Pod, node: string, ctx: CycleContext, signal: AbortSignal): Promise<void> {
    const ns = assumed.metadata?.namespace ?? 'default';
    const name = assumed.metadata?.name ?? '';
    const preBindFailure = await this.runPreBind(ctx, node, signal);
    if (preBindFailure) {
      this.log.error(preBindFailure, { pod: `${ns}/${name}`, node }, 'pre-binding failed');
      this.unreserve(ctx, node);
      this.cache.forgetPod(assumed);
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
      this.handleFailure(qp, 'SchedulerError', preBindFailure, undefined);
      return;
    }
    const binding: Binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace: ns, uid: assumed.metadata?.uid },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    };
    try {
      await this.client.resource(GVR.pods).namespace(ns).createSubresource(name, 'binding', binding);
    } catch (err) {
      this.unreserve(ctx, node);
      this.cache.forgetPod(assumed);
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
      if (isNotFound(err)) {
        this.log.v(2).info({ pod: `${ns}/${name}` }, 'pod deleted before binding');
        this.queue.done(qp);
        return;
      }
      this.log.error(err, { pod: `${ns}/${name}`, node }, 'binding failed');
      this.handleFailure(qp, 'SchedulerError', `binding rejected: ${(err as Error)?.message ?? String(err)}`, undefined);
      return;
    }
    this.cache.finishBinding(assumed);
    this.queue.done(qp);
    this.recorder.eventf(podRef(assumed), 'Normal', 'Scheduled', 'Successfully assigned %v/%v to %v', ns, name, node);
  }

  /**
   * handleSchedulingFailure: event, requeue (unschedulable or backoff), and
   * the PodScheduled=False condition with the same message.
   */
  private handleFailure(qp: QueuedPod, reason: 'Unschedulable' | 'SchedulerError', message: string, cycle: number | undefined): void {
    const pod = qp.pod;
    const cur = this.current(pod);
    if (!cur || isAssigned(cur)) {
      // Deleted or bound meanwhile: nothing to report or retry.
      this.queue.done(qp);
      return;
    }
    if (reason === 'Unschedulable' && cycle !== undefined) this.queue.addUnschedulable(qp, cycle);
    else this.queue.addBackoff(qp);
    const msg = truncateMessage(message);
    this.recorder.event(podRef(pod), 'Warning', 'FailedScheduling', msg);
    void this.setUnschedulableCondition(cur, reason, msg);
  }

  private async setUnschedulableCondition(pod: Pod, reason: string, message: string): Promise<void> {
    const old = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
    if (old && old.status === 'False' && old.reason === reason && old.message === message && !pod.status?.nominatedNodeName) return;
    const now = rfc3339(this.clock.now());
    const cond: PodCondition = {
      type: 'PodScheduled',
      status: 'False',
      reason,
      message,
      lastProbeTime: null as unknown as string,
      lastTransitionTime: old && old.status === 'False' ? old.lastTransitionTime : now,
    };
    const patch: Record<string, unknown> = { status: { conditions: [cond] } };
    if (pod.status?.nominatedNodeName) (patch.status as Record<string, unknown>).nominatedNodeName = null;
    try {
      await this.client
        .resource(GVR.pods)
        .namespace(pod.metadata?.namespace ?? 'default')
        .patch(pod.metadata?.name ?? '', 'strategic', patch, { subresource: 'status' });
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.error(err, { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, 'updating PodScheduled condition failed');
    }
  }
}

/** A default scheduler; call run(signal). */
export function newScheduler(opts: SchedulerOptions): Scheduler {
  return new DefaultScheduler(opts);
}
