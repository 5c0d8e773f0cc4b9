/**
 * The taint eviction controller, a.k.a. NoExecute taint manager
 * (pkg/controller/tainteviction/taint_eviction.go).
 *
 * For each pod bound to a node with NoExecute taints:
 * - a taint the pod does not tolerate: the pod is deleted at once;
 * - all tolerated, the shortest `tolerationSeconds` is T: the pod is
 *   deleted T after the controller noticed (an earlier pending deletion is
 *   kept); no tolerationSeconds: never;
 * - the taints go away (or a toleration now tolerates forever): a pending
 *   deletion is cancelled ("Cancelling deletion of Pod ns/name").
 * Before deleting, the pod gets the DisruptionTarget condition
 * (DeletionByTaintManager); events (source `taint-eviction-controller`)
 * TaintManagerEviction "Marking for deletion Pod ns/name".
 */
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import { updatePodCondition } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Indexer, Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { ensurePodNodeNameIndex, POD_NODE_NAME_INDEX } from '../nodelifecycle/node-util.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { newTimedWorkerQueue, type TimedWork, type TimedWorkerQueue } from './timed-workers.js';
import { getMatchingTolerations } from '../../api/taints.js';
import { getMinTolerationTimeMs, getNoExecuteTaints } from './tolerations.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const TAINT_EVICTION_CONTROLLER_NAME = 'taint-eviction-controller';
export const UPDATE_WORKER_SIZE = 8;
/** Attempts to mark and delete a pod when its time comes. */
const DELETE_RETRIES = 5;
const DELETE_RETRY_SLEEP_MS = 10;

type PodObj = Kube<Pod>;
type NodeObj = Kube<Node>;

export interface TaintEvictionController extends Controller {
  hasSynced(): boolean;
  /** Processes one node (its NoExecute taints against its pods). */
  handleNodeUpdate(nodeName: string): Promise<void>;
  /** Pending evictions (tests). */
  pendingEvictions(): number;
}

function taintsEqual(a: readonly Taint[], b: readonly Taint[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function podKey(ns: string, name: string, node: string): string {
  return JSON.stringify([ns, name, node]);
}

class TaintEviction implements TaintEvictionController {
  readonly name = TAINT_EVICTION_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly nodes: Lister<NodeObj>;
  private readonly pods: Lister<PodObj>;
  private readonly podIndexer: Indexer<PodObj>;
  private readonly synced: Array<() => boolean>;
  private readonly nodeWorker: QueueWorker;
  private readonly podWorker: QueueWorker;
  private readonly queue: TimedWorkerQueue;
  /** NoExecute taints of tainted nodes, by node name. */
  private readonly taintedNodes = new Map<string, Taint[]>();
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder(TAINT_EVICTION_CONTROLLER_NAME);
    const nodeInf = ctx.informers.nodes();
    const podInf = ctx.informers.pods();
    ensurePodNodeNameIndex(podInf);
    this.nodes = newLister(nodeInf.getIndexer());
    this.podIndexer = podInf.getIndexer();
    this.pods = newLister(this.podIndexer);
    this.synced = [() => nodeInf.hasSynced(), () => podInf.hasSynced()];
    this.queue = newTimedWorkerQueue(
      ctx.clock,
      (w) => this.deletePod(w),
      (err, w) => this.log.error(err, { pod: w.key }, 'failed to delete pod after retries'),
    );
    this.nodeWorker = newQueueWorker({ name: 'taint_eviction_controller_nodes', clock: ctx.clock, logger: this.log, sync: (n) => this.handleNodeUpdate(n) });
    this.podWorker = newQueueWorker({ name: 'taint_eviction_controller_pods', clock: ctx.clock, logger: this.log, sync: (k) => this.handlePodUpdate(k) });

    podInf.addEventHandler({
      onAdd: (p) => this.podUpdated(undefined, p),
      onUpdate: (o, p) => this.podUpdated(o, p),
      onDelete: (p) => {
        const pod = objectFromDeleted(p);
        if (pod) this.podUpdated(pod, undefined);
      },
    });
    nodeInf.addEventHandler({
      onAdd: (n) => this.nodeUpdated(undefined, n),
      onUpdate: (o, n) => this.nodeUpdated(o, n),
      onDelete: (n) => {
        const node = objectFromDeleted(n);
        if (node) this.nodeUpdated(node, undefined);
      },
    });
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.nodeWorker.healthy() && this.podWorker.healthy();
  }
  pendingEvictions(): number {
    return this.queue.pending();
  }

  async run(_workers: number, signal: AbortSignal): Promise<void> {
    try {
      await this.lifecycle.run(signal, this.synced, () =>
        Promise.all([this.nodeWorker.run(UPDATE_WORKER_SIZE, signal), this.podWorker.run(UPDATE_WORKER_SIZE, signal)]),
      );
    } finally {
      // Also when the caches never synced: handlers may have queued evictions.
      this.queue.stop();
    }
  }

  private podUpdated(oldPod: PodObj | undefined, newPod: PodObj | undefined): void {
    const p = newPod ?? oldPod;
    if (!p) return;
    if (
      oldPod &&
      newPod &&
      oldPod.spec?.nodeName === newPod.spec?.nodeName &&
      JSON.stringify(oldPod.spec?.tolerations ?? []) === JSON.stringify(newPod.spec?.tolerations ?? [])
    ) {
      return;
    }
    this.podWorker.enqueue(podKey(p.metadata?.namespace ?? '', p.metadata?.name ?? '', p.spec?.nodeName ?? ''));
  }

  private nodeUpdated(oldNode: NodeObj | undefined, newNode: NodeObj | undefined): void {
    const n = newNode ?? oldNode;
    if (!n) return;
    if (oldNode && newNode && taintsEqual(getNoExecuteTaints(oldNode.spec?.taints), getNoExecuteTaints(newNode.spec?.taints))) return;
    this.nodeWorker.enqueue(n.metadata?.name ?? '');
  }

  private async handlePodUpdate(key: string): Promise<void> {
    const [ns, name, nodeName] = JSON.parse(key) as [string, string, string];
    const pod = this.pods.namespace(ns).get(name);
    const fullName = `${ns}/${name}`;
    if (!pod) {
      this.log.v(4).info({ pod: fullName }, 'Noticed pod deletion');
      this.cancelWorkWithEvent(ns, name);
      return;
    }
    // Keyed by node: an item for another node than the pod's current one is stale.
    if ((pod.spec?.nodeName ?? '') !== nodeName || !nodeName) return;
    this.log.v(4).info({ pod: fullName }, 'Noticed pod update');
    const taints = this.taintedNodes.get(nodeName);
    // The node was deleted or lost its taints before: cancelling was done then.
    if (!taints) return;
    this.processPodOnNode(pod, nodeName, taints, this.ctx.clock.now());
  }

  async handleNodeUpdate(nodeName: string): Promise<void> {
    const node = this.nodes.get(nodeName);
    if (!node) {
      this.taintedNodes.delete(nodeName);
      return;
    }
    this.log.v(4).info({ node: nodeName }, 'Noticed node update');
    const taints = getNoExecuteTaints(node.spec?.taints);
    if (taints.length) this.taintedNodes.set(nodeName, taints);
    else this.taintedNodes.delete(nodeName);
    const pods = this.podIndexer.byIndex(POD_NODE_NAME_INDEX, nodeName);
    if (!pods.length) return;
    if (!taints.length) {
      for (const p of pods) this.cancelWorkWithEvent(p.metadata?.namespace ?? '', p.metadata?.name ?? '');
      return;
    }
    const now = this.ctx.clock.now();
    for (const p of pods) this.processPodOnNode(p, nodeName, taints, now);
  }

  private processPodOnNode(pod: PodObj, nodeName: string, taints: Taint[], now: number): void {
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const key = `${ns}/${name}`;
    if (!taints.length) this.cancelWorkWithEvent(ns, name);
    const [allTolerated, used] = getMatchingTolerations(taints, pod.spec?.tolerations);
    if (!allTolerated) {
      this.log.v(2).info({ pod: key, node: nodeName }, 'Not all taints are tolerated after update for pod on node');
      // Deleted right away: any scheduled work is replaced.
      this.cancelWorkWithEvent(ns, name);
      this.queue.addWork(key, now, now);
      return;
    }
    const minMs = getMinTolerationTimeMs(used);
    if (minMs < 0) {
      this.log.v(4).info({ pod: key }, 'Current tolerations for pod tolerate forever, cancelling any scheduled deletion');
      this.cancelWorkWithEvent(ns, name);
      return;
    }
    let start = now;
    const trigger = now + minMs;
    const scheduled = this.queue.getWork(key);
    if (scheduled) {
      start = scheduled.createdAt;
      if (start + minMs < trigger) return;
      this.cancelWorkWithEvent(ns, name);
    }
    this.queue.addWork(key, start, start + minMs);
  }

  private cancelWorkWithEvent(ns: string, name: string): void {
    if (this.queue.cancelWork(`${ns}/${name}`)) {
      this.recorder.event({ apiVersion: 'v1', kind: 'Pod', name, namespace: ns }, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${ns}/${name}`);
    }
  }

  /** Marks the pod with DisruptionTarget and deletes it; retried a few times, then the error is kept. */
  private async deletePod(work: TimedWork): Promise<void> {
    const i = work.key.indexOf('/');
    const ns = work.key.slice(0, i);
    const name = work.key.slice(i + 1);
    this.log.info({ controller: this.name, pod: work.key }, 'Deleting pod');
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', name, namespace: ns }, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${ns}/${name}`);
    let lastErr: unknown;
    for (let attempt = 0; attempt < DELETE_RETRIES; attempt++) {
      try {
        await this.addConditionAndDeletePod(ns, name);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        lastErr = err;
        await this.ctx.clock.sleep(DELETE_RETRY_SLEEP_MS);
      }
    }
    throw lastErr;
  }

  private async addConditionAndDeletePod(ns: string, name: string): Promise<void> {
    const pods = this.ctx.client.resource<PodObj>(GVR.pods).namespace(ns);
    const pod = await pods.get(name);
    const status = deepCopy(pod.status ?? {});
    const changed = updatePodCondition(
      status,
      { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' },
      rfc3339(this.ctx.clock.now()),
    );
    if (changed) {
      const cond = status.conditions!.find((c) => c.type === 'DisruptionTarget');
      await pods.patch(name, 'strategic', { metadata: { uid: pod.metadata?.uid }, status: { conditions: [cond] } }, { subresource: 'status' });
    }
    await pods.delete(name);
  }
}

export function newTaintEvictionController(ctx: ControllerContext): TaintEvictionController {
  return new TaintEviction(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: TAINT_EVICTION_CONTROLLER_NAME,
  aliases: [],
  requiredResources: [GVR.nodes, GVR.pods],
  defaultWorkers: 1,
  create: (ctx) => newTaintEvictionController(ctx),
};
