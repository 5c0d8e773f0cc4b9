/**
 * The service load-balancer controller (k8s.io/cloud-provider's
 * controllers/service, `service-lb-controller`): keeps a cloud load balancer
 * for every Service of type LoadBalancer without `spec.loadBalancerClass`.
 *
 * - Ensure: event EnsuringLoadBalancer, the finalizer
 *   `service.kubernetes.io/load-balancer-cleanup` first, then
 *   EnsureLoadBalancer with the load-balancer nodes, `status.loadBalancer`
 *   from the cloud, event EnsuredLoadBalancer.
 * - Delete (the Service is being deleted, or no longer wants a balancer, and
 *   holds the finalizer): DeletingLoadBalancer when the balancer exists,
 *   EnsureLoadBalancerDeleted, the finalizer removed, an empty status,
 *   DeletedLoadBalancer.
 * - Failures: event SyncLoadBalancerFailed "Error syncing load balancer: ...",
 *   retried with per-item backoff 5 s .. 300 s.
 * - Nodes: the load-balancer nodes are those not being deleted, without the
 *   label `node.kubernetes.io/exclude-from-external-load-balancers`, and with
 *   a providerID (upstream's stable node set). When that set changes (and every
 *   100 s) every balancer gets UpdateLoadBalancer; event UpdatedLoadBalancer,
 *   or UpdateLoadBalancerFailed.
 */
import type { Node, Service } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { CloudProvider, LoadBalancer, LoadBalancerStatus } from '../../cloudprovider/cloud.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { until } from '../../util/wait/backoff.js';
import { newItemExponentialFailureRateLimiter } from '../../util/workqueue/rate-limiters.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const SERVICE_LB_CONTROLLER_NAME = 'service-lb-controller';
export const LOAD_BALANCER_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
export const EXCLUDE_BALANCER_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Interval of the full node sync (upstream nodeSyncPeriod). */
export const NODE_SYNC_PERIOD_MS = 100_000;
const MIN_RETRY_DELAY_MS = 5_000;
const MAX_RETRY_DELAY_MS = 300_000;

export interface ServiceLBController extends Controller {
  syncService(key: string): Promise<void>;
  /** Recomputes the load-balancer nodes and updates the balancers that need it (the node sync loop's body). */
  nodeSync(): Promise<void>;
  hasSynced(): boolean;
}

/** Wants a cloud load balancer: type LoadBalancer and no loadBalancerClass. */
export function wantsLoadBalancer(svc: Service): boolean {
  return svc.spec?.type === 'LoadBalancer' && (svc.spec.loadBalancerClass === undefined || svc.spec.loadBalancerClass === null);
}

function hasFinalizer(svc: Service): boolean {
  return svc.metadata?.finalizers?.includes(LOAD_BALANCER_CLEANUP_FINALIZER) ?? false;
}

/** Holds the finalizer and is being deleted or no longer of type LoadBalancer. */
export function needsCleanup(svc: Service): boolean {
  if (!hasFinalizer(svc)) return false;
  return !!svc.metadata?.deletionTimestamp || svc.spec?.type !== 'LoadBalancer';
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function portsForLB(svc: Service): unknown[] {
  return (svc.spec?.ports ?? []).map((p) => [p.name ?? '', p.protocol ?? 'TCP', p.port, p.nodePort ?? 0, p.targetPort ?? null]);
}

/** The load-balancer nodes (upstream's stable node set): not being deleted, not excluded by label, with a providerID. */
export function isLoadBalancerNode(node: Node): boolean {
  if (node.metadata?.deletionTimestamp) return false;
  if (node.metadata?.labels && EXCLUDE_BALANCER_LABEL in node.metadata.labels) return false;
  return !!node.spec?.providerID;
}

function statusEqual(a: LoadBalancerStatus | undefined, b: LoadBalancerStatus | undefined): boolean {
  return same(a?.ingress ?? [], b?.ingress ?? []);
}

class ServiceLB implements ServiceLBController {
  readonly name = SERVICE_LB_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;
  private readonly worker: QueueWorker;
  private readonly services: Lister<Kube<Service>>;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly synced: (() => boolean)[];
  private readonly recorder: EventRecorder;
  private readonly balancer: LoadBalancer;
  private readonly clusterName: string;
  /** Services we ensured a balancer for (upstream's serviceCache): node syncs and deletions without finalizer use it. */
  private readonly cache = new Map<string, Service>();
  private knownHosts = new Set<string>();
  private needFullSync = false;
  private servicesToUpdate = new Set<string>();
  private nodeSyncRunning: Promise<void> | undefined;
  private nodeSyncAgain = false;

  constructor(private readonly ctx: ControllerContext, cloud: CloudProvider) {
    this.log = ctx.logger(this.name);
    const balancer = cloud.loadBalancer();
    if (!balancer) throw new Error('the cloud provider does not support external load balancers');
    this.balancer = balancer;
    this.clusterName = String(ctx.options.extra?.['cluster-name'] ?? 'kubernetes');
    this.recorder = ctx.recorder('service-controller');
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting service controller', stopping: 'Shutting down service controller', fields: { controller: this.name } });
    this.worker = newQueueWorker({
      name: 'service',
      clock: ctx.clock,
      logger: this.log,
      maxRetries: Infinity,
      rateLimiter: newItemExponentialFailureRateLimiter(MIN_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS),
      sync: (key) => this.syncService(key),
    });
    const svcInf = ctx.informers.services();
    const nodeInf = ctx.informers.nodes();
    this.services = newLister(svcInf.getIndexer());
    this.nodes = newLister(nodeInf.getIndexer());
    const svcReg = svcInf.addEventHandler({
      onAdd: (s) => {
        if (wantsLoadBalancer(s as Service) || needsCleanup(s as Service)) this.worker.enqueue(keyFunc(s));
      },
      onUpdate: (o, s) => {
        if (this.needsUpdate(o as Service, s as Service) || needsCleanup(s as Service)) this.worker.enqueue(keyFunc(s));
      },
      onDelete: (s) => {
        const svc = objectFromDeleted(s);
        // Without the finalizer the deletion is the only chance to clean up (upstream handles it through the cache).
        if (svc && this.cache.has(keyFunc(svc))) this.worker.enqueue(keyFunc(svc));
      },
    });
    const nodeReg = nodeInf.addEventHandler({
      onAdd: () => this.triggerNodeSync(),
      onUpdate: (o, n) => {
        if (shouldSyncUpdatedNode(o as Node, n as Node)) this.triggerNodeSync();
      },
      onDelete: () => this.triggerNodeSync(),
    });
    this.synced = [() => svcReg.hasSynced(), () => nodeReg.hasSynced()];
  }

  hasSynced(): boolean {
    return this.synced.every((s) => s());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () =>
      Promise.all([
        this.worker.run(workers, signal),
        until(() => this.triggerNodeSync(), NODE_SYNC_PERIOD_MS, signal, this.ctx.clock, { onError: (err) => this.log.error(err, 'node sync failed') }).then(() => this.nodeSyncRunning),
      ]),
    );
  }

  /** Upstream needsUpdate: a change a balancer cares about (with the events upstream records for some). */
  private needsUpdate(o: Service, n: Service): boolean {
    const ow = wantsLoadBalancer(o);
    const nw = wantsLoadBalancer(n);
    if (!ow && !nw) return false;
    if (ow !== nw) {
      this.recorder.eventf(n, 'Normal', 'Type', '%v -> %v', o.spec?.type ?? '', n.spec?.type ?? '');
      return true;
    }
    if (!same(o.spec?.loadBalancerSourceRanges, n.spec?.loadBalancerSourceRanges)) {
      this.recorder.eventf(n, 'Normal', 'LoadBalancerSourceRanges', '%v -> %v', `[${(o.spec?.loadBalancerSourceRanges ?? []).join(' ')}]`, `[${(n.spec?.loadBalancerSourceRanges ?? []).join(' ')}]`);
      return true;
    }
    if (!same(portsForLB(o), portsForLB(n)) || o.spec?.sessionAffinity !== n.spec?.sessionAffinity) return true;
    if (!same(o.spec?.sessionAffinityConfig, n.spec?.sessionAffinityConfig)) return true;
    if ((o.spec?.loadBalancerIP ?? '') !== (n.spec?.loadBalancerIP ?? '')) {
      this.recorder.eventf(n, 'Normal', 'LoadbalancerIP', '%v -> %v', o.spec?.loadBalancerIP ?? '', n.spec?.loadBalancerIP ?? '');
      return true;
    }
    const oe = o.spec?.externalIPs ?? [];
    const ne = n.spec?.externalIPs ?? [];
    if (oe.length !== ne.length) {
      this.recorder.eventf(n, 'Normal', 'ExternalIP', 'Count: %v -> %v', oe.length, ne.length);
      return true;
    }
    for (let i = 0; i < oe.length; i++) {
      if (oe[i] !== ne[i]) {
        this.recorder.eventf(n, 'Normal', 'ExternalIP', 'Added: %v', ne[i]);
        return true;
      }
    }
    if (!same(o.metadata?.annotations, n.metadata?.annotations)) return true;
    if (o.metadata?.uid !== n.metadata?.uid) {
      this.recorder.eventf(n, 'Normal', 'UID', '%v -> %v', o.metadata?.uid ?? '', n.metadata?.uid ?? '');
      return true;
    }
    if ((o.spec?.externalTrafficPolicy ?? '') !== (n.spec?.externalTrafficPolicy ?? '')) {
      this.recorder.eventf(n, 'Normal', 'ExternalTrafficPolicy', '%v -> %v', o.spec?.externalTrafficPolicy ?? '', n.spec?.externalTrafficPolicy ?? '');
      return true;
    }
    if ((o.spec?.healthCheckNodePort ?? 0) !== (n.spec?.healthCheckNodePort ?? 0)) {
      this.recorder.eventf(n, 'Normal', 'HealthCheckNodePort', '%v -> %v', o.spec?.healthCheckNodePort ?? 0, n.spec?.healthCheckNodePort ?? 0);
      return true;
    }
    if (!same(o.spec?.ipFamilies, n.spec?.ipFamilies)) return true;
    return false;
  }

  async syncService(key: string): Promise<void> {
    const [ns, name] = key.includes('/') ? key.split('/', 2) as [string, string] : ['', key];
    const svc = this.services.namespace(ns).get(name);
    if (!svc) {
      await this.processServiceDeletion(key);
      return;
    }
    const cached = this.cache.get(key);
    if (cached && cached.metadata?.uid !== svc.metadata?.uid) await this.processLoadBalancerDelete(cached);
    this.cache.set(key, svc);
    try {
      const op = await this.syncLoadBalancerIfNeeded(svc, key);
      if (op === 'delete') this.cache.delete(key);
    } catch (err) {
      this.recorder.eventf(svc, 'Warning', 'SyncLoadBalancerFailed', 'Error syncing load balancer: %v', (err as Error).message);
      throw err;
    }
  }

  private async processServiceDeletion(key: string): Promise<void> {
    const cached = this.cache.get(key);
    if (!cached) return;
    this.log.v(2).info({ service: key }, 'Service has been deleted. Attempting to cleanup load balancer resources');
    await this.processLoadBalancerDelete(cached);
    this.cache.delete(key);
  }

  private async processLoadBalancerDelete(svc: Service): Promise<void> {
    if (!wantsLoadBalancer(svc)) return;
    this.recorder.event(svc, 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
    try {
      await this.balancer.ensureLoadBalancerDeleted(this.clusterName, svc);
    } catch (err) {
      this.recorder.eventf(svc, 'Warning', 'DeleteLoadBalancerFailed', 'Error deleting load balancer: %v', (err as Error).message);
      throw err;
    }
    this.recorder.event(svc, 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
  }

  private async syncLoadBalancerIfNeeded(svc: Service, key: string): Promise<'delete' | 'ensure'> {
    const previous = svc.status?.loadBalancer;
    let next: LoadBalancerStatus;
    let op: 'delete' | 'ensure';
    if (!wantsLoadBalancer(svc) || needsCleanup(svc)) {
      op = 'delete';
      next = {};
      let exists: boolean;
      try {
        ({ exists } = await this.balancer.getLoadBalancer(this.clusterName, svc));
      } catch (err) {
        throw new Error(`failed to check if load balancer exists before cleanup: ${(err as Error).message}`, { cause: err });
      }
      if (exists) {
        this.log.v(2).info({ service: key }, 'Deleting existing load balancer for service');
        this.recorder.event(svc, 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
        try {
          await this.balancer.ensureLoadBalancerDeleted(this.clusterName, svc);
        } catch (err) {
          throw new Error(`failed to delete load balancer: ${(err as Error).message}`, { cause: err });
        }
      }
      // The finalizer goes once the balancer is gone, so the Service can go too.
      try {
        await this.setFinalizer(svc, false);
      } catch (err) {
        throw new Error(`failed to remove load balancer cleanup finalizer: ${(err as Error).message}`, { cause: err });
      }
      this.recorder.event(svc, 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
    } else {
      op = 'ensure';
      this.log.v(2).info({ service: key }, 'Ensuring load balancer for service');
      this.recorder.event(svc, 'Normal', 'EnsuringLoadBalancer', 'Ensuring load balancer');
      // The finalizer first: the Service can not go before its balancer does.
      try {
        await this.setFinalizer(svc, true);
      } catch (err) {
        throw new Error(`failed to add load balancer cleanup finalizer: ${(err as Error).message}`, { cause: err });
      }
      const hosts = this.loadBalancerNodes();
      if (hosts.length === 0) this.recorder.event(svc, 'Warning', 'UnAvailableLoadBalancer', 'There are no available nodes for LoadBalancer');
      try {
        next = await this.balancer.ensureLoadBalancer(this.clusterName, svc, hosts);
      } catch (err) {
        throw new Error(`failed to ensure load balancer: ${(err as Error).message}`, { cause: err });
      }
      this.recorder.event(svc, 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
    }
    if (!statusEqual(previous, next)) {
      try {
        await this.ctx.client
          .resource(GVR.services)
          .namespace(svc.metadata!.namespace!)
          .patch(svc.metadata!.name!, 'merge', { status: { loadBalancer: next.ingress && next.ingress.length > 0 ? next : { ingress: null } } }, { subresource: 'status' });
      } catch (err) {
        // NotFound: the Service went right after its finalizer did.
        if (!isNotFound(err)) throw new Error(`failed to update load balancer status: ${(err as Error).message}`, { cause: err });
      }
    }
    return op;
  }

  private async setFinalizer(svc: Service, present: boolean): Promise<void> {
    const cur = svc.metadata?.finalizers ?? [];
    if (cur.includes(LOAD_BALANCER_CLEANUP_FINALIZER) === present) return;
    const finalizers = present ? [...cur, LOAD_BALANCER_CLEANUP_FINALIZER] : cur.filter((f) => f !== LOAD_BALANCER_CLEANUP_FINALIZER);
    try {
      await this.ctx.client
        .resource(GVR.services)
        .namespace(svc.metadata!.namespace!)
        .patch(svc.metadata!.name!, 'merge', { metadata: { finalizers: finalizers.length > 0 ? finalizers : null, resourceVersion: svc.metadata?.resourceVersion } });
    } catch (err) {
      if (!present && isNotFound(err)) return;
      throw err;
    }
  }

  /** The nodes a balancer sends to, by name (code-unit order: the cloud gets them in a stable order). */
  private loadBalancerNodes(): Node[] {
    return this.nodes
      .list()
      .filter((n) => isLoadBalancerNode(n))
      .sort((a, b) => {
        const x = a.metadata?.name ?? '';
        const y = b.metadata?.name ?? '';
        return x < y ? -1 : x > y ? 1 : 0;
      });
  }

  /**
   * Upstream triggerNodeSync: notes a changed node set (as a set, as nodeSlicesEqualForLB: every node event of a
   * cluster coming up triggers one, so no sorting here), then runs one node sync (at most one at a time; a trigger
   * during one runs another after it).
   */
  private triggerNodeSync(): Promise<void> {
    const hosts = new Set<string>();
    for (const n of this.nodes.list()) if (isLoadBalancerNode(n)) hosts.add(n.metadata?.name ?? '');
    if (hosts.size !== this.knownHosts.size || [...hosts].some((h) => !this.knownHosts.has(h))) {
      this.log.v(2).info('Node changes detected, triggering a full node sync on all loadbalancer services');
      this.needFullSync = true;
      this.knownHosts = hosts;
    }
    if (this.nodeSyncRunning) {
      this.nodeSyncAgain = true;
      return this.nodeSyncRunning;
    }
    this.nodeSyncRunning = (async () => {
      do {
        this.nodeSyncAgain = false;
        await this.nodeSyncInternal();
      } while (this.nodeSyncAgain);
    })().finally(() => (this.nodeSyncRunning = undefined));
    return this.nodeSyncRunning;
  }

  nodeSync(): Promise<void> {
    return this.triggerNodeSync();
  }

  private async nodeSyncInternal(): Promise<void> {
    let services: Service[];
    if (!this.needFullSync) {
      // Same nodes: retry only the balancers that failed last time.
      services = [...this.servicesToUpdate].map((k) => this.cache.get(k)).filter((s): s is Service => s !== undefined);
    } else {
      this.needFullSync = false;
      services = [...this.cache.values()];
    }
    const retry = new Set<string>();
    for (const svc of services) {
      if (!wantsLoadBalancer(svc)) continue;
      const hosts = this.loadBalancerNodes();
      try {
        await this.updateLoadBalancerHosts(svc, hosts);
      } catch (err) {
        this.log.error(err, { service: keyFunc(svc as Kube<Service>) }, 'failed to update load balancer hosts');
        retry.add(keyFunc(svc as Kube<Service>));
      }
    }
    this.servicesToUpdate = retry;
  }

  private async updateLoadBalancerHosts(svc: Service, hosts: Node[]): Promise<void> {
    try {
      await this.balancer.updateLoadBalancer(this.clusterName, svc, hosts);
    } catch (err) {
      // Only an error while the balancer still exists.
      try {
        const { exists } = await this.balancer.getLoadBalancer(this.clusterName, svc);
        if (!exists) return;
      } catch (e) {
        this.log.error(e, 'failed to check if load balancer exists for service');
      }
      this.recorder.eventf(svc, 'Warning', 'UpdateLoadBalancerFailed', 'Error updating load balancer with new hosts %v: %v', `[${hosts.map((h) => h.metadata?.name ?? '').join(' ')}]`, (err as Error).message);
      throw err;
    }
    if (hosts.length === 0) this.recorder.event(svc, 'Warning', 'UnAvailableLoadBalancer', 'There are no available nodes for LoadBalancer');
    else this.recorder.event(svc, 'Normal', 'UpdatedLoadBalancer', 'Updated load balancer with new hosts');
  }
}

/** A node update that may change the load-balancer node set: the exclude label, the providerID, the deletion timestamp. */
function shouldSyncUpdatedNode(o: Node, n: Node): boolean {
  const ex = (x: Node) => !!x.metadata?.labels && EXCLUDE_BALANCER_LABEL in x.metadata.labels;
  return ex(o) !== ex(n) || (o.spec?.providerID ?? '') !== (n.spec?.providerID ?? '') || !!o.metadata?.deletionTimestamp !== !!n.metadata?.deletionTimestamp;
}

export function newServiceLBController(ctx: ControllerContext): ServiceLBController {
  if (!ctx.cloud) throw new Error('WARNING: no cloud provider provided, services of type LoadBalancer will fail');
  return new ServiceLB(ctx, ctx.cloud);
}

/** kube-controller-manager's `service-lb-controller` (alias `service`), `--concurrent-service-syncs` 1. */
export const descriptor: ControllerDescriptor = {
  name: SERVICE_LB_CONTROLLER_NAME,
  aliases: ['service'],
  requiredResources: [GVR.services, GVR.nodes],
  defaultWorkers: 1,
  create: (ctx) => newServiceLBController(ctx),
};
