/**
 * The node lifecycle controller (pkg/controller/nodelifecycle/node_lifecycle_controller.go).
 *
 * - On every node change: keeps the NoSchedule taints in step with the
 *   node's conditions (not-ready, unreachable, memory-pressure,
 *   disk-pressure, pid-pressure, network-unavailable) and spec.unschedulable,
 *   and reconciles the beta os/arch labels. This is what removes the
 *   `node.kubernetes.io/not-ready:NoSchedule` taint the API server puts on
 *   new nodes once they report Ready.
 * - Every --node-monitor-period: checks each node's Ready heartbeat and its
 *   Lease; after --node-monitor-grace-period (--node-startup-grace-period for
 *   nodes that never posted status) without either, sets the conditions
 *   Unknown (NodeStatusUnknown), records NodeNotReady and marks the node's
 *   pods not Ready. Unhealthy nodes are queued per zone for the NoExecute
 *   `not-ready` / `unreachable` taint, rate-limited by the zone's state
 *   (--node-eviction-rate, --secondary-node-eviction-rate,
 *   --unhealthy-zone-threshold, --large-cluster-size-threshold); healthy
 *   nodes lose those taints. When every zone is fully disrupted, tainting
 *   stops and existing NoExecute taints are removed (master disruption mode).
 * - Events (source `node-controller`): RegisteredNode, RemovingNode,
 *   NodeNotReady.
 *
 * Pods are evicted by the taint-eviction controller, not here.
 */
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node, NodeCondition, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { taintExists } from '../../api/taints.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Indexer, Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { tryUpdateNodeHealth, type NodeHealthData } from './node-health.js';
import { ensurePodNodeNameIndex, getNodeCondition, markPodsNotReady, POD_NODE_NAME_INDEX, recordNodeEvent, recordNodeStatusChange } from './node-util.js';
import { newRateLimitedTimedQueue, type RateLimitedTimedQueue } from './rate-limited-queue.js';
import {
  CONDITION_TAINT_KEYS,
  NODE_CONDITION_TO_TAINT_KEY,
  NOT_READY_TAINT_TEMPLATE,
  removeTaintsOffNode,
  swapNodeControllerTaint,
  taintSetDiff,
  TAINT_NODE_UNSCHEDULABLE,
  UNREACHABLE_TAINT_TEMPLATE,
  type TaintWriter,
} from './taints.js';
import { computeZoneState, getZoneKey, LABEL_NODE_DISRUPTION_EXCLUSION, type ZoneState } from './zones.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const NODE_LIFECYCLE_CONTROLLER_NAME = 'node-lifecycle-controller';
/** Event source of upstream's node lifecycle controller. */
export const NODE_CONTROLLER_EVENT_SOURCE = 'node-controller';
/** How often the NoExecute tainting queues are tried (scheduler.NodeEvictionPeriod). */
export const NODE_EVICTION_PERIOD_MS = 100;
export const NODE_UPDATE_WORKER_SIZE = 8;
export const POD_UPDATE_WORKER_SIZE = 4;
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Retries of a node's health update within one pass (NodeHealthUpdateRetry), 20 ms apart. */
const NODE_HEALTH_UPDATE_RETRY = 5;
const RETRY_SLEEP_MS = 20;

export const DEFAULTS = {
  nodeMonitorPeriodMs: 5_000,
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  unhealthyZoneThreshold: 0.55,
  largeClusterSizeThreshold: 50,
} as const;

/** Labels kept in step: the beta label follows the GA one (labelReconcileInfo). */
const LABEL_RECONCILE = [
  { primary: 'kubernetes.io/os', secondary: 'beta.kubernetes.io/os' },
  { primary: 'kubernetes.io/arch', secondary: 'beta.kubernetes.io/arch' },
] as const;

type NodeObj = Kube<Node>;
type PodObj = Kube<Pod>;

export interface NodeLifecycleController extends Controller {
  hasSynced(): boolean;
  /** One health pass over every node (the --node-monitor-period loop body). */
  monitorNodeHealth(): Promise<void>;
  /** One try of every zone's NoExecute tainting queue (the 100 ms loop body). */
  doNoExecuteTaintingPass(): Promise<void>;
  /** NoSchedule taints and labels of one node (the node worker's sync). */
  syncNode(name: string): Promise<void>;
  /** Zone states, for tests and status. */
  zoneStates(): ReadonlyMap<string, ZoneState>;
}

async function parallelize(n: number, count: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const loop = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, count) }, loop));
}

class NodeLifecycle implements NodeLifecycleController {
  readonly name = NODE_LIFECYCLE_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly nodes: Lister<NodeObj>;
  private readonly pods: Lister<PodObj>;
  private readonly podIndexer: Indexer<PodObj>;
  private readonly leases: Lister<Kube<Lease>>;
  private readonly synced: Array<() => boolean>;
  private readonly nodeWorker: QueueWorker;
  private readonly podWorker: QueueWorker;
  private readonly taints: TaintWriter;

  private readonly monitorPeriodMs: number;
  private readonly gracePeriodMs: number;
  private readonly startupGracePeriodMs: number;
  private readonly evictionQPS: number;
  private readonly secondaryEvictionQPS: number;
  private readonly unhealthyZoneThreshold: number;
  private readonly largeClusterThreshold: number;

  private readonly health = new Map<string, NodeHealthData>();
  private readonly knownNodes = new Map<string, NodeObj>();
  private readonly states = new Map<string, ZoneState>();
  private readonly tainters = new Map<string, RateLimitedTimedQueue>();
  private readonly nodesToRetry = new Set<string>();
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    const o = ctx.options;
    this.monitorPeriodMs = o.nodeMonitorPeriodMs || DEFAULTS.nodeMonitorPeriodMs;
    this.gracePeriodMs = o.nodeMonitorGracePeriodMs || DEFAULTS.nodeMonitorGracePeriodMs;
    this.startupGracePeriodMs = o.nodeStartupGracePeriodMs || DEFAULTS.nodeStartupGracePeriodMs;
    this.evictionQPS = o.nodeEvictionRate ?? DEFAULTS.nodeEvictionRate;
    this.secondaryEvictionQPS = o.secondaryNodeEvictionRate ?? DEFAULTS.secondaryNodeEvictionRate;
    this.unhealthyZoneThreshold = o.unhealthyZoneThreshold ?? DEFAULTS.unhealthyZoneThreshold;
    this.largeClusterThreshold = o.largeClusterSizeThreshold ?? DEFAULTS.largeClusterSizeThreshold;
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder(NODE_CONTROLLER_EVENT_SOURCE);
    this.taints = { client: ctx.client, clock: ctx.clock, log: this.log };

    const nodeInf = ctx.informers.nodes();
    const podInf = ctx.informers.pods();
    const leaseInf = ctx.informers.leases();
    ensurePodNodeNameIndex(podInf);
    this.nodes = newLister(nodeInf.getIndexer());
    this.podIndexer = podInf.getIndexer();
    this.pods = newLister(this.podIndexer);
    this.leases = newLister(leaseInf.getIndexer());
    this.synced = [() => nodeInf.hasSynced(), () => podInf.hasSynced(), () => leaseInf.hasSynced()];

    this.nodeWorker = newQueueWorker({ name: 'node_lifecycle_controller', clock: ctx.clock, logger: this.log, sync: (name) => this.syncNode(name) });
    this.podWorker = newQueueWorker({ name: 'node_lifecycle_controller_pods', clock: ctx.clock, logger: this.log, sync: (key) => this.processPod(key) });

    nodeInf.addEventHandler({
      onAdd: (n) => this.nodeWorker.enqueue(n.metadata?.name ?? ''),
      onUpdate: (_o, n) => this.nodeWorker.enqueue(n.metadata?.name ?? ''),
      onDelete: (n) => {
        const name = objectFromDeleted(n)?.metadata?.name;
        if (name) this.nodesToRetry.delete(name);
      },
    });
    podInf.addEventHandler({
      onAdd: (p) => this.podUpdated(undefined, p),
      onUpdate: (o, p) => this.podUpdated(o, p),
    });
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.nodeWorker.healthy() && this.podWorker.healthy();
  }
  zoneStates(): ReadonlyMap<string, ZoneState> {
    return this.states;
  }

  run(_workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, async () => {
      const every = async (periodMs: number, fn: () => Promise<void>, what: string) => {
        while (!signal.aborted) {
          try {
            await fn();
          } catch (err) {
            this.log.error(err, `Error ${what}`);
          }
          try {
            await this.ctx.clock.sleep(periodMs, signal);
          } catch {
            return;
          }
        }
      };
      await Promise.all([
        this.nodeWorker.run(NODE_UPDATE_WORKER_SIZE, signal),
        this.podWorker.run(POD_UPDATE_WORKER_SIZE, signal),
        every(NODE_EVICTION_PERIOD_MS, () => this.doNoExecuteTaintingPass(), 'tainting nodes NoExecute'),
        every(this.monitorPeriodMs, () => this.monitorNodeHealth(), 'monitoring node health'),
      ]);
    });
  }

  // --- NoSchedule taints and labels, per node ---

  async syncNode(name: string): Promise<void> {
    await this.doNoScheduleTaintingPass(name);
    await this.reconcileNodeLabels(name);
  }

  private async doNoScheduleTaintingPass(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const wanted: Taint[] = [];
    for (const c of node.status?.conditions ?? []) {
      const key = NODE_CONDITION_TO_TAINT_KEY[c.type]?.[c.status];
      if (key) wanted.push({ key, effect: 'NoSchedule' });
    }
    if (node.spec?.unschedulable) wanted.push({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' });
    const current = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && (t.key === TAINT_NODE_UNSCHEDULABLE || CONDITION_TAINT_KEYS.has(t.key)));
    const { add, remove } = taintSetDiff(wanted, current);
    if (!add.length && !remove.length) return;
    if (!(await swapNodeControllerTaint(this.taints, add, remove, node))) throw new Error(`failed to swap taints of node ${name}`);
  }

  private async reconcileNodeLabels(name: string): Promise<void> {
    const node = this.nodes.get(name);
    const labels = node?.metadata?.labels;
    if (!node || !labels) return;
    const update: Record<string, string> = {};
    for (const r of LABEL_RECONCILE) {
      const primary = labels[r.primary];
      if (primary === undefined) continue;
      if (labels[r.secondary] !== primary) update[r.secondary] = primary;
    }
    if (!Object.keys(update).length) return;
    await this.ctx.client.resource<NodeObj>(GVR.nodes).patch(name, 'strategic', { metadata: { labels: update } });
  }

  // --- pods assigned to unhealthy nodes ---

  private podUpdated(oldPod: PodObj | undefined, pod: PodObj): void {
    const nodeName = pod.spec?.nodeName;
    if (nodeName && (!oldPod || oldPod.spec?.nodeName !== nodeName)) this.podWorker.enqueue(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
  }

  /** A pod newly bound to a node that is not Ready is marked not Ready. */
  private async processPod(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const pod = this.pods.namespace(ns).get(name);
    if (!pod) return;
    const nodeName = pod.spec?.nodeName ?? '';
    const h = this.health.get(nodeName);
    if (!h) return;
    if (!this.nodes.get(nodeName)) throw new Error(`node ${nodeName} of pod ${key} is not in the cache`);
    const ready = getNodeCondition(h.status, 'Ready');
    if (!ready) return;
    if (ready.status !== 'True') await markPodsNotReady(this.podDeps(), [pod], nodeName);
  }

  private podDeps() {
    return { client: this.ctx.client, recorder: this.recorder, clock: this.ctx.clock, log: this.log };
  }

  private podsOnNode(name: string): PodObj[] {
    return this.podIndexer.byIndex(POD_NODE_NAME_INDEX, name);
  }

  // --- health monitoring ---

  async monitorNodeHealth(): Promise<void> {
    const nodes = this.nodes.list();
    const { added, deleted, newZoneRepresentatives } = this.classifyNodes(nodes);
    for (const n of newZoneRepresentatives) this.addTainterForNewZone(n);
    for (const n of added) {
      const name = n.metadata?.name ?? '';
      this.log.v(1).info({ node: name }, 'Controller observed a new Node');
      recordNodeEvent(this.recorder, name, n.metadata?.uid ?? '', 'Normal', 'RegisteredNode', `Registered Node ${name} in Controller`);
      this.knownNodes.set(name, n);
      this.addTainterForNewZone(n);
      await this.markNodeAsReachable(n).catch(() => undefined);
    }
    for (const n of deleted) {
      const name = n.metadata?.name ?? '';
      this.log.v(1).info({ node: name }, 'Controller observed a Node deletion');
      recordNodeEvent(this.recorder, name, n.metadata?.uid ?? '', 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      this.knownNodes.delete(name);
      this.health.delete(name);
    }

    const zoneConditions = new Map<string, Array<NodeCondition | undefined>>();
    await parallelize(NODE_UPDATE_WORKER_SIZE, nodes.length, async (i) => {
      let node = deepCopy(nodes[i]!);
      const name = node.metadata?.name ?? '';
      let result: Awaited<ReturnType<typeof tryUpdateNodeHealth>> | undefined;
      for (let attempt = 0; attempt < NODE_HEALTH_UPDATE_RETRY && !result; attempt++) {
        try {
          result = await tryUpdateNodeHealth(this.healthDeps(), this.health, node);
        } catch {
          try {
            node = await this.ctx.client.resource<NodeObj>(GVR.nodes).get(name);
          } catch (err) {
            this.log.error(err, { node: name }, 'Failed while getting a Node to retry updating node health. Probably Node was deleted');
            break;
          }
          await this.ctx.clock.sleep(RETRY_SLEEP_MS);
        }
      }
      if (!result) {
        this.log.error({ node: name }, 'Update health of Node from Controller error, Skipping - no pods will be evicted');
        return;
      }
      const { observedReadyCondition: observed, currentReadyCondition: current } = result;
      if (!(node.metadata?.labels && LABEL_NODE_DISRUPTION_EXCLUSION in node.metadata.labels)) {
        const zone = getZoneKey(node);
        const list = zoneConditions.get(zone) ?? [];
        list.push(current);
        zoneConditions.set(zone, list);
      }
      if (current) {
        const pods = this.podsOnNode(name);
        await this.processTaintBaseEviction(node, observed);
        const needsRetry = this.nodesToRetry.has(name);
        const becameNotReady = current.status !== 'True' && observed.status === 'True';
        if (becameNotReady) recordNodeStatusChange(this.recorder, node, 'NodeNotReady');
        if (becameNotReady || (needsRetry && observed.status !== 'True')) {
          try {
            await markPodsNotReady(this.podDeps(), pods, name);
          } catch (err) {
            this.log.error(err, { node: name }, 'unable to mark all pods NotReady on node; queuing for retry');
            this.nodesToRetry.add(name);
            return;
          }
        }
      }
      this.nodesToRetry.delete(name);
    });
    await this.handleDisruption(zoneConditions, nodes);
  }

  private healthDeps() {
    return {
      client: this.ctx.client,
      log: this.log,
      now: () => this.ctx.clock.now(),
      nodeMonitorGracePeriodMs: this.gracePeriodMs,
      nodeStartupGracePeriodMs: this.startupGracePeriodMs,
      getLease: (name: string) => this.leases.namespace(NODE_LEASE_NAMESPACE).get(name),
    };
  }

  private classifyNodes(all: NodeObj[]): { added: NodeObj[]; deleted: NodeObj[]; newZoneRepresentatives: NodeObj[] } {
    const added: NodeObj[] = [];
    const deleted: NodeObj[] = [];
    const newZoneRepresentatives: NodeObj[] = [];
    for (const n of all) {
      if (!this.knownNodes.has(n.metadata?.name ?? '')) added.push(n);
      else if (!this.states.has(getZoneKey(n))) newZoneRepresentatives.push(n);
    }
    if (this.knownNodes.size + added.length !== all.length) {
      const present = new Set(all.map((n) => n.metadata?.name ?? ''));
      for (const [name, n] of this.knownNodes) if (!present.has(name)) deleted.push(n);
    }
    return { added, deleted, newZoneRepresentatives };
  }

  private addTainterForNewZone(node: NodeObj): void {
    const zone = getZoneKey(node);
    if (this.states.has(zone)) return;
    this.states.set(zone, 'Initial');
    if (!this.tainters.has(zone)) this.tainters.set(zone, newRateLimitedTimedQueue(this.ctx.clock, this.evictionQPS));
    this.log.info({ zone }, 'Initializing eviction metric for zone');
  }

  private tainter(node: Node): RateLimitedTimedQueue {
    const zone = getZoneKey(node);
    let q = this.tainters.get(zone);
    if (!q) {
      q = newRateLimitedTimedQueue(this.ctx.clock, this.evictionQPS);
      this.tainters.set(zone, q);
    }
    return q;
  }

  private async processTaintBaseEviction(node: NodeObj, observed: NodeCondition): Promise<void> {
    const name = node.metadata?.name ?? '';
    switch (observed.status) {
      case 'False':
        if (taintExists(node.spec?.taints, UNREACHABLE_TAINT_TEMPLATE)) {
          if (!(await swapNodeControllerTaint(this.taints, [NOT_READY_TAINT_TEMPLATE], [UNREACHABLE_TAINT_TEMPLATE], node))) {
            this.log.error({ node: name }, 'Failed to instantly swap UnreachableTaint to NotReadyTaint. Will try again in the next cycle');
          }
        } else if (this.markNodeForTainting(node, 'False')) {
          this.log.v(2).info({ node: name }, 'Node is NotReady. Adding it to the Taint queue');
        }
        break;
      case 'Unknown':
        if (taintExists(node.spec?.taints, NOT_READY_TAINT_TEMPLATE)) {
          if (!(await swapNodeControllerTaint(this.taints, [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], node))) {
            this.log.error({ node: name }, 'Failed to instantly swap NotReadyTaint to UnreachableTaint. Will try again in the next cycle');
          }
        } else if (this.markNodeForTainting(node, 'Unknown')) {
          this.log.v(2).info({ node: name }, 'Node is unresponsive. Adding it to the Taint queue');
        }
        break;
      case 'True':
        try {
          if (await this.markNodeAsReachable(node)) this.log.v(2).info({ node: name }, 'Node is healthy again, removed all taints');
        } catch {
          this.log.error({ node: name }, 'Failed to remove taints from node. Will retry in next iteration');
        }
        break;
    }
  }

  private markNodeForTainting(node: NodeObj, status: 'False' | 'Unknown'): boolean {
    const q = this.tainter(node);
    const name = node.metadata?.name ?? '';
    const template = status === 'False' ? NOT_READY_TAINT_TEMPLATE : UNREACHABLE_TAINT_TEMPLATE;
    if (!taintExists(node.spec?.taints, template)) q.remove(name);
    return q.add(name, node.metadata?.uid ?? '');
  }

  /** Removes both NoExecute taints and forgets the node in its zone's queue; true when it was queued. */
  private async markNodeAsReachable(node: NodeObj): Promise<boolean> {
    const name = node.metadata?.name ?? '';
    try {
      await removeTaintsOffNode(this.taints, name, node, [UNREACHABLE_TAINT_TEMPLATE]);
    } catch (err) {
      this.log.error(err, { node: name }, 'Failed to remove unreachable taint from node');
      throw err;
    }
    try {
      await removeTaintsOffNode(this.taints, name, node, [NOT_READY_TAINT_TEMPLATE]);
    } catch (err) {
      this.log.error(err, { node: name }, 'Failed to remove not-ready taint from node');
      throw err;
    }
    return this.tainter(node).remove(name);
  }

  async doNoExecuteTaintingPass(): Promise<void> {
    for (const q of [...this.tainters.values()]) {
      await q.try(async (v) => {
        const node = this.nodes.get(v.value);
        if (!node) {
          this.log.info({ node: v.value }, 'Node no longer present in nodeLister');
          return [true, 0];
        }
        const ready = getNodeCondition(node.status, 'Ready');
        if (!ready) {
          this.log.info({ node: v.value }, 'Failed to get NodeCondition from the node status');
          return [false, 50];
        }
        let add: Taint;
        let opposite: Taint;
        switch (ready.status) {
          case 'False':
            add = NOT_READY_TAINT_TEMPLATE;
            opposite = UNREACHABLE_TAINT_TEMPLATE;
            break;
          case 'Unknown':
            add = UNREACHABLE_TAINT_TEMPLATE;
            opposite = NOT_READY_TAINT_TEMPLATE;
            break;
          default:
            this.log.v(4).info({ node: v.value }, "Node was in a taint queue, but it's ready now. Ignoring taint request");
            return [true, 0];
        }
        return [await swapNodeControllerTaint(this.taints, [add], [opposite], node), 0];
      });
    }
  }

  // --- zones ---

  private reducedQPS(zoneSize: number): number {
    return zoneSize > this.largeClusterThreshold ? this.secondaryEvictionQPS : 0;
  }

  private setLimiterInZone(zone: string, zoneSize: number, state: ZoneState): void {
    const q = this.tainters.get(zone);
    if (!q) return;
    switch (state) {
      case 'Normal':
      case 'FullDisruption':
        q.swapLimiter(this.evictionQPS);
        break;
      case 'PartialDisruption':
        q.swapLimiter(this.reducedQPS(zoneSize));
        break;
      case 'Initial':
        break;
    }
  }

  private async handleDisruption(zoneConditions: Map<string, Array<NodeCondition | undefined>>, nodes: NodeObj[]): Promise<void> {
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conds] of zoneConditions) {
      const [, state] = computeZoneState(conds, this.unhealthyZoneThreshold);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.states.has(zone)) {
        this.log.error({ zone }, 'Setting initial state for unseen zone');
        this.states.set(zone, 'Initial');
      }
    }
    let allWasFullyDisrupted = true;
    for (const [zone, state] of [...this.states]) {
      if (!zoneConditions.has(zone)) {
        this.states.delete(zone);
        continue;
      }
      if (state !== 'FullDisruption') {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return;
    if (allAreFullyDisrupted) {
      this.log.info('Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      for (const n of nodes) {
        await this.markNodeAsReachable(n).catch(() => this.log.error({ node: n.metadata?.name }, 'Failed to remove taints from Node'));
      }
      for (const zone of this.states.keys()) this.tainters.get(zone)?.swapLimiter(0);
      for (const zone of this.states.keys()) this.states.set(zone, 'FullDisruption');
      return;
    }
    if (allWasFullyDisrupted) {
      this.log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
      const now = this.ctx.clock.now();
      for (const n of nodes) {
        const h = this.health.get(n.metadata?.name ?? '');
        if (h) this.health.set(n.metadata?.name ?? '', { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      }
      for (const zone of [...this.states.keys()]) {
        const state = newStates.get(zone) ?? 'Normal';
        this.setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, state);
        this.states.set(zone, state);
      }
      return;
    }
    for (const [zone, state] of [...this.states]) {
      const next = newStates.get(zone);
      if (!next || next === state) continue;
      this.log.info({ zone, newState: next }, 'Controller detected that zone is now in new state');
      this.setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, next);
      this.states.set(zone, next);
    }
  }
}

export function newNodeLifecycleController(ctx: ControllerContext): NodeLifecycleController {
  return new NodeLifecycle(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: NODE_LIFECYCLE_CONTROLLER_NAME,
  aliases: ['nodelifecycle'],
  requiredResources: [GVR.nodes, GVR.pods, GVR.leases],
  defaultWorkers: 1,
  create: (ctx) => newNodeLifecycleController(ctx),
};
