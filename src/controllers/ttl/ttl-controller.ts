/**
 * The TTL controller (pkg/controller/ttl): sets the annotation
 * `node.alpha.kubernetes.io/ttl` on every node to how long (seconds) kubelets
 * may cache objects such as secrets and config maps, by cluster size:
 * 0 s up to 100 nodes, 15 s up to 500, 30 s up to 1000, 60 s up to 2000,
 * 300 s beyond. The steps overlap (hysteresis): the TTL goes up once the
 * count passes a step's maximum and back down only below its minimum.
 * Every node add or update re-checks that node's annotation.
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const TTL_CONTROLLER_NAME = 'ttl-controller';
export const OBJECT_TTL_ANNOTATION = 'node.alpha.kubernetes.io/ttl';

/** Cluster-size steps: [sizeMin, sizeMax, ttlSeconds]. */
export const TTL_BOUNDARIES: ReadonlyArray<readonly [number, number, number]> = [
  [0, 100, 0],
  [90, 500, 15],
  [450, 1000, 30],
  [900, 2000, 60],
  [1800, 2 ** 31 - 1, 300],
];

export interface TTLController extends Controller {
  /** Patches the node's annotation when it differs from the desired TTL (the queue's sync). */
  syncNode(name: string): Promise<void>;
  /** The TTL (seconds) for the node count seen so far. */
  desiredTTLSeconds(): number;
  hasSynced(): boolean;
}

class TTL implements TTLController {
  readonly name = TTL_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private nodeCount = 0;
  private step = 0;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({ name: 'ttlcontroller', clock: ctx.clock, logger: this.log, sync: (key) => this.syncNode(key) });
    const inf = ctx.informers.nodes();
    this.nodes = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({
      onAdd: (n) => {
        this.nodeCount++;
        if (this.nodeCount > TTL_BOUNDARIES[this.step]![1]) this.step++;
        this.worker.enqueue(n.metadata?.name ?? '');
      },
      onUpdate: (_o, n) => this.worker.enqueue(n.metadata?.name ?? ''),
      onDelete: (obj) => {
        if (!objectFromDeleted(obj)) this.log.error({}, 'could not get node from tombstone');
        this.nodeCount--;
        if (this.nodeCount < TTL_BOUNDARIES[this.step]![0]) this.step--;
      },
    });
    this.synced = () => reg.hasSynced();
  }

  desiredTTLSeconds(): number {
    return TTL_BOUNDARIES[this.step]![2];
  }
  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async syncNode(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const desired = this.desiredTTLSeconds();
    const raw = node.metadata?.annotations?.[OBJECT_TTL_ANNOTATION];
    if (raw !== undefined && /^-?\d+$/.test(raw) && Number(raw) === desired) return;
    try {
      await this.ctx.client
        .resource(GVR.nodes)
        .patch(name, 'strategic', { metadata: { annotations: { [OBJECT_TTL_ANNOTATION]: String(desired) } } });
      this.log.v(2).info({ node: name, TTL: desired }, 'Changed ttl annotation');
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.v(2).info({ node: name, err: (err as Error).message }, 'Failed to change ttl annotation');
      throw err;
    }
  }
}

export function newTTLController(ctx: ControllerContext): TTLController {
  return new TTL(ctx);
}

/** kube-controller-manager runs the TTL controller with five workers. */
export const descriptor: ControllerDescriptor = {
  name: TTL_CONTROLLER_NAME,
  aliases: ['ttl'],
  requiredResources: [GVR.nodes],
  defaultWorkers: 5,
  create: (ctx) => newTTLController(ctx),
};
