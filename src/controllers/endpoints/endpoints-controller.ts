/**
 * The endpoints controller (pkg/controller/endpoint): for every Service with a
 * selector (and not of type ExternalName), an Endpoints object of the same
 * name listing the matching pods' IPs: ready pods (or all of them with
 * publishNotReadyAddresses) in `addresses`, the others in
 * `notReadyAddresses`, with each service port resolved against the pod's
 * container ports. Subsets are repacked into the canonical form, capped at
 * 1000 addresses (`endpoints.kubernetes.io/over-capacity: truncated`), and
 * stamped with `endpoints.kubernetes.io/last-change-trigger-time`. The
 * Endpoints carries the Service's labels, plus `service.kubernetes.io/headless`
 * for headless services. Endpoints are tied to their Service by name only: a
 * sync of a Service that is gone deletes them.
 */
import type { Endpoints, EndpointAddress, EndpointPort, EndpointSubset, Pod, Service } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromSet } from '../../api/labels.js';
import { splitKey } from '../../api/types.js';
import { isForbidden, isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { isPodReady } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { extraNumber } from '../extra-options.js';
import {
  HEADLESS_SERVICE_LABEL,
  LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
  findPort,
  hasStatusCause,
  isServiceIPSet,
  podServiceMemberships,
  rfc3339Nano,
  servicesToUpdateOnPodChange,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from '../endpointslice/endpoint-util.js';
import { newTriggerTimeTracker } from '../endpointslice/trigger-time-tracker.js';
import { OVER_CAPACITY_ANNOTATION, capacityAnnotationSetCorrectly, repackSubsets, subsetsEqualIgnoreResourceVersion, truncateSubsets } from './subsets.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const ENDPOINTS_CONTROLLER_NAME = 'endpoints-controller';
/** The event source component upstream uses. */
export const ENDPOINTS_EVENT_COMPONENT = 'endpoint-controller';
/** Annotation of leader-election Endpoints, which are never cleaned up. */
export const LEADER_ELECTION_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

export interface EndpointsControllerOptions {
  /** Delay before syncing a service after a pod change (--endpoint-updates-batch-period, default 0). */
  batchPeriodMs?: number;
}

export interface EndpointsController extends Controller {
  /** Brings the Endpoints of service `ns/name` up to date (the queue's sync). */
  syncService(key: string): Promise<void>;
  hasSynced(): boolean;
  /** Queues every Endpoints object's service, so orphans get deleted (done once at start). */
  checkLeftoverEndpoints(): void;
}

type SvcObj = Kube<Service>;
type PodObj = Kube<Pod>;
type EpObj = Kube<Endpoints>;

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => (b ?? {})[k] === (a ?? {})[k]);
}

/** The address of `pod` for the service's primary IP family, or undefined when the pod has none. */
function podToEndpointAddress(svc: Service, pod: Pod): EndpointAddress | undefined {
  let family = 'IPv4';
  if (svc.spec?.ipFamilies?.length) family = svc.spec.ipFamilies[0]!;
  else if (isServiceIPSet(svc)) family = svc.spec!.clusterIP!.includes(':') ? 'IPv6' : 'IPv4';
  else if (pod.status?.podIP?.includes(':')) family = 'IPv6';
  const ips = pod.status?.podIPs?.length ? pod.status.podIPs.map((p) => p.ip) : pod.status?.podIP ? [pod.status.podIP] : [];
  const ip = ips.find((i) => (family === 'IPv6') === (i ?? '').includes(':'));
  if (!ip) return undefined;
  return {
    ip,
    nodeName: pod.spec?.nodeName ?? '',
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
  };
}

class EndpointsCtrl implements EndpointsController {
  readonly name = ENDPOINTS_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly services: Lister<SvcObj>;
  private readonly pods: Lister<PodObj>;
  private readonly endpoints: Lister<EpObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly triggerTimes = newTriggerTimeTracker();
  /** Endpoints resourceVersions this controller has already replaced, per key: the cache holding one is stale. */
  private readonly staleVersions = new Map<string, string>();
  private readonly batchPeriodMs: number;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    opts: EndpointsControllerOptions,
  ) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder(ENDPOINTS_EVENT_COMPONENT);
    this.batchPeriodMs = opts.batchPeriodMs ?? 0;
    this.worker = newQueueWorker({ name: 'endpoint', clock: ctx.clock, logger: this.log, sync: (key) => this.syncService(key) });
    const svcInf = ctx.informers.services();
    const podInf = ctx.informers.pods();
    const epInf = ctx.informers.endpoints();
    this.services = newLister(svcInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    this.endpoints = newLister(epInf.getIndexer());
    const enqueueObj = (obj: SvcObj | EpObj | Parameters<typeof keyFunc>[0]) => this.worker.enqueue(keyFunc(obj));
    const r1 = svcInf.addEventHandler({ onAdd: enqueueObj, onUpdate: (_o, n) => enqueueObj(n), onDelete: enqueueObj });
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
    const r3 = epInf.addEventHandler({ onDelete: enqueueObj });
    this.synced = [() => r1.hasSynced(), () => r2.hasSynced(), () => r3.hasSynced()];
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
    return this.lifecycle.run(signal, this.synced, async () => {
      this.checkLeftoverEndpoints();
      await this.worker.run(workers, signal);
    });
  }

  checkLeftoverEndpoints(): void {
    for (const ep of this.endpoints.list()) {
      if (ep.metadata?.annotations?.[LEADER_ELECTION_ANNOTATION] !== undefined) continue;
      this.worker.enqueue(keyFunc(ep));
    }
  }

  async syncService(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    const { namespace, name } = splitKey(key);
    try {
      await this.sync(key, namespace, name);
    } finally {
      this.log.v(4).info({ service: key, duration: this.ctx.clock.since(start) }, 'Finished syncing service endpoints');
    }
  }

  private async sync(key: string, namespace: string, name: string): Promise<void> {
    const svc = this.services.namespace(namespace).get(name);
    const client = this.ctx.client.resource<EpObj>(GVR.endpoints).namespace(namespace);
    if (!svc) {
      // The service is gone: so are its endpoints.
      try {
        await client.delete(name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.triggerTimes.deleteService(namespace, name);
      this.staleVersions.delete(key);
      return;
    }
    if (svc.spec?.type === 'ExternalName') return;
    // Without a selector, endpoints are written by users.
    if (!svc.spec?.selector) return;

    const pods = this.pods.namespace(namespace).list(selectorFromSet(svc.spec.selector));
    const triggerTime = this.triggerTimes.compute(namespace, svc, pods);
    const publishNotReady = svc.spec.publishNotReadyAddresses === true;
    const ports = svc.spec.ports ?? [];
    let subsets: EndpointSubset[] = [];
    let ready = 0;
    let notReady = 0;
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
      const addr = podToEndpointAddress(svc, pod);
      if (!addr) {
        this.log.v(2).info({ service: key, pod: pod.metadata?.name }, 'Failed to find endpoint for service on pod');
        continue;
      }
      if (shouldSetHostname(pod, svc)) addr.hostname = pod.spec!.hostname!;
      const isReady = publishNotReady || isPodReady(pod);
      const add = (port: EndpointPort | undefined) => {
        const a = deepCopy(addr);
        const subset: EndpointSubset = isReady ? { addresses: [a] } : { notReadyAddresses: [a] };
        subset.ports = port ? [port] : [];
        subsets.push(subset);
        if (isReady) ready++;
        else notReady++;
      };
      if (ports.length === 0) {
        // A headless service may have no ports.
        if (svc.spec.clusterIP === 'None') add(undefined);
        continue;
      }
      for (const sp of ports) {
        const portNum = findPort(pod, sp);
        if (portNum === undefined) {
          this.log.v(4).info({ service: key, pod: pod.metadata?.name, port: sp.name }, 'Failed to find port for service');
          continue;
        }
        const epp: EndpointPort = { port: portNum, protocol: sp.protocol ?? 'TCP' };
        if (sp.name) epp.name = sp.name;
        if (sp.appProtocol) epp.appProtocol = sp.appProtocol;
        add(epp);
      }
    }
    subsets = repackSubsets(subsets);

    let current = this.endpoints.namespace(namespace).get(name);
    if (current && this.staleVersions.get(key) === current.metadata?.resourceVersion) {
      throw new Error(`endpoints informer cache is out of date, resource version ${current.metadata?.resourceVersion} already processed for endpoints ${key}`);
    }
    const create = !current?.metadata?.resourceVersion;
    if (!current) current = { metadata: { name, ...(svc.metadata?.labels ? { labels: svc.metadata.labels } : {}) } } as EpObj;
    const compareLabels = { ...(current.metadata?.labels ?? {}) };
    delete compareLabels[HEADLESS_SERVICE_LABEL];
    if (
      !create &&
      subsetsEqualIgnoreResourceVersion(current.subsets, subsets) &&
      sameLabels(compareLabels, svc.metadata?.labels) &&
      capacityAnnotationSetCorrectly(current.metadata?.annotations, current.subsets)
    ) {
      this.log.v(5).info({ service: key }, 'endpoints are equal, skipping update');
      return;
    }
    const next = deepCopy(current) as EpObj;
    next.metadata = { ...next.metadata, namespace };
    next.subsets = subsets;
    const labels: Record<string, string> = { ...(svc.metadata?.labels ?? {}) };
    if (isServiceIPSet(svc)) delete labels[HEADLESS_SERVICE_LABEL];
    else labels[HEADLESS_SERVICE_LABEL] = '';
    // An empty map is omitted, as Go's omitempty drops it upstream (no `labels: {}` in kubectl -o yaml).
    if (Object.keys(labels).length > 0) next.metadata.labels = labels;
    else delete next.metadata.labels;
    const annotations: Record<string, string> = { ...(next.metadata.annotations ?? {}) };
    if (triggerTime !== undefined) annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] = rfc3339Nano(triggerTime);
    else delete annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION];
    if (truncateSubsets(next.subsets)) annotations[OVER_CAPACITY_ANNOTATION] = 'truncated';
    else delete annotations[OVER_CAPACITY_ANNOTATION];
    next.metadata.annotations = annotations;

    this.log.v(4).info({ service: key, readyEndpoints: ready, notreadyEndpoints: notReady }, 'Update endpoints');
    try {
      if (create) {
        await client.create(next);
      } else {
        const updated = await client.update(next);
        if (updated.metadata?.resourceVersion !== current.metadata?.resourceVersion) {
          this.staleVersions.set(key, current.metadata?.resourceVersion ?? '');
        }
      }
    } catch (err) {
      if (create && isForbidden(err)) {
        this.log.v(5).info({ err: (err as Error).message }, 'Forbidden from creating endpoints');
        // Creates into a terminating namespace keep failing: drop the key.
        if (hasStatusCause(err, 'NamespaceTerminating')) return;
      }
      const target = { ...next, apiVersion: 'v1', kind: 'Endpoints' } as EpObj;
      if (create) this.recorder.eventf(target, 'Warning', 'FailedToCreateEndpoint', 'Failed to create endpoint for service %v/%v: %v', namespace, name, err);
      else this.recorder.eventf(target, 'Warning', 'FailedToUpdateEndpoint', 'Failed to update endpoint %v/%v: %v', namespace, name, err);
      throw err;
    }
  }
}

export function newEndpointsController(ctx: ControllerContext, opts: EndpointsControllerOptions = {}): EndpointsController {
  return new EndpointsCtrl(ctx, opts);
}

/** kube-controller-manager: 5 workers (--concurrent-endpoint-syncs). */
export const descriptor: ControllerDescriptor = {
  name: ENDPOINTS_CONTROLLER_NAME,
  aliases: ['endpoint'],
  requiredResources: [GVR.services, GVR.pods, GVR.endpoints],
  defaultWorkers: 5,
  create: (ctx) => {
    const batch = extraNumber(ctx, 'endpoint-updates-batch-period');
    return newEndpointsController(ctx, batch !== undefined ? { batchPeriodMs: batch } : {});
  },
};
