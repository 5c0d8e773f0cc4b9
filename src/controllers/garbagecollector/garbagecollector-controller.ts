/**
 * Wiring of the garbage collector (kube-controller-manager's
 * startGarbageCollectorController): informers on every deletable resource
 * found by discovery (the shared full informer where another controller
 * already has one, else metadata-only), re-discovered every 30 s so new
 * custom resources are covered; their events feed the ownership graph;
 * `workers` workers drain each of the delete and orphan queues.
 */
import type { PartialObjectMetadata } from '../../api/types.js';
import { gvrString } from '../../api/gvr.js';
import type { DiscoveryClient } from '../../client/discovery.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { ResourceEventHandlerRegistration, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { sharedOrMetadataInformer } from '../../tools/cache/factory.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { newCollector, type Collector } from './garbage-collector.js';
import type { ObservedObject } from './graph.js';
import { deletableResources, newRestMapper, type ResourceInfo, type RestMapper } from './resources.js';

export const GARBAGE_COLLECTOR_CONTROLLER_NAME = 'garbage-collector-controller';
/** How often discovery is re-read (upstream: 30 s). */
export const DISCOVERY_RESYNC_PERIOD_MS = 30_000;

interface Monitor {
  info: ResourceInfo;
  informer: SharedIndexInformer<PartialObjectMetadata>;
  reg: ResourceEventHandlerRegistration;
}

export interface GarbageCollectorController extends Controller {
  readonly collector: Collector;
  /** Every monitor's handler has seen its initial list. */
  isSynced(): boolean;
  /** Re-reads discovery and starts monitors for resources not yet watched (the 30 s loop body). */
  resyncMonitors(signal?: AbortSignal): Promise<void>;
  /** GVR strings currently watched. */
  monitored(): string[];
}

function observed(info: ResourceInfo, o: PartialObjectMetadata): ObservedObject {
  const m = o.metadata ?? {};
  return {
    identity: { apiVersion: info.apiVersion, kind: info.kind, name: m.name ?? '', uid: m.uid ?? '', namespace: m.namespace ?? '' },
    owners: m.ownerReferences ?? [],
    deletionTimestamp: m.deletionTimestamp,
    finalizers: m.finalizers ?? [],
  };
}

class GarbageCollector implements GarbageCollectorController {
  readonly name = GARBAGE_COLLECTOR_CONTROLLER_NAME;
  readonly collector: Collector;
  private readonly monitors = new Map<string, Monitor>();
  private readonly log: Logger;
  private readonly mapper: RestMapper;
  private startSignal: AbortSignal | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly discovery: DiscoveryClient,
  ) {
    this.log = ctx.logger(this.name);
    this.mapper = newRestMapper(discovery, this.log);
    this.collector = newCollector({
      client: ctx.client,
      clock: ctx.clock,
      mapper: this.mapper,
      recorder: ctx.recorder('garbage-collector-controller'),
      logger: this.log,
    });
  }

  monitored(): string[] {
    return [...this.monitors.keys()].sort();
  }

  isSynced(): boolean {
    for (const m of this.monitors.values()) if (!m.reg.hasSynced()) return false;
    return true;
  }

  healthy(): boolean {
    return !this.stopped && this.collector.deleteWorker.healthy() && this.collector.orphanWorker.healthy();
  }

  private addMonitor(info: ResourceInfo): void {
    const key = gvrString(info.gvr);
    // A resource other controllers already watch in full (pods, ReplicaSets, ...) shares their informer, as
    // upstream's GC uses the typed informers: one watch and one cache instead of a second, metadata-only one.
    const informer = sharedOrMetadataInformer(this.ctx.informers, info.gvr);
    const feed = (type: 'add' | 'update', obj: PartialObjectMetadata, old?: PartialObjectMetadata) => {
      if (!obj.metadata?.uid) return;
      this.collector.processGraphEvent({ type, object: observed(info, obj), old: old ? observed(info, old) : undefined });
    };
    const reg = informer.addEventHandler({
      onAdd: (o) => feed('add', o),
      onUpdate: (old, o) => feed('update', o, old),
      onDelete: (o) => {
        const obj = objectFromDeleted(o);
        if (!obj?.metadata?.uid) return;
        this.collector.processGraphEvent({ type: 'delete', object: observed(info, obj) });
      },
    });
    this.monitors.set(key, { info, informer, reg });
  }

  async resyncMonitors(signal?: AbortSignal): Promise<void> {
    this.discovery.invalidate();
    const { resources, failedGroupVersions } = await deletableResources(this.discovery, this.log);
    await this.mapper.refresh();
    const want = new Map(resources.map((r) => [gvrString(r.gvr), r]));
    let added = 0;
    for (const [key, info] of want) {
      if (this.monitors.has(key)) continue;
      this.addMonitor(info);
      added++;
    }
    // Resources no longer served stop feeding the graph (kept when their group version only failed to answer).
    for (const [key, m] of this.monitors) {
      if (want.has(key) || failedGroupVersions.includes(m.info.apiVersion)) continue;
      m.informer.removeEventHandler(m.reg);
      this.monitors.delete(key);
      this.log.info({ resource: key }, 'stopped monitoring resource');
    }
    if (added) {
      this.log.info({ added, total: this.monitors.size }, 'synced monitors');
      const s = signal ?? this.startSignal;
      if (s) this.ctx.informers.start(s);
    }
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.startSignal = signal;
    this.log.info({}, 'Starting controller');
    try {
      this.ctx.informers.start(signal);
      while (!this.isSynced()) {
        if (signal.aborted) return;
        try {
          await this.ctx.clock.sleep(100, signal);
        } catch {
          return;
        }
      }
      this.log.info({}, 'all resource monitors have synced; proceeding to collect garbage');
      const resync = this.resyncLoop(signal);
      await Promise.all([this.collector.deleteWorker.run(workers, signal), this.collector.orphanWorker.run(workers, signal), resync]);
    } finally {
      if (!signal.aborted) this.stopped = true;
      this.log.info({}, 'Shutting down controller');
    }
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.ctx.clock.sleep(DISCOVERY_RESYNC_PERIOD_MS, signal);
      } catch {
        return;
      }
      try {
        await this.resyncMonitors(signal);
      } catch (err) {
        this.log.error(err, 'failed to re-discover deletable resources');
      }
    }
  }
}

/** Builds the collector and its monitors from a first discovery. */
export async function newGarbageCollectorController(ctx: ControllerContext): Promise<GarbageCollectorController> {
  if (!ctx.discovery) throw new Error('the garbage collector needs discovery (ctx.discovery)');
  const gc = new GarbageCollector(ctx, ctx.discovery);
  await gc.resyncMonitors();
  return gc;
}

/** --concurrent-gc-syncs defaults to 20. */
export const descriptor: ControllerDescriptor = {
  name: GARBAGE_COLLECTOR_CONTROLLER_NAME,
  aliases: ['garbagecollector'],
  requiredResources: [],
  defaultWorkers: 20,
  create: (ctx) => newGarbageCollectorController(ctx),
};
