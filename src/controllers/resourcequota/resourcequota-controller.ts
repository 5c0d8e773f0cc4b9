/**
 * The resource quota controller (pkg/controller/resourcequota): keeps each
 * ResourceQuota's status.hard equal to spec.hard and status.used equal to
 * what the namespace's objects use, computed with the same evaluators as
 * ResourceQuota admission (src/api/quota).
 *
 * A quota is synced when it is created or its spec changes, when an object
 * it counts is added, deleted, or changes its usage (a pod finishing or
 * passing its deletion grace period), and on a full resync every
 * --resource-quota-sync-period (5 m). Only quotas whose spec.hard names
 * something the object's evaluator tracks are resynced for it.
 *
 * What is counted (upstream's QuotaMonitor): pods, services, PVCs, config
 * maps, secrets, replication controllers and quotas come from full
 * informers; every other quotable resource found by discovery (namespaced,
 * create/list/watch/delete, not ignored: custom resources included) gets a
 * metadata-only informer, enough for its `count/<resource>.<group>`, shared
 * with the garbage collector's. Discovery is re-read every 30 s so new
 * custom resources are covered. A resource whose informer has not synced
 * yet is listed live at sync.
 *
 * Deliberate difference: upstream replenishes only on update and delete
 * events, relying on quota admission to add a create's usage to
 * status.used; our admission computes usage itself and never writes the
 * quota, so creates resync the quota here too.
 */
import type { Pod, ResourceQuota } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { GroupVersionResource, KubeObject } from '../../api/types.js';
import { calculateQuotaUsage, formatResourceList, hardResourceNames, parseResourceList, podCountsForQuota, quotaEvaluatorFor, type QuotaEvaluator } from '../../api/quota/index.js';
import { gvrString } from '../../api/gvr.js';
import { quantityEquals } from '../../api/quantity.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import { sharedOrMetadataInformer, type Kube } from '../../tools/cache/factory.js';
import type { DeletedFinalStateUnknown, ResourceEventHandlerRegistration, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { quotableResources } from './quotable-resources.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const RESOURCE_QUOTA_CONTROLLER_NAME = 'resourcequota-controller';
/** --resource-quota-sync-period default. */
export const DEFAULT_RESOURCE_QUOTA_SYNC_PERIOD_MS = 5 * 60_000;
/** How often discovery is re-read for new quotable resources (upstream: 30 s). */
export const QUOTA_DISCOVERY_PERIOD_MS = 30_000;

export interface ResourceQuotaController extends Controller {
  /** Recomputes one quota (`namespace/name`) and writes its status when it changed. */
  syncQuota(key: string): Promise<void>;
  /** Enqueues every quota (the periodic full resync). */
  resyncAll(): void;
  /** The full informers (pods, services, ..., quotas) have synced. */
  hasSynced(): boolean;
  /** Re-reads discovery and watches quotable resources not yet watched (the 30 s loop body). */
  resyncMonitors(signal?: AbortSignal): Promise<void>;
  /** `group/resource` of every resource counted from an informer. */
  monitored(): string[];
  readonly worker: QueueWorker;
}

type QuotaObj = Kube<ResourceQuota>;

/** Resources always watched with full informers (upstream's core evaluators); pods, services and PVCs need their content. */
const watched = ['pods', 'services', 'persistentVolumeClaims', 'configMaps', 'secrets', 'replicationControllers', 'resourceQuotas'] as const;

/** A quotable resource found by discovery, counted from a metadata informer. */
interface Monitor {
  gvr: GroupVersionResource;
  informer: SharedIndexInformer<KubeObject>;
  reg: ResourceEventHandlerRegistration;
}

const grKey = (group: string, resource: string) => `${group}/${resource}`;

/** Whether the status already says what we computed (equal quantities, same keys). */
function sameList(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => b[k] !== undefined && quantityEquals(a![k]!, b[k]!));
}

/** What a pod's usage is computed from besides whether it counts: its containers' resources and its overhead. */
function podResourcesText(pod: Pod): string {
  const spec = pod.spec;
  return JSON.stringify([spec?.containers?.map((c) => c.resources), spec?.initContainers?.map((c) => c.resources), spec?.overhead]);
}

/**
 * Whether an update may change what an object uses. Most updates are pods'
 * status writes: a pod's usage changes only when it stops counting
 * (terminal, or deleting past its grace period: upstream's QuotaMonitor
 * replenishes for that alone) or its resources change (a resize, which
 * kcm's admission does not charge to the quota), so those are compared
 * rather than its usage computed twice.
 */
function usageMayChange(ev: QuotaEvaluator, o: KubeObject, n: KubeObject, now: number): boolean {
  if (ev.group === '' && ev.resource === 'pods') {
    const op = o as Pod;
    const np = n as Pod;
    return podCountsForQuota(op, now) !== podCountsForQuota(np, now) || podResourcesText(op) !== podResourcesText(np);
  }
  return !sameList(formatResourceList(ev.usage(o, now)), formatResourceList(ev.usage(n, now)));
}

class QuotaController implements ResourceQuotaController {
  readonly name = RESOURCE_QUOTA_CONTROLLER_NAME;
  readonly worker: QueueWorker;
  private readonly log: Logger;
  /** Full informers, by `group/resource`. */
  private readonly informers = new Map<string, SharedIndexInformer<KubeObject>>();
  /** Metadata informers of discovered resources, by `group/resource`. */
  private readonly monitors = new Map<string, Monitor>();
  private readonly syncPeriodMs: number;
  private startSignal: AbortSignal | undefined;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const p = Number(ctx.options.extra?.['resource-quota-sync-period']);
    this.syncPeriodMs = Number.isFinite(p) && p > 0 ? p : DEFAULT_RESOURCE_QUOTA_SYNC_PERIOD_MS;
    this.worker = newQueueWorker({ name: 'resourcequota_primary', clock: ctx.clock, logger: this.log, sync: (k) => this.syncQuota(k) });
    for (const name of watched) {
      const inf = (ctx.informers[name] as () => SharedIndexInformer<KubeObject>)();
      this.informers.set(grKey(GVR[name].group, GVR[name].resource), inf);
    }
    const quotas = this.informers.get('/resourcequotas')!;
    quotas.addEventHandler({
      onAdd: (q) => {
        this.worker.enqueue(keyFunc(q));
        this.replenish('', 'resourcequotas', q);
      },
      onUpdate: (o, n) => {
        const oq = o as QuotaObj;
        const nq = n as QuotaObj;
        // Resync only for spec changes or a status.hard that drifted (upstream's updateQuota filter).
        if (JSON.stringify(oq.spec ?? {}) !== JSON.stringify(nq.spec ?? {}) || !sameList(nq.status?.hard as Record<string, string>, (nq.spec?.hard ?? {}) as Record<string, string>)) {
          this.worker.enqueue(keyFunc(n));
        }
      },
      onDelete: (q) => this.replenish('', 'resourcequotas', q),
    });
    for (const [key, inf] of this.informers) {
      if (key === '/resourcequotas') continue;
      const [group, resource] = key.split('/') as [string, string];
      const ev = quotaEvaluatorFor(group, resource);
      inf.addEventHandler({
        onAdd: (obj) => this.replenish(group, resource, obj),
        onUpdate: (o, n) => {
          if (usageMayChange(ev, o, n, this.ctx.clock.now())) this.replenish(group, resource, n);
        },
        onDelete: (obj) => this.replenish(group, resource, obj),
      });
    }
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  monitored(): string[] {
    return [...this.informers.keys(), ...this.monitors.keys()].sort();
  }

  /**
   * Counts a discovered resource (its objects' count never changes on update) from the informer other
   * controllers watch it with, else a metadata-only one: one watch per resource, as upstream's QuotaMonitor
   * shares the typed informers.
   */
  private addMonitor(gvr: GroupVersionResource): void {
    const informer = sharedOrMetadataInformer(this.ctx.informers, gvr) as unknown as SharedIndexInformer<KubeObject>;
    const reg = informer.addEventHandler({
      onAdd: (obj) => this.replenish(gvr.group, gvr.resource, obj),
      onDelete: (obj) => this.replenish(gvr.group, gvr.resource, obj),
    });
    this.monitors.set(grKey(gvr.group, gvr.resource), { gvr, informer, reg });
  }

  async resyncMonitors(signal?: AbortSignal): Promise<void> {
    const d = this.ctx.discovery;
    if (!d) return;
    d.invalidate();
    const { resources, failedGroupVersions } = await quotableResources(d, this.log);
    const want = new Map(resources.map((gvr) => [grKey(gvr.group, gvr.resource), gvr]));
    let added = 0;
    for (const [key, gvr] of want) {
      if (this.informers.has(key)) continue;
      const cur = this.monitors.get(key);
      if (cur && gvrString(cur.gvr) === gvrString(gvr)) continue;
      if (cur) this.removeMonitor(key, cur);
      this.addMonitor(gvr);
      added++;
    }
    // Resources no longer served are no longer watched (kept when their group version only failed to answer).
    for (const [key, m] of this.monitors) {
      if (want.has(key)) continue;
      const gv = m.gvr.group ? `${m.gvr.group}/${m.gvr.version}` : m.gvr.version;
      if (failedGroupVersions.includes(gv)) continue;
      this.removeMonitor(key, m);
    }
    if (added) {
      this.log.v(2).info({ added, total: this.monitors.size }, 'synced quota monitors');
      const s = signal ?? this.startSignal;
      if (s) this.ctx.informers.start(s);
    }
  }

  private removeMonitor(key: string, m: Monitor): void {
    m.informer.removeEventHandler(m.reg);
    this.monitors.delete(key);
    this.log.v(2).info({ resource: key }, 'stopped monitoring resource for quota');
  }

  /**
   * Enqueues the quotas of the object's namespace that track something the
   * object's evaluator accounts for (replenishQuota).
   */
  private replenish(group: string, resource: string, obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): void {
    const o = objectFromDeleted(obj);
    const ns = o?.metadata?.namespace;
    if (!ns) return;
    const ev = quotaEvaluatorFor(group, resource);
    for (const q of newLister(this.informers.get('/resourcequotas')!.getIndexer()).namespace(ns).list() as QuotaObj[]) {
      const names = new Set([...Object.keys(q.spec?.hard ?? {}), ...Object.keys(q.status?.hard ?? {})]);
      if (ev.matchingResources([...names]).length) this.worker.enqueue(keyFunc(q));
    }
  }

  resyncAll(): void {
    for (const q of newLister(this.informers.get('/resourcequotas')!.getIndexer()).list()) this.worker.enqueue(keyFunc(q));
  }

  private gvrFor(group: string, resource: string): GroupVersionResource | undefined {
    return Object.values(GVR).find((g) => g.group === group && g.resource === resource);
  }

  /** The namespace's objects of a resource: from an informer once synced, else listed live; undefined when not served. */
  private async objectsOf(group: string, resource: string, ns: string): Promise<readonly KubeObject[] | undefined> {
    const key = grKey(group, resource);
    const inf = this.informers.get(key) ?? this.monitors.get(key)?.informer;
    if (inf?.hasSynced()) return newLister(inf.getIndexer()).namespace(ns).list();
    const gvr = this.monitors.get(key)?.gvr ?? this.gvrFor(group, resource) ?? (await this.discover(group, resource));
    if (!gvr) return undefined;
    try {
      // Only pods, services and PVCs need more than metadata to be measured.
      if (this.informers.has(key)) return (await this.ctx.client.resource(gvr).namespace(ns).list()).items;
      return (await this.ctx.client.metadata(gvr).namespace(ns).list()).items as unknown as KubeObject[];
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async discover(group: string, resource: string): Promise<GroupVersionResource | undefined> {
    const d = this.ctx.discovery;
    if (!d) return undefined;
    const { resources } = await d.serverPreferredResources();
    for (const l of resources) {
      const i = l.groupVersion.indexOf('/');
      const g = i < 0 ? '' : l.groupVersion.slice(0, i);
      if (g !== group || !l.resources.some((r) => r.name === resource && r.namespaced)) continue;
      return { group, version: i < 0 ? l.groupVersion : l.groupVersion.slice(i + 1), resource };
    }
    return undefined;
  }

  async syncQuota(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const q = newLister(this.informers.get('/resourcequotas')!.getIndexer()).namespace(ns).get(name) as QuotaObj | undefined;
    if (!q) return;
    const hard = formatResourceList(parseResourceList(q.spec?.hard as Record<string, string> | undefined));
    // Start from the previous observation, overwritten by what we can compute now (as upstream).
    const used: Record<string, string> = {};
    const prev = (q.status?.used ?? {}) as Record<string, string>;
    for (const n of hardResourceNames(q)) if (prev[n] !== undefined) used[n] = prev[n]!;
    Object.assign(used, formatResourceList(await calculateQuotaUsage(q, (g, r) => this.objectsOf(g, r, ns), this.ctx.clock.now())));
    const dirty = !sameList(q.status?.hard as Record<string, string>, hard) || !sameList(q.status?.used as Record<string, string>, used);
    if (!dirty) return;
    const next = deepCopy(q);
    next.status = { hard, used };
    try {
      await this.ctx.client.resource<QuotaObj>(GVR.resourceQuotas).namespace(ns).updateStatus(next);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.startSignal = signal;
    // Monitors found at creation are started by the manager; start any added since.
    this.ctx.informers.start(signal);
    if (!(await waitForCacheSync(this.name, signal, this.ctx.clock, () => this.hasSynced()))) return;
    const every = async (ms: number, fn: () => Promise<void> | void) => {
      while (!signal.aborted) {
        try {
          await this.ctx.clock.sleep(ms, signal);
        } catch {
          return;
        }
        try {
          await fn();
        } catch (err) {
          this.log.error(err, {}, 'periodic quota work failed');
        }
      }
    };
    await Promise.all([
      this.worker.run(workers, signal),
      every(this.syncPeriodMs, () => this.resyncAll()),
      every(QUOTA_DISCOVERY_PERIOD_MS, () => this.resyncMonitors(signal)),
    ]);
  }

  healthy(): boolean {
    return this.worker.healthy();
  }
}

export function newResourceQuotaController(ctx: ControllerContext): ResourceQuotaController {
  return new QuotaController(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: RESOURCE_QUOTA_CONTROLLER_NAME,
  aliases: ['resourcequota'],
  requiredResources: [GVR.resourceQuotas],
  defaultWorkers: 5,
  create: async (ctx) => {
    const c = newResourceQuotaController(ctx);
    // A first discovery, so the manager starts these informers with the rest.
    await c.resyncMonitors().catch((err: unknown) => ctx.logger(RESOURCE_QUOTA_CONTROLLER_NAME).error(err, {}, 'failed to discover quotable resources'));
    return c;
  },
};
