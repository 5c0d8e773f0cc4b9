/**
 * The resource quota controller (pkg/controller/resourcequota): keeps each
 * ResourceQuota's status.hard equal to spec.hard and status.used equal to
 * what the namespace's objects use, computed with the same evaluators as
 * ResourceQuota admission (src/api/quota).
 *
 * A quota is synced when it is created or its spec changes, when an object
 * it counts is added, deleted, or changes its usage (a pod finishing or
 * passing its deletion grace period), and on a full resync every
 * --resource-quota-sync-period (5 m). Pods, services, PVCs, config maps,
 * secrets, replication controllers and quotas come from informers; other
 * `count/<resource>.<group>` resources are listed live at sync.
 */
import type { ResourceQuota } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { GroupVersionResource, KubeObject } from '../../api/types.js';
import { calculateQuotaUsage, formatResourceList, hardResourceNames, parseResourceList, quotaEvaluatorFor } from '../../api/quota/index.js';
import { quantityEquals } from '../../api/quantity.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, waitForCacheSync, type QueueWorker } from '../../controller/base-controller.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { DeletedFinalStateUnknown, SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const RESOURCE_QUOTA_CONTROLLER_NAME = 'resourcequota-controller';
/** --resource-quota-sync-period default. */
export const DEFAULT_RESOURCE_QUOTA_SYNC_PERIOD_MS = 5 * 60_000;

export interface ResourceQuotaController extends Controller {
  /** Recomputes one quota (`namespace/name`) and writes its status when it changed. */
  syncQuota(key: string): Promise<void>;
  /** Enqueues every quota (the periodic full resync). */
  resyncAll(): void;
  hasSynced(): boolean;
  readonly worker: QueueWorker;
}

type QuotaObj = Kube<ResourceQuota>;

const watched = ['pods', 'services', 'persistentVolumeClaims', 'configMaps', 'secrets', 'replicationControllers', 'resourceQuotas'] as const;

/** Whether the status already says what we computed (equal quantities, same keys). */
function sameList(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => b[k] !== undefined && quantityEquals(a![k]!, b[k]!));
}

class QuotaController implements ResourceQuotaController {
  readonly name = RESOURCE_QUOTA_CONTROLLER_NAME;
  readonly worker: QueueWorker;
  private readonly log: Logger;
  private readonly informers = new Map<string, SharedIndexInformer<KubeObject>>();
  private readonly syncPeriodMs: number;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const p = Number(ctx.options.extra?.['resource-quota-sync-period']);
    this.syncPeriodMs = Number.isFinite(p) && p > 0 ? p : DEFAULT_RESOURCE_QUOTA_SYNC_PERIOD_MS;
    this.worker = newQueueWorker({ name: 'resourcequota_primary', clock: ctx.clock, logger: this.log, sync: (k) => this.syncQuota(k) });
    for (const name of watched) {
      const inf = (ctx.informers[name] as () => SharedIndexInformer<KubeObject>)();
      this.informers.set(`${GVR[name].group}/${GVR[name].resource}`, inf);
    }
    const quotas = this.informers.get('/resourcequotas')!;
    quotas.addEventHandler({
      onAdd: (q) => this.worker.enqueue(keyFunc(q)),
      onUpdate: (o, n) => {
        const oq = o as QuotaObj;
        const nq = n as QuotaObj;
        // Resync only for spec changes or a status.hard that drifted (upstream's updateQuota filter).
        if (JSON.stringify(oq.spec ?? {}) !== JSON.stringify(nq.spec ?? {}) || !sameList(nq.status?.hard as Record<string, string>, (nq.spec?.hard ?? {}) as Record<string, string>)) {
          this.worker.enqueue(keyFunc(n));
        }
      },
    });
    for (const [key, inf] of this.informers) {
      if (key === '/resourcequotas') continue;
      const [group, resource] = key.split('/') as [string, string];
      const ev = quotaEvaluatorFor(group, resource);
      inf.addEventHandler({
        onAdd: (obj) => this.replenish(obj),
        onUpdate: (o, n) => {
          const now = this.ctx.clock.now();
          const a = formatResourceList(ev.usage(o, now));
          if (!sameList(a, formatResourceList(ev.usage(n, now)))) this.replenish(n);
        },
        onDelete: (obj) => this.replenish(obj),
      });
    }
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Enqueues the quotas of the object's namespace. */
  private replenish(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): void {
    const o = objectFromDeleted(obj);
    const ns = o?.metadata?.namespace;
    if (!ns) return;
    for (const q of newLister(this.informers.get('/resourcequotas')!.getIndexer()).namespace(ns).list()) this.worker.enqueue(keyFunc(q));
  }

  resyncAll(): void {
    for (const q of newLister(this.informers.get('/resourcequotas')!.getIndexer()).list()) this.worker.enqueue(keyFunc(q));
  }

  private gvrFor(group: string, resource: string): GroupVersionResource | undefined {
    return Object.values(GVR).find((g) => g.group === group && g.resource === resource);
  }

  private async objectsOf(group: string, resource: string, ns: string): Promise<readonly KubeObject[] | undefined> {
    const inf = this.informers.get(`${group}/${resource}`);
    if (inf) return newLister(inf.getIndexer()).namespace(ns).list();
    const gvr = this.gvrFor(group, resource) ?? (await this.discover(group, resource));
    if (!gvr) return undefined;
    try {
      return (await this.ctx.client.resource(gvr).namespace(ns).list()).items;
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
    const next = structuredClone(q);
    next.status = { hard, used };
    try {
      await this.ctx.client.resource<QuotaObj>(GVR.resourceQuotas).namespace(ns).updateStatus(next);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    if (!(await waitForCacheSync(this.name, signal, this.ctx.clock, () => this.hasSynced()))) return;
    const resync = (async () => {
      while (!signal.aborted) {
        try {
          await this.ctx.clock.sleep(this.syncPeriodMs, signal);
        } catch {
          return;
        }
        this.resyncAll();
      }
    })();
    await this.worker.run(workers, signal);
    await resync;
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
  create: (ctx) => newResourceQuotaController(ctx),
};
