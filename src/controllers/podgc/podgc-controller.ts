/**
 * The pod garbage collector (pkg/controller/podgc/gc_controller.go). Every
 * 20 s, from the pod and node caches:
 * - terminated pods (phase not Pending/Running/Unknown) beyond
 *   --terminated-pod-gc-threshold (default 12500; 0 disables) are deleted,
 *   evicted ones first, then oldest first;
 * - terminating pods on a NotReady node with the
 *   `node.kubernetes.io/out-of-service` taint are force-deleted;
 * - pods bound to a node absent from the cache are quarantined 40 s, then
 *   (if a live read confirms the node is gone) marked Failed with a
 *   DisruptionTarget condition and force-deleted;
 * - terminating pods never scheduled are force-deleted.
 * Non-terminal pods are patched to phase Failed before deletion; deletions
 * use grace period 0.
 */
import type { Node, Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import type { Controller } from '../../controller/types.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import { parseTime, rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const POD_GC_CONTROLLER_NAME = 'pod-garbage-collector-controller';
export const GC_CHECK_PERIOD_MS = 20_000;
export const QUARANTINE_TIME_MS = 40_000;
export const DEFAULT_TERMINATED_POD_GC_THRESHOLD = 12500;
export const TAINT_NODE_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

export interface PodGCController extends Controller {
  /** One pass of every collection (the 20 s loop body). */
  gc(): Promise<void>;
  hasSynced(): boolean;
}

type PodObj = Kube<Pod>;
type NodeObj = Kube<Node>;

function isPodTerminated(p: PodObj): boolean {
  const phase = p.status?.phase;
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

function isEvicted(p: PodObj): boolean {
  return p.status?.phase === 'Failed' && p.status?.reason === 'Evicted';
}

function isNodeReady(n: NodeObj): boolean {
  return (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Evicted pods first, then by creation time, then by name. */
function byEvictionAndCreation(a: PodObj, b: PodObj): number {
  const ea = isEvicted(a);
  const eb = isEvicted(b);
  if (ea !== eb) return ea ? -1 : 1;
  const ta = parseTime(a.metadata?.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata?.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : (a.metadata?.name ?? '') > (b.metadata?.name ?? '') ? 1 : 0;
}

class PodGC implements PodGCController {
  readonly name = POD_GC_CONTROLLER_NAME;
  private readonly pods: Lister<PodObj>;
  private readonly nodes: Lister<NodeObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly threshold: number;
  /** Node names absent from the cache, with the time they may be checked live. */
  private readonly quarantine = new Map<string, number>();
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.threshold = ctx.options.terminatedPodGCThreshold ?? DEFAULT_TERMINATED_POD_GC_THRESHOLD;
    const p = ctx.informers.pods();
    const n = ctx.informers.nodes();
    this.pods = newLister(p.getIndexer());
    this.nodes = newLister(n.getIndexer());
    this.synced = [() => p.hasSynced(), () => n.hasSynced()];
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy();
  }

  run(_workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, async () => {
      while (!signal.aborted) {
        try {
          await this.gc();
        } catch (err) {
          this.log.error(err, 'pod garbage collection pass failed');
        }
        try {
          await this.ctx.clock.sleep(GC_CHECK_PERIOD_MS, signal);
        } catch {
          return;
        }
      }
    });
  }

  async gc(): Promise<void> {
    const pods = this.pods.list();
    const nodes = this.nodes.list();
    if (this.threshold > 0) await this.gcTerminated(pods);
    await this.gcTerminating(pods);
    await this.gcOrphaned(pods, nodes);
    await this.gcUnscheduledTerminating(pods);
  }

  private async gcTerminated(pods: PodObj[]): Promise<void> {
    const terminated = pods.filter(isPodTerminated);
    const deleteCount = terminated.length - this.threshold;
    if (deleteCount <= 0) return;
    this.log.info({ numPods: deleteCount }, 'Garbage collecting pods');
    terminated.sort(byEvictionAndCreation);
    await Promise.all(terminated.slice(0, deleteCount).map((p) => this.markFailedAndDelete(p)));
  }

  private async gcTerminating(pods: PodObj[]): Promise<void> {
    const victims: PodObj[] = [];
    for (const p of pods) {
      if (!p.metadata?.deletionTimestamp) continue;
      const node = this.nodes.get(p.spec?.nodeName ?? '');
      if (!node) continue;
      if (!isNodeReady(node) && (node.spec?.taints ?? []).some((t) => t.key === TAINT_NODE_OUT_OF_SERVICE)) victims.push(p);
    }
    if (!victims.length) return;
    this.log.v(4).info({ numPods: victims.length }, 'Garbage collecting pods that are terminating on node tainted with node.kubernetes.io/out-of-service');
    victims.sort(byEvictionAndCreation);
    await Promise.all(victims.map((p) => this.markFailedAndDelete(p)));
  }

  private async gcOrphaned(pods: PodObj[], nodes: NodeObj[]): Promise<void> {
    const existing = new Set(nodes.map((n) => n.metadata?.name ?? ''));
    const now = this.ctx.clock.now();
    for (const p of pods) {
      const nodeName = p.spec?.nodeName;
      if (nodeName && !existing.has(nodeName) && !this.quarantine.has(nodeName)) this.quarantine.set(nodeName, now + QUARANTINE_TIME_MS);
    }
    const deleted = new Set<string>();
    for (const [nodeName, at] of [...this.quarantine]) {
      if (at > now) continue;
      this.quarantine.delete(nodeName);
      if (existing.has(nodeName)) continue;
      try {
        await this.ctx.client.resource(GVR.nodes).get(nodeName);
      } catch (err) {
        if (isNotFound(err)) deleted.add(nodeName);
        // Other errors: the node is quarantined again on the next pass if still needed.
        else this.log.error(err, { node: nodeName }, 'Error while getting node');
      }
    }
    for (const p of pods) {
      if (!deleted.has(p.spec?.nodeName ?? '')) continue;
      this.log.v(2).info({ pod: `${p.metadata?.namespace}/${p.metadata?.name}`, node: p.spec?.nodeName }, 'Found orphaned Pod assigned to the Node, deleting');
      const ok = await this.markFailedAndDelete(p, {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'DeletionByPodGC',
        message: 'PodGC: node no longer exists',
      });
      if (ok) this.log.info({ pod: `${p.metadata?.namespace}/${p.metadata?.name}` }, 'Forced deletion of orphaned Pod succeeded');
    }
  }

  private async gcUnscheduledTerminating(pods: PodObj[]): Promise<void> {
    for (const p of pods) {
      if (!p.metadata?.deletionTimestamp || p.spec?.nodeName) continue;
      this.log.v(2).info({ pod: `${p.metadata?.namespace}/${p.metadata?.name}` }, 'Found unscheduled terminating Pod not assigned to any Node, deleting');
      if (await this.markFailedAndDelete(p)) {
        this.log.info({ pod: `${p.metadata?.namespace}/${p.metadata?.name}` }, 'Forced deletion of unscheduled terminating Pod succeeded');
      }
    }
  }

  /** Patches a non-terminal pod to Failed (with `condition`), then deletes it with grace period 0. False (logged) on failure. */
  private async markFailedAndDelete(p: PodObj, condition?: PodCondition): Promise<boolean> {
    const ns = p.metadata?.namespace ?? '';
    const name = p.metadata?.name ?? '';
    const ri = this.ctx.client.resource<PodObj>(GVR.pods).namespace(ns);
    this.log.info({ pod: `${ns}/${name}` }, 'PodGC is force deleting Pod');
    try {
      if (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') {
        const status: PodStatus = deepCopy(p.status ?? {});
        status.phase = 'Failed';
        if (condition) {
          const now = rfc3339(this.ctx.clock.now());
          const conds = [...(status.conditions ?? [])];
          const i = conds.findIndex((c) => c.type === condition.type);
          const next = { ...condition, lastTransitionTime: now, lastProbeTime: undefined };
          if (i < 0) conds.push(next);
          else conds[i] = { ...next, lastTransitionTime: conds[i]!.status === condition.status ? conds[i]!.lastTransitionTime : now };
          status.conditions = conds;
        }
        await ri.patch(name, 'strategic', { metadata: { uid: p.metadata?.uid }, status }, { subresource: 'status' });
      }
      await ri.delete(name, { gracePeriodSeconds: 0, discardResult: true });
      return true;
    } catch (err) {
      if (!isNotFound(err)) this.log.error(err, { pod: `${ns}/${name}` }, 'failed to delete pod');
      return false;
    }
  }
}

export function newPodGCController(ctx: ControllerContext): PodGCController {
  return new PodGC(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: POD_GC_CONTROLLER_NAME,
  aliases: ['podgc'],
  requiredResources: [GVR.pods, GVR.nodes],
  defaultWorkers: 1,
  create: (ctx) => newPodGCController(ctx),
};
