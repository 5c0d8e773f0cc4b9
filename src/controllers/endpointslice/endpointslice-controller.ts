/**
 * The EndpointSlice controller (pkg/controller/endpointslice): for every
 * Service with a selector (not ExternalName), discovery.k8s.io/v1
 * EndpointSlices named `<service>-<5 random>`, labelled
 * `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by:
 * endpointslice-controller.k8s.io`, owned by the Service (the garbage
 * collector deletes them with it), listing the matching pods with
 * ready/serving/terminating conditions, nodeName and zone, at most
 * --max-endpoints-per-slice (100) per slice. See reconciler.ts for how
 * slices are packed.
 *
 * Our own writes are tracked (endpoint-slice-tracker.ts): a cache older than
 * them fails the sync (retried), changes by anyone else resync the service.
 */
import type { Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromSet } from '../../api/labels.js';
import { splitKey } from '../../api/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { newBucketRateLimiter, newItemExponentialFailureRateLimiter, newMaxOfRateLimiter } from '../../util/workqueue/rate-limiters.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { extraNumber } from '../extra-options.js';
import { newEndpointSliceTracker, type EndpointSliceTracker } from './endpoint-slice-tracker.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, podServiceMemberships, servicesToUpdateOnPodChange } from './endpoint-util.js';
import { newReconciler, type Reconciler, type SliceObj } from './reconciler.js';
import { newTriggerTimeTracker } from './trigger-time-tracker.js';

export const ENDPOINTSLICE_CONTROLLER_NAME = 'endpointslice-controller';
/** managed-by label value of slices this controller owns. */
export const ENDPOINTSLICE_MANAGED_BY = 'endpointslice-controller.k8s.io';
export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;
/** Slice changes by others are synced at least this late, to batch them. */
export const ENDPOINTSLICE_CHANGE_MIN_SYNC_DELAY_MS = 1000;

export interface EndpointSliceControllerOptions {
  /** --max-endpoints-per-slice (default 100, at most 1000). */
  maxEndpointsPerSlice?: number;
  /** --endpointslice-updates-batch-period (default 0). */
  batchPeriodMs?: number;
}

export interface EndpointSliceController extends Controller {
  /** Brings the slices of service `ns/name` up to date (the queue's sync). */
  syncService(key: string): Promise<void>;
  hasSynced(): boolean;
}

type SvcObj = Kube<Service>;

class SliceController implements EndpointSliceController {
  readonly name = ENDPOINTSLICE_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly services: Lister<SvcObj>;
  private readonly pods: Lister<Kube<Pod>>;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly slices: Lister<SliceObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly tracker: EndpointSliceTracker = newEndpointSliceTracker();
  private readonly triggerTimes = newTriggerTimeTracker();
  private readonly reconciler: Reconciler;
  private readonly batchPeriodMs: number;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    opts: EndpointSliceControllerOptions,
  ) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder('endpoint-slice-controller');
    this.batchPeriodMs = opts.batchPeriodMs ?? 0;
    this.worker = newQueueWorker({
      name: 'endpoint_slice',
      clock: ctx.clock,
      logger: this.log,
      // Upstream: per-item exponential 1 s .. 1000 s, overall 10 qps burst 100.
      rateLimiter: newMaxOfRateLimiter(newItemExponentialFailureRateLimiter<string>(1000, 1_000_000), newBucketRateLimiter<string>(10, 100, ctx.clock)),
      sync: (key) => this.syncService(key),
    });
    const svcInf = ctx.informers.services();
    const podInf = ctx.informers.pods();
    const nodeInf = ctx.informers.nodes();
    const sliceInf = ctx.informers.endpointSlices();
    this.services = newLister(svcInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    this.nodes = newLister(nodeInf.getIndexer());
    this.slices = newLister(sliceInf.getIndexer());
    this.reconciler = newReconciler({
      client: ctx.client,
      tracker: this.tracker,
      maxEndpointsPerSlice: opts.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE,
      controllerName: ENDPOINTSLICE_MANAGED_BY,
      logger: this.log,
    });
    const enqueue = (obj: Parameters<typeof keyFunc>[0]) => this.worker.enqueue(keyFunc(obj));
    const r1 = svcInf.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue });
    const r2 = podInf.addEventHandler({
      onAdd: (p) => this.addPod(p),
      onUpdate: (o, n) => {
        for (const k of servicesToUpdateOnPodChange(this.services, o, n)) this.worker.enqueueAfter(k, this.batchPeriodMs);
      },
      onDelete: (obj) => {
        const p = objectFromDeleted(obj);
        if (p) this.addPod(p);
        else this.log.error({}, 'could not get pod from tombstone');
      },
    });
    const r3 = nodeInf.addEventHandler({});
    const r4 = sliceInf.addEventHandler({
      onAdd: (s) => {
        if (this.managed(s) && this.tracker.shouldSync(s)) this.queueForSlice(s);
      },
      onUpdate: (o, n) => {
        const oldManaged = this.managed(o);
        const newManaged = this.managed(n);
        if (!oldManaged && !newManaged) return;
        const oldSvc = o.metadata?.labels?.[LABEL_SERVICE_NAME];
        const newSvc = n.metadata?.labels?.[LABEL_SERVICE_NAME];
        // Moved to another service, or no longer ours: both services resync.
        if (oldSvc !== newSvc || oldManaged !== newManaged) {
          this.queueForSlice(o);
          this.queueForSlice(n);
        } else if (this.tracker.shouldSync(n)) {
          this.queueForSlice(n);
        }
      },
      onDelete: (obj) => {
        const s = objectFromDeleted(obj);
        if (s && this.managed(s) && this.tracker.has(s) && !this.tracker.handleDeletion(s)) this.queueForSlice(s);
      },
    });
    this.synced = [r1, r2, r3, r4].map((r) => () => r.hasSynced());
  }

  private managed(s: EndpointSlice): boolean {
    return s.metadata?.labels?.[LABEL_MANAGED_BY] === ENDPOINTSLICE_MANAGED_BY;
  }

  private queueForSlice(s: EndpointSlice): void {
    const svc = s.metadata?.labels?.[LABEL_SERVICE_NAME];
    if (!svc) {
      this.log.error({ slice: s.metadata?.name }, 'EndpointSlice missing kubernetes.io/service-name label');
      return;
    }
    this.worker.enqueueAfter(`${s.metadata?.namespace}/${svc}`, Math.max(ENDPOINTSLICE_CHANGE_MIN_SYNC_DELAY_MS, this.batchPeriodMs));
  }

  private addPod(pod: Pod): void {
    for (const k of podServiceMemberships(this.services, pod)) this.worker.enqueueAfter(k, this.batchPeriodMs);
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async syncService(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    try {
      await this.sync(key);
    } finally {
      this.log.v(4).info({ key, duration: this.ctx.clock.since(start) }, 'Finished syncing service endpoint slices');
    }
  }

  private async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const svc = this.services.namespace(namespace).get(name);
    if (!svc) {
      // The slices are owned by the service: the garbage collector removes them.
      this.triggerTimes.deleteService(namespace, name);
      this.tracker.deleteService(namespace, name);
      return;
    }
    if (svc.spec?.type === 'ExternalName') return;
    if (!svc.spec?.selector) return;

    const pods = this.pods.namespace(namespace).list(selectorFromSet(svc.spec.selector));
    const slices = this.slices
      .namespace(namespace)
      .list(selectorFromSet({ [LABEL_SERVICE_NAME]: name, [LABEL_MANAGED_BY]: ENDPOINTSLICE_MANAGED_BY }))
      // Slices being deleted are ignored, so a stuck deletion cannot block the service.
      .filter((s) => !s.metadata?.deletionTimestamp);
    if (this.tracker.staleSlices(namespace, name, slices)) {
      throw new Error('EndpointSlice informer cache is out of date');
    }
    const triggerTime = this.triggerTimes.compute(namespace, svc, pods);
    try {
      await this.reconciler.reconcile(svc, pods, slices, triggerTime, (n) => this.nodes.get(n));
    } catch (err) {
      const target = { ...svc, apiVersion: 'v1', kind: 'Service' } as SvcObj;
      this.recorder.eventf(target, 'Warning', 'FailedToUpdateEndpointSlices', 'Error updating Endpoint Slices for Service %s/%s: %v', namespace, name, err);
      throw err;
    }
  }
}

export function newEndpointSliceController(ctx: ControllerContext, opts: EndpointSliceControllerOptions = {}): EndpointSliceController {
  return new SliceController(ctx, opts);
}

/** kube-controller-manager: 5 workers (--concurrent-service-endpoint-syncs). */
export const descriptor: ControllerDescriptor = {
  name: ENDPOINTSLICE_CONTROLLER_NAME,
  aliases: ['endpointslice'],
  requiredResources: [GVR.services, GVR.pods, GVR.nodes, GVR.endpointSlices],
  defaultWorkers: 5,
  create: (ctx) => {
    const max = extraNumber(ctx, 'max-endpoints-per-slice');
    const batch = extraNumber(ctx, 'endpointslice-updates-batch-period');
    return newEndpointSliceController(ctx, {
      ...(max !== undefined ? { maxEndpointsPerSlice: max } : {}),
      ...(batch !== undefined ? { batchPeriodMs: batch } : {}),
    });
  },
};
