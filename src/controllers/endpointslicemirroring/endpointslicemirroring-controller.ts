/**
 * The EndpointSlice mirroring controller (pkg/controller/endpointslicemirroring):
 * for Services without a selector, whose Endpoints are written by someone
 * else, mirrors those Endpoints into EndpointSlices labelled
 * `endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io`
 * and `kubernetes.io/service-name` (see mirroring-reconciler.ts).
 *
 * Nothing is mirrored (and mirrored slices are deleted) when the Service or
 * the Endpoints is missing, the Service has a selector, the Endpoints carries
 * `endpointslice.kubernetes.io/skip-mirror: "true"` (the API server sets it
 * on default/kubernetes) or a leader-election annotation.
 */
import type { Endpoints, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromSet } from '../../api/labels.js';
import { splitKey } from '../../api/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import { newBucketRateLimiter, newItemExponentialFailureRateLimiter, newMaxOfRateLimiter } from '../../util/workqueue/rate-limiters.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { extraNumber } from '../extra-options.js';
import { newEndpointSliceTracker, type EndpointSliceTracker } from '../endpointslice/endpoint-slice-tracker.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '../endpointslice/endpoint-util.js';
import { MIRRORING_MANAGED_BY, newMirroringReconciler, type MirroringReconciler, type SliceObj } from './mirroring-reconciler.js';

export const ENDPOINTSLICE_MIRRORING_CONTROLLER_NAME = 'endpointslice-mirroring-controller';
/** Event source component of upstream's mirroring controller. */
export const ENDPOINTSLICE_MIRRORING_EVENT_SOURCE = 'endpoint-slice-mirroring-controller';
/** Endpoints labelled with this set to "true" are not mirrored. */
export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
/** Endpoints used as leader-election locks carry this and are not mirrored. */
export const LEADER_ELECTION_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
export const DEFAULT_MAX_ENDPOINTS_PER_SUBSET = 1000;

export interface EndpointSliceMirroringOptions {
  /** --mirroring-max-endpoints-per-subset (default 1000). */
  maxEndpointsPerSubset?: number;
  /** --mirroring-endpointslice-updates-batch-period (default 0). */
  batchPeriodMs?: number;
}

export interface EndpointSliceMirroringController extends Controller {
  /** Mirrors the Endpoints `ns/name` (the queue's sync). */
  syncEndpoints(key: string): Promise<void>;
  hasSynced(): boolean;
}

type SvcObj = Kube<Service>;
type EpObj = Kube<Endpoints>;

/** Whether these Endpoints are mirrored at all (shouldMirror). */
export function shouldMirror(ep: Endpoints | undefined): boolean {
  if (!ep) return false;
  if (ep.metadata?.labels?.[LABEL_SKIP_MIRROR] === 'true') return false;
  return ep.metadata?.annotations?.[LEADER_ELECTION_ANNOTATION] === undefined;
}

const managed = (s: EndpointSlice) => s.metadata?.labels?.[LABEL_MANAGED_BY] === MIRRORING_MANAGED_BY;

class Mirroring implements EndpointSliceMirroringController {
  readonly name = ENDPOINTSLICE_MIRRORING_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly services: Lister<SvcObj>;
  private readonly endpoints: Lister<EpObj>;
  private readonly slices: Lister<SliceObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;
  private readonly tracker: EndpointSliceTracker = newEndpointSliceTracker();
  private readonly reconciler: MirroringReconciler;
  private readonly batchPeriodMs: number;

  constructor(ctx: ControllerContext, opts: EndpointSliceMirroringOptions) {
    this.log = ctx.logger(this.name);
    this.lifecycle = newControllerLifecycle({
      name: this.name,
      clock: ctx.clock,
      log: this.log,
      starting: 'Starting controller',
      stopping: 'Shutting down controller',
      fields: { controller: this.name },
    });
    this.batchPeriodMs = opts.batchPeriodMs ?? 0;
    this.worker = newQueueWorker({
      name: 'endpoint_slice_mirroring',
      clock: ctx.clock,
      logger: this.log,
      // Upstream: per-item exponential 1 s .. 100 s, overall 10 qps burst 100.
      rateLimiter: newMaxOfRateLimiter(newItemExponentialFailureRateLimiter<string>(1000, 100_000), newBucketRateLimiter<string>(10, 100, ctx.clock)),
      sync: (key) => this.syncEndpoints(key),
    });
    this.reconciler = newMirroringReconciler({
      client: ctx.client,
      tracker: this.tracker,
      recorder: ctx.recorder(ENDPOINTSLICE_MIRRORING_EVENT_SOURCE),
      maxEndpointsPerSubset: opts.maxEndpointsPerSubset ?? DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
    });
    const svcInf = ctx.informers.services();
    const epInf = ctx.informers.endpoints();
    const sliceInf = ctx.informers.endpointSlices();
    this.services = newLister(svcInf.getIndexer());
    this.endpoints = newLister(epInf.getIndexer());
    this.slices = newLister(sliceInf.getIndexer());
    const queue = (obj: Parameters<typeof keyFunc>[0]) => this.worker.enqueueAfter(keyFunc(obj), this.batchPeriodMs);
    const r1 = svcInf.addEventHandler({
      onAdd: (s) => !s.spec?.selector && queue(s),
      // Only gaining or losing a selector changes whether it is mirrored.
      onUpdate: (o, n) => !o.spec?.selector !== !n.spec?.selector && queue(n),
      onDelete: (obj) => {
        const s = objectFromDeleted(obj);
        if (s && !s.spec?.selector) queue(obj);
      },
    });
    const r2 = epInf.addEventHandler({
      onAdd: (ep) => shouldMirror(ep) && queue(ep),
      onUpdate: (o, n) => (shouldMirror(o) || shouldMirror(n)) && queue(n),
      onDelete: (obj) => shouldMirror(objectFromDeleted(obj)) && queue(obj),
    });
    const r3 = sliceInf.addEventHandler({
      onAdd: (s) => managed(s) && this.tracker.shouldSync(s) && this.queueForSlice(s),
      onUpdate: (o, n) => {
        if (!managed(o) && !managed(n)) return;
        if (managed(o) !== managed(n) || o.metadata?.labels?.[LABEL_SERVICE_NAME] !== n.metadata?.labels?.[LABEL_SERVICE_NAME]) {
          this.queueForSlice(o);
          this.queueForSlice(n);
        } else if (this.tracker.shouldSync(n)) this.queueForSlice(n);
      },
      onDelete: (obj) => {
        const s = objectFromDeleted(obj);
        if (s && managed(s) && this.tracker.has(s) && !this.tracker.handleDeletion(s)) this.queueForSlice(s);
      },
    });
    this.synced = [r1, r2, r3].map((r) => () => r.hasSynced());
  }

  private queueForSlice(s: EndpointSlice): void {
    const svc = s.metadata?.labels?.[LABEL_SERVICE_NAME];
    if (!svc) {
      this.log.error({ slice: s.metadata?.name }, 'EndpointSlice missing kubernetes.io/service-name label');
      return;
    }
    this.worker.enqueueAfter(`${s.metadata?.namespace ?? ''}/${svc}`, this.batchPeriodMs);
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

  async syncEndpoints(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const svc = this.services.namespace(namespace).get(name);
    const ep = this.endpoints.namespace(namespace).get(name);
    if (!svc || !ep || !shouldMirror(ep) || svc.spec?.selector) {
      await this.deleteMirroredSlices(namespace, name);
      return;
    }
    const slices = this.mirroredSlices(namespace, name);
    if (this.tracker.staleSlices(namespace, name, slices)) throw new Error('EndpointSlice informer cache is out of date');
    await this.reconciler.reconcile(ep, slices);
  }

  private mirroredSlices(namespace: string, name: string): SliceObj[] {
    return this.slices.namespace(namespace).list(selectorFromSet({ [LABEL_SERVICE_NAME]: name, [LABEL_MANAGED_BY]: MIRRORING_MANAGED_BY }));
  }

  private async deleteMirroredSlices(namespace: string, name: string): Promise<void> {
    const slices = this.mirroredSlices(namespace, name);
    this.tracker.deleteService(namespace, name);
    await this.reconciler.deleteSlices(slices);
  }
}

export function newEndpointSliceMirroringController(ctx: ControllerContext, opts: EndpointSliceMirroringOptions = {}): EndpointSliceMirroringController {
  return new Mirroring(ctx, opts);
}

/** kube-controller-manager: 5 workers (--mirroring-concurrent-service-endpoint-syncs). */
export const descriptor: ControllerDescriptor = {
  name: ENDPOINTSLICE_MIRRORING_CONTROLLER_NAME,
  aliases: ['endpointslicemirroring'],
  requiredResources: [GVR.services, GVR.endpoints, GVR.endpointSlices],
  defaultWorkers: 5,
  create: (ctx) => {
    const max = extraNumber(ctx, 'mirroring-max-endpoints-per-subset');
    const batch = extraNumber(ctx, 'mirroring-endpointslice-updates-batch-period');
    return newEndpointSliceMirroringController(ctx, {
      ...(max !== undefined ? { maxEndpointsPerSubset: max } : {}),
      ...(batch !== undefined ? { batchPeriodMs: batch } : {}),
    });
  },
};
