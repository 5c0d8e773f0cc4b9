/**
 * The namespace controller (pkg/controller/namespace/namespace_controller.go):
 * a namespace with a deletionTimestamp is handed to the deleter 5 s after
 * each change (and on every 5 min resync) until it is gone. While content
 * remains, it is looked at again after half the deleter's estimate.
 */
import type { Namespace } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Indexer } from '../../tools/cache/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { newBucketRateLimiter, newItemExponentialFailureRateLimiter, newMaxOfRateLimiter } from '../../util/workqueue/rate-limiters.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { newNamespacedResourcesDeleter, ResourcesRemainingError, type NamespacedResourcesDeleter } from './namespaced-resources-deleter.js';

export const NAMESPACE_CONTROLLER_NAME = 'namespace-controller';
/** Delay before a changed terminating namespace is processed (upstream namespaceDeletionGracePeriod). */
export const NAMESPACE_DELETION_GRACE_PERIOD_MS = 5_000;
/** --namespace-sync-period default. */
export const DEFAULT_NAMESPACE_SYNC_PERIOD_MS = 5 * 60_000;

export interface NamespaceController extends Controller {
  syncNamespace(name: string): Promise<void>;
  readonly worker: QueueWorker;
  hasSynced(): boolean;
}

class NamespaceCtl implements NamespaceController {
  readonly name = NAMESPACE_CONTROLLER_NAME;
  readonly worker: QueueWorker;
  private readonly deleter: NamespacedResourcesDeleter;
  private readonly indexer: Indexer<Kube<Namespace>>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    if (!ctx.discovery) throw new Error('the namespace controller needs discovery (ctx.discovery)');
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting namespace controller', stopping: 'Shutting down namespace controller' };
    this.lifecycle = newControllerLifecycle({ name: 'namespace', clock: ctx.clock, log: this.log, ...lines });
    this.deleter = newNamespacedResourcesDeleter({ client: ctx.client, discovery: ctx.discovery, clock: ctx.clock, logger: this.log });
    this.worker = newQueueWorker({
      name: 'namespace',
      clock: ctx.clock,
      logger: this.log,
      maxRetries: Infinity,
      // Upstream: per-item exponential 5 ms .. 60 s, overall 10 qps burst 100.
      rateLimiter: newMaxOfRateLimiter<string>(newItemExponentialFailureRateLimiter(5, 60_000), newBucketRateLimiter(10, 100, ctx.clock)),
      sync: (key) => this.syncNamespace(key),
    });
    const inf = ctx.informers.namespaces();
    const enqueue = (ns: Kube<Namespace>) => {
      if (!ns.metadata?.deletionTimestamp) return;
      this.worker.enqueueAfter(ns.metadata.name ?? '', NAMESPACE_DELETION_GRACE_PERIOD_MS);
    };
    const resync = Number(ctx.options.extra?.['namespace-sync-period'] ?? DEFAULT_NAMESPACE_SYNC_PERIOD_MS);
    const reg = inf.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n) }, resync);
    this.indexer = inf.getIndexer();
    this.synced = () => reg.hasSynced();
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

  async syncNamespace(name: string): Promise<void> {
    const start = this.ctx.clock.now();
    try {
      if (!this.indexer.getByKey(name)) {
        this.log.v(2).info({ namespace: name }, 'namespace has been deleted');
        return;
      }
      try {
        await this.deleter.delete(name);
      } catch (err) {
        if (err instanceof ResourcesRemainingError) {
          const delay = (Math.floor(err.estimate / 2) + 1) * 1000;
          this.log.v(4).info({ namespace: name, estimate: err.estimate }, 'content remaining; requeueing');
          this.worker.enqueueAfter(name, delay);
          return;
        }
        throw err;
      }
    } finally {
      this.log.v(4).info({ namespace: name, duration: this.ctx.clock.since(start) }, 'Finished syncing namespace');
    }
  }
}

export function newNamespaceController(ctx: ControllerContext): NamespaceController {
  return new NamespaceCtl(ctx);
}

/** --concurrent-namespace-syncs defaults to 10. */
export const descriptor: ControllerDescriptor = {
  name: NAMESPACE_CONTROLLER_NAME,
  aliases: ['namespace'],
  requiredResources: [GVR.namespaces],
  defaultWorkers: 10,
  create: (ctx) => newNamespaceController(ctx),
};
