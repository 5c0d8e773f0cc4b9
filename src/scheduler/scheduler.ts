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
import { DeletedFinalStateUnknown, type Indexer, type SharedIndexInformer } from '../tools/cache/interfaces.js';
import { NAMESPACE_INDEX } from '../tools/cache/store.js';
import type { KubeObject } from '../api/types.js';
import type { EventRecorder } from '../tools/record/interfaces.js';
import { realClock, rfc3339, type Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import type { Registry } from 'prom-client';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import { fitErrorMessage, schedulePod } from './algorithm.js';
import type { ClusterLookups, CycleContext, Snapshot, Status } from './framework.js';
import { newSchedulerMetrics, type SchedulerMetrics } from './metrics.js';
import { newPodNominator, type PodNominator } from './nominator.js';
import { lowerPriorityNominatedPods, preempt, PREEMPTION_BY_SCHEDULER } from './preemption.js';
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
  /** One profile (default: the default profile). */
  profile?: Profile;
  /** Several profiles, each serving its schedulerName (a KubeSchedulerConfiguration's profiles). */
  profiles?: readonly Profile[];
  /** The configuration's percentageOfNodesToScore (0, the default: adaptive). */
  percentageOfNodesToScore?: number;
  /** Where the scheduler_* metrics go (default: prom-client's global registry). */
  registry?: Registry;
  /** An event recorder per profile (reportingController = its schedulerName); default: `recorder` for all. */
  recorderFor?: (schedulerName: string) => EventRecorder;
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
  readonly nominator: PodNominator;
  /** The schedulerNames this scheduler serves. */
  readonly profileNames: readonly string[];
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
  readonly nominator: PodNominator = newPodNominator();
  private readonly client: Client;
  private readonly informers: SharedInformerFactory;
  private readonly recorder: EventRecorder;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: Random;
  private readonly profiles = new Map<string, Profile>();
  private readonly recorders = new Map<string, EventRecorder>();
  private readonly percentageOfNodesToScore: number;
  /** Where the next cycle's filtering starts (nextStartNodeIndex). */
  private nextStartNodeIndex = 0;
  private readonly metrics: SchedulerMetrics;
  private readonly pdbInformer: SharedIndexInformer<PodDisruptionBudget & { [k: string]: unknown }>;
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
    const profiles = opts.profiles ?? [opts.profile ?? defaultProfile({ client: this.client, clock: this.clock })];
    for (const p of profiles) {
      if (this.profiles.has(p.schedulerName)) throw new Error(`duplicate profile with scheduler name ${JSON.stringify(p.schedulerName)}`);
      this.profiles.set(p.schedulerName, p);
      this.recorders.set(p.schedulerName, opts.recorderFor?.(p.schedulerName) ?? opts.recorder);
    }
    if (this.profiles.size === 0) throw new Error('at least one profile is required');
    this.percentageOfNodesToScore = opts.percentageOfNodesToScore ?? 0;
    this.queue = newSchedulingQueue({ clock: this.clock });
    this.metrics = newSchedulerMetrics(() => ({ ...this.queue.counts(), gated: this.gatedPods() }), opts.registry);
    this.pdbInformer = this.informers.podDisruptionBudgets();
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

  get profileNames(): readonly string[] {
    return [...this.profiles.keys()];
  }

  private profileFor(pod: Pod): Profile | undefined {
    return this.profiles.get(pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME);
  }

  /** Whether this scheduler is responsible for the pod at all (a profile serves its schedulerName). */
  private responsibleFor(pod: Pod): boolean {
    return this.profileFor(pod) !== undefined;
  }

  /** Pending pods of ours held back by scheduling gates (never attempted). */
  private gatedPods(): number {
    let n = 0;
    for (const p of this.podInformer.getStore().list()) {
      if (!isAssigned(p) && !isTerminal(p) && (p.spec?.schedulingGates ?? []).length > 0 && this.responsibleFor(p)) n++;
    }
    return n;
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
        } else if (this.pendingAndReady(pod)) {
          this.queue.add(pod);
          this.nominator.update(undefined, pod);
        }
      },
      onUpdate: (oldPod, newPod) => {
        if (isAssigned(newPod)) {
          if (!isAssigned(oldPod)) {
            this.queue.delete(newPod); // bound (by us or someone else)
            this.nominator.delete(newPod);
          }
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
        if (this.pendingAndReady(newPod)) {
          this.queue.update(oldPod, newPod);
          this.nominator.update(oldPod, newPod);
        } else {
          this.queue.delete(newPod);
          this.nominator.delete(newPod);
        }
      },
      onDelete: (obj) => {
        const pod = unwrap(obj);
        if (this.cache.podNode(pod) !== undefined) {
          this.cache.removePod(pod);
          this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
        }
        this.queue.delete(pod);
        this.nominator.delete(pod);
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
    const inNs = <T extends KubeObject>(store: Indexer<T>): T[] =>
      NAMESPACE_INDEX in store.getIndexers() ? store.byIndex(NAMESPACE_INDEX, ns) : store.list().filter((x) => x.metadata?.namespace === ns);
    for (const o of [...inNs(this.svcInformer.getIndexer()), ...inNs(this.rcInformer.getIndexer())]) {
      const v = this.ownerSelector(o, () => {
        const sel = o.spec?.selector;
        return sel && Object.keys(sel).length > 0 ? selectorFromSet(sel) : undefined;
      });
      if (v?.matches(labels)) out.push(v);
    }
    for (const o of [...inNs(this.rsInformer.getIndexer()), ...inNs(this.stsInformer.getIndexer())]) {
      const v = this.ownerSelector(o, () => {
        try {
          const v = selectorFromLabelSelector(o.spec?.selector);
          return v.empty() ? undefined : v;
        } catch (err) {
          this.log.v(4).info({ err: String(err), owner: o.metadata?.name }, 'ignoring invalid selector');
          return undefined;
        }
      });
      if (v?.matches(labels)) out.push(v);
    }
    return out;
  }

  /** The parsed selector of an owner object, made once per informer object (they are replaced on change, never edited). */
  private readonly ownerSelectorCache = new WeakMap<object, Selector | null>();
  private ownerSelector(o: object, make: () => Selector | undefined): Selector | undefined {
    let v = this.ownerSelectorCache.get(o);
    if (v === undefined) this.ownerSelectorCache.set(o, (v = make() ?? null));
    return v ?? undefined;
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
    this.log.info({ profiles: this.profileNames }, 'scheduler started');
    try {
      while (!signal.aborted) {
        if (!(await this.scheduleOne(signal))) break;
        // A queued pod pops at once, so cycles would follow each other in microtasks and keep I/O,
        // timers and everything else sharing the thread (watch events, bindings' answers, Lease
        // renewals, in kcm up the simulated kubelets) waiting until the queue is empty. Upstream's
        // scheduling goroutine shares the CPU with the rest; here each cycle gives the event loop a turn.
        await new Promise<void>((resolve) => setImmediate(resolve));
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
    const profile = this.profileFor(pod);
    if (!profile || !this.pendingAndReady(pod) || this.cache.isAssumed(pod)) {
      this.queue.done(qp);
      return true;
    }
    qp.pod = pod;
    const cycle = this.queue.schedulingCycle();
    const start = this.clock.now();
    const profileName = profile.schedulerName;
    const snapshot = this.cache.snapshot();
    const result = schedulePod(pod, {
      profile,
      snapshot,
      lookups: this.lookups,
      random: this.random,
      nominator: this.nominator,
      percentageOfNodesToScore: profile.percentageOfNodesToScore ?? this.percentageOfNodesToScore,
      startIndex: this.nextStartNodeIndex,
    });
    const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    if (result.kind === 'error') {
      this.log.error(result.message, { pod: key }, 'error scheduling pod; retrying');
      this.metrics.attempt(profileName, 'error', this.clock.since(start) / 1000);
      this.handleFailure(qp, profile, 'SchedulerError', result.message, cycle);
      return true;
    }
    if (result.kind === 'unschedulable') {
      qp.unschedulablePlugins = new Set([...result.nodeStatuses.values()].map((s) => s.plugin ?? ''));
      let message = result.message;
      let nominatedNode: string | undefined;
      if (result.fit && profile.preemption) {
        const outcome = await this.postFilter(pod, profile, result.nodeStatuses, snapshot, result.ctx);
        if (outcome.kind === 'error') {
          this.metrics.attempt(profileName, 'error', this.clock.since(start) / 1000);
          this.handleFailure(qp, profile, 'SchedulerError', outcome.message, cycle);
          return true;
        }
        nominatedNode = outcome.nominatedNode;
        message = fitErrorMessage({ ...result.fit, postFilterMessage: outcome.message });
      }
      this.log.v(2).info({ pod: key, reason: message, nominatedNode }, 'unable to schedule pod; waiting');
      this.metrics.attempt(profileName, 'unschedulable', this.clock.since(start) / 1000);
      this.handleFailure(qp, profile, 'Unschedulable', message, cycle, nominatedNode);
      return true;
    }
    this.nextStartNodeIndex = snapshot.nodes.length > 0 ? (this.nextStartNodeIndex + result.processedNodes) % snapshot.nodes.length : 0;
    const { ctx, node } = result;
    const reserveFailure = this.runReserve(profile, ctx, node);
    if (reserveFailure) {
      this.unreserve(profile, ctx, node);
      if (reserveFailure.code === 'Error') this.handleFailure(qp, profile, 'SchedulerError', `running Reserve plugin ${JSON.stringify(reserveFailure.plugin)}: ${reserveFailure.reasons.join(', ')}`, cycle);
      else {
        qp.unschedulablePlugins = new Set([reserveFailure.plugin ?? '']);
        const msg = fitErrorMessage({ numAllNodes: this.cache.nodeCount(), nodeStatuses: new Map([[node, reserveFailure]]) });
        this.handleFailure(qp, profile, 'Unschedulable', msg, cycle);
      }
      return true;
    }
    const assumed: Pod = { ...pod, spec: { ...pod.spec!, nodeName: node } };
    try {
      this.cache.assumePod(assumed);
    } catch (err) {
      this.log.error(err, { pod: key }, 'assuming pod failed');
      this.unreserve(profile, ctx, node);
      this.handleFailure(qp, profile, 'SchedulerError', String((err as Error).message ?? err), cycle);
      return true;
    }
    this.log.v(2).info({ pod: key, node, evaluatedNodes: result.evaluatedNodes, feasibleNodes: result.feasibleNodes, durationMs: this.clock.since(start) }, 'scheduled pod');
    const p = this.bind(qp, profile, assumed, node, ctx, start, signal).finally(() => this.bindings.delete(p));
    this.bindings.add(p);
    return true;
  }

  /** RunReservePluginsReserve: the first failure, with its plugin. */
  private runReserve(profile: Profile, ctx: CycleContext, node: string): Status | undefined {
    for (const r of profile.reserves ?? []) {
      const s = r.reserve(ctx, node);
      if (s) return { ...s, plugin: r.name };
    }
    return undefined;
  }

  /** RunReservePluginsUnreserve: every reserve plugin, in reverse order. */
  private unreserve(profile: Profile, ctx: CycleContext, node: string): void {
    const rs = profile.reserves ?? [];
    for (let i = rs.length - 1; i >= 0; i--) {
      try {
        rs[i]!.unreserve(ctx, node);
      } catch (err) {
        this.log.error(err, { plugin: rs[i]!.name }, 'unreserve failed');
      }
    }
  }

  /** RunPreBindPlugins: the first failure as the message FailedScheduling carries. */
  private async runPreBind(profile: Profile, ctx: CycleContext, node: string, signal: AbortSignal): Promise<string | undefined> {
    for (const p of profile.preBinds ?? []) {
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

  private async bind(qp: QueuedPod, profile: Profile, assumed: Pod, node: string, ctx: CycleContext, start: number, signal: AbortSignal): Promise<void> {
    const ns = assumed.metadata?.namespace ?? 'default';
    const name = assumed.metadata?.name ?? '';
    const preBindFailure = await this.runPreBind(profile, ctx, node, signal);
    if (preBindFailure) {
      this.log.error(preBindFailure, { pod: `${ns}/${name}`, node }, 'pre-binding failed');
      this.unreserve(profile, ctx, node);
      this.cache.forgetPod(assumed);
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
      this.metrics.attempt(profile.schedulerName, 'error', this.clock.since(start) / 1000);
      this.handleFailure(qp, profile, 'SchedulerError', preBindFailure, undefined);
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
      this.unreserve(profile, ctx, node);
      this.cache.forgetPod(assumed);
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
      if (isNotFound(err)) {
        this.log.v(2).info({ pod: `${ns}/${name}` }, 'pod deleted before binding');
        this.queue.done(qp);
        return;
      }
      this.log.error(err, { pod: `${ns}/${name}`, node }, 'binding failed');
      this.metrics.attempt(profile.schedulerName, 'error', this.clock.since(start) / 1000);
      this.handleFailure(qp, profile, 'SchedulerError', `binding rejected: ${(err as Error)?.message ?? String(err)}`, undefined);
      return;
    }
    this.cache.finishBinding(assumed);
    this.queue.done(qp);
    this.nominator.delete(assumed);
    this.metrics.attempt(profile.schedulerName, 'scheduled', this.clock.since(start) / 1000);
    this.metrics.podScheduled(qp.attempts);
    this.recorderOf(profile).eventf(podRef(assumed), 'Normal', 'Scheduled', 'Successfully assigned %v/%v to %v', ns, name, node);
  }

  /**
   * handleSchedulingFailure: event, requeue (unschedulable or backoff), and
   * the PodScheduled=False condition with the same message.
   */
  private handleFailure(qp: QueuedPod, profile: Profile, reason: 'Unschedulable' | 'SchedulerError', message: string, cycle: number | undefined, nominatedNode?: string): void {
    const pod = qp.pod;
    const cur = this.current(pod);
    if (!cur || isAssigned(cur)) {
      // Deleted or bound meanwhile: nothing to report or retry.
      this.queue.done(qp);
      return;
    }
    // AddNominatedPod: the node preemption freed is held for the pod; '' gives it up.
    if (nominatedNode) this.nominator.add(cur, nominatedNode);
    else if (nominatedNode === '') this.nominator.delete(cur);
    if (reason === 'Unschedulable' && cycle !== undefined) this.queue.addUnschedulable(qp, cycle);
    else this.queue.addBackoff(qp);
    const msg = truncateMessage(message);
    this.recorderOf(profile).event(podRef(pod), 'Warning', 'FailedScheduling', msg);
    void this.setUnschedulableCondition(cur, reason, msg, nominatedNode);
  }

  private recorderOf(profile: Profile): EventRecorder {
    return this.recorders.get(profile.schedulerName) ?? this.recorder;
  }

  /**
   * Runs DefaultPreemption and carries out its choice: each victim gets the
   * DisruptionTarget condition (PreemptionByScheduler) and is deleted, with a
   * Preempted event; lower-priority pods nominated to the same node lose their
   * nomination. Returns the PostFilter part of the message and the
   * nomination: a node, '' to clear it, or undefined to keep it.
   */
  private async postFilter(
    pod: Pod,
    profile: Profile,
    nodeStatuses: Map<string, Status>,
    snapshot: Snapshot,
    ctx: CycleContext | undefined,
  ): Promise<{ kind: 'done'; message?: string; nominatedNode?: string } | { kind: 'error'; message: string }> {
    this.metrics.preemptionAttempt();
    const outcome = preempt(pod, nodeStatuses, {
      profile,
      snapshot,
      lookups: this.lookups,
      random: this.random,
      nominator: this.nominator,
      pdbs: this.pdbInformer.getStore().list(),
      args: profile.preemption,
      now: this.clock.now(),
      ...(ctx ? { ctx } : {}),
    });
    if (outcome.kind === 'none') return { kind: 'done', message: outcome.message, nominatedNode: outcome.clearNomination ? '' : undefined };
    const { node, victims } = outcome.candidate;
    const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    this.log.v(2).info({ pod: key, node, victims: victims.map((v) => `${v.metadata?.namespace}/${v.metadata?.name}`) }, 'preempting');
    const results = await Promise.allSettled(victims.filter((v) => !v.metadata?.deletionTimestamp).map((v) => this.preemptVictim(pod, profile, v, node)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) return { kind: 'error', message: String((failed.reason as Error)?.message ?? failed.reason) };
    this.metrics.preemptionVictims(victims.length);
    for (const p of lowerPriorityNominatedPods(this.nominator, pod, node)) {
      this.nominator.delete(p);
      void this.patchStatus(p, { nominatedNodeName: null }, 'clearing nominatedNodeName');
    }
    return { kind: 'done', nominatedNode: node };
  }

  private async preemptVictim(preemptor: Pod, profile: Profile, victim: Pod, node: string): Promise<void> {
    const ns = victim.metadata?.namespace ?? 'default';
    const name = victim.metadata?.name ?? '';
    const pods = this.client.resource(GVR.pods).namespace(ns);
    const has = (victim.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === PREEMPTION_BY_SCHEDULER);
    try {
      if (!has) {
        const cond: PodCondition = {
          type: 'DisruptionTarget',
          status: 'True',
          reason: PREEMPTION_BY_SCHEDULER,
          message: `${preemptor.spec?.schedulerName || DEFAULT_SCHEDULER_NAME}: preempting to accommodate a higher priority pod`,
          lastTransitionTime: rfc3339(this.clock.now()),
        };
        await pods.patch(name, 'strategic', { status: { conditions: [cond] } }, { subresource: 'status' });
      }
      await pods.delete(name, { preconditions: { uid: victim.metadata?.uid } });
    } catch (err) {
      if (isNotFound(err)) return; // already gone
      this.log.error(err, { victim: `${ns}/${name}`, preemptor: `${preemptor.metadata?.namespace}/${preemptor.metadata?.name}` }, 'preempting pod failed');
      throw err;
    }
    this.recorderOf(profile).eventf(podRef(victim), 'Normal', 'Preempted', 'Preempted by pod %v on node %v', preemptor.metadata?.uid ?? '', node);
  }

  private async patchStatus(pod: Pod, status: Record<string, unknown>, what: string): Promise<void> {
    try {
      await this.client
        .resource(GVR.pods)
        .namespace(pod.metadata?.namespace ?? 'default')
        .patch(pod.metadata?.name ?? '', 'strategic', { status }, { subresource: 'status' });
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.error(err, { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, `${what} failed`);
    }
  }

  /** The PodScheduled=False condition, and the nomination: a node sets it, '' clears it, undefined keeps it. */
  private async setUnschedulableCondition(pod: Pod, reason: string, message: string, nominatedNode: string | undefined): Promise<void> {
    const old = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
    const current = pod.status?.nominatedNodeName ?? '';
    const nominationChanges = nominatedNode !== undefined && nominatedNode !== current;
    if (old && old.status === 'False' && old.reason === reason && old.message === message && !nominationChanges) return;
    const now = rfc3339(this.clock.now());
    const cond: PodCondition = {
      type: 'PodScheduled',
      status: 'False',
      reason,
      message,
      lastProbeTime: null as unknown as string,
      lastTransitionTime: old && old.status === 'False' ? old.lastTransitionTime : now,
    };
    const status: Record<string, unknown> = { conditions: [cond] };
    if (nominationChanges) status.nominatedNodeName = nominatedNode || null;
    await this.patchStatus(pod, status, 'updating PodScheduled condition');
  }
}

/** A default scheduler; call run(signal). */
export function newScheduler(opts: SchedulerOptions): Scheduler {
  return new DefaultScheduler(opts);
}
