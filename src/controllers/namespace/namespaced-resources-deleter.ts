/**
 * Deletes everything in a terminating namespace, then finalizes it
 * (pkg/controller/namespace/deletion/namespaced_resources_deleter.go):
 *
 * 1. live read of the namespace; nothing to do unless it has a
 *    deletionTimestamp and the `kubernetes` finalizer; phase set to Terminating;
 * 2. for each namespaced resource of every discovered group supporting
 *    delete: deletecollection (background propagation) or, when unsupported,
 *    delete each item; then list what remains;
 * 3. the conditions are written to the namespace status;
 * 4. content remaining: a ResourcesRemainingError with an estimate (seconds)
 *    telling the controller when to look again; else the `kubernetes`
 *    finalizer is removed through /finalize and the namespace goes away.
 */
import type { Namespace, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { parseApiVersion, type GroupVersionResource } from '../../api/types.js';
import type { DiscoveryClient } from '../../client/discovery.js';
import { isConflict, isNotFound, isStatusError } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import type { Kube } from '../../tools/cache/factory.js';
import { parseTime, rfc3339, type Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { NamespaceConditionUpdater, type ContentTotals } from './conditions.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** The finalizer the namespace controller owns in spec.finalizers. */
export const FINALIZER_KUBERNETES = 'kubernetes';
/** Seconds to wait before re-checking content held by finalizers (upstream finalizerEstimateSeconds). */
export const FINALIZER_ESTIMATE_SECONDS = 15;

/** Content remains; look again after about `estimate` seconds. */
export class ResourcesRemainingError extends Error {
  constructor(readonly estimate: number) {
    super(`some content remains in the namespace, estimate ${estimate} seconds before it is removed`);
    this.name = 'ResourcesRemainingError';
  }
}

interface NamespacedResource {
  gvr: GroupVersionResource;
  verbs: Set<string>;
}

export interface NamespacedResourcesDeleter {
  /** One deletion pass over namespace `name` (see the file comment). */
  delete(name: string): Promise<void>;
}

export interface DeleterOptions {
  client: Client;
  discovery: DiscoveryClient;
  clock: Clock;
  logger: Logger;
}

function gvrText(g: GroupVersionResource): string {
  return `${g.resource}.${g.group}`;
}

class Deleter implements NamespacedResourcesDeleter {
  constructor(private readonly o: DeleterOptions) {}

  private get namespaces() {
    return this.o.client.resource<Kube<Namespace>>(GVR.namespaces);
  }

  async delete(name: string): Promise<void> {
    let ns: Kube<Namespace>;
    try {
      ns = await this.namespaces.get(name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!ns.metadata?.deletionTimestamp) return;
    const updated = await this.retryOnConflict(ns, (n) => this.updateNamespaceStatus(n));
    if (!updated) return;
    ns = updated;
    if (!ns.metadata?.deletionTimestamp) return;
    if (!(ns.spec?.finalizers ?? []).includes(FINALIZER_KUBERNETES)) return;

    const estimate = await this.deleteAllContent(ns);
    if (estimate > 0) throw new ResourcesRemainingError(estimate);
    try {
      await this.retryOnConflict(ns, (n) => this.finalize(n));
    } catch (err) {
      // Another controller sharing the finalizer finished first.
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /** Runs fn on `ns`, re-reading and retrying once on a conflict. Undefined when the namespace is gone. */
  private async retryOnConflict(ns: Kube<Namespace>, fn: (n: Kube<Namespace>) => Promise<Kube<Namespace>>): Promise<Kube<Namespace> | undefined> {
    try {
      return await fn(ns);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (!isConflict(err)) throw err;
    }
    let latest: Kube<Namespace>;
    try {
      latest = await this.namespaces.get(ns.metadata?.name ?? '');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return fn(latest);
  }

  private async updateNamespaceStatus(ns: Kube<Namespace>): Promise<Kube<Namespace>> {
    if (!ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return ns;
    const next = deepCopy(ns);
    next.status = { ...next.status, phase: 'Terminating' };
    return this.namespaces.updateStatus(next);
  }

  private async finalize(ns: Kube<Namespace>): Promise<Kube<Namespace>> {
    const next = deepCopy(ns);
    next.spec = { ...next.spec, finalizers: (ns.spec?.finalizers ?? []).filter((f) => f !== FINALIZER_KUBERNETES) };
    return this.namespaces.updateSubresource<Kube<Namespace>>(ns.metadata?.name ?? '', 'finalize', next);
  }

  /** Namespaced resources (preferred versions) supporting delete. */
  private async discoverResources(conditions: NamespaceConditionUpdater, errors: unknown[]): Promise<NamespacedResource[]> {
    // Fresh discovery each time, as upstream: a CRD created since the last look must be emptied too.
    this.o.discovery.invalidate();
    const { resources, error } = await this.o.discovery.serverPreferredResources();
    if (error) {
      // Not fatal: act on what was discovered.
      errors.push(error);
      conditions.processDiscoverResourcesErr(error);
    }
    const out: NamespacedResource[] = [];
    const gvErrors: string[] = [];
    for (const list of resources) {
      if (!list.groupVersion || list.groupVersion.split('/').length > 2) {
        gvErrors.push(`unexpected GroupVersion string: ${list.groupVersion}`);
        continue;
      }
      const { group, version } = parseApiVersion(list.groupVersion);
      for (const r of list.resources ?? []) {
        if (!r.namespaced || r.name.includes('/')) continue;
        const verbs = new Set(r.verbs ?? []);
        if (!verbs.has('delete')) continue;
        out.push({ gvr: { group, version, resource: r.name }, verbs });
      }
    }
    if (gvErrors.length) {
      // As discovery.GroupVersionResources upstream: the first parse error is the message.
      const e = new Error(gvErrors[0]);
      errors.push(e);
      conditions.processGroupVersionErr(e);
    }
    return out;
  }

  /** Deletes every resource's content; returns the estimate (s) until it is gone. Throws after writing conditions when some step failed. */
  private async deleteAllContent(ns: Kube<Namespace>): Promise<number> {
    const name = ns.metadata?.name ?? '';
    const conditions = new NamespaceConditionUpdater(rfc3339(this.o.clock.now()));
    const errors: unknown[] = [];
    const resources = await this.discoverResources(conditions, errors);
    const deletedAt = parseTime(ns.metadata?.deletionTimestamp) ?? this.o.clock.now();
    const totals: ContentTotals = { remainingByResource: new Map(), remainingByFinalizer: new Map() };
    let estimate = 0;
    for (const r of resources) {
      try {
        const m = await this.deleteAllContentForResource(r, name, deletedAt);
        estimate = Math.max(estimate, m.estimate);
        if (m.remaining > 0) {
          totals.remainingByResource.set(gvrText(r.gvr), m.remaining);
          for (const [f, n] of m.byFinalizer) totals.remainingByFinalizer.set(f, (totals.remainingByFinalizer.get(f) ?? 0) + n);
        }
      } catch (err) {
        // Keep going with the other resources.
        const e = err as { estimate?: number };
        if (typeof e.estimate === 'number') estimate = Math.max(estimate, e.estimate);
        errors.push(err);
        conditions.processDeleteContentErr(err);
      }
    }
    conditions.processContentTotals(totals);
    const next = deepCopy(ns);
    next.status = { ...(next.status ?? {}) };
    if (conditions.update(next.status)) {
      try {
        await this.namespaces.updateStatus(next);
      } catch (err) {
        this.o.logger.error(err, { namespace: name }, "couldn't update status condition for namespace");
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => (e as Error)?.message ?? String(e)).join(', '));
    return estimate;
  }

  private async deleteAllContentForResource(
    r: NamespacedResource,
    ns: string,
    deletedAt: number,
  ): Promise<{ estimate: number; remaining: number; byFinalizer: Map<string, number> }> {
    let estimate = 0;
    if (r.gvr.group === '' && r.gvr.resource === 'pods') {
      try {
        estimate = await this.estimateGracefulTerminationForPods(ns, deletedAt);
      } catch (err) {
        this.o.logger.error(err, { namespace: ns }, 'unable to estimate graceful termination of pods');
      }
    }
    const fail = (err: unknown) => Object.assign(err instanceof Error ? err : new Error(String(err)), { estimate });
    const ri = this.o.client.resource(r.gvr).namespace(ns);
    let collectionDone = false;
    if (r.verbs.has('deletecollection')) {
      try {
        await ri.deleteCollection({ propagationPolicy: 'Background' });
        collectionDone = true;
      } catch (err) {
        if (!(isNotFound(err) || (isStatusError(err) && err.code === 405))) throw fail(err);
      }
    }
    if (!collectionDone) {
      try {
        const list = await this.o.client.metadata(r.gvr).namespace(ns).listAll();
        for (const item of list.items) {
          try {
            await ri.delete(item.metadata?.name ?? '', { propagationPolicy: 'Background' });
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
        }
      } catch (err) {
        if (!(isNotFound(err) || (isStatusError(err) && err.code === 405))) throw fail(err);
      }
    }
    if (!r.verbs.has('list')) return { estimate, remaining: 0, byFinalizer: new Map() };
    let items;
    try {
      items = (await this.o.client.metadata(r.gvr).namespace(ns).listAll()).items;
    } catch (err) {
      if (isNotFound(err) || (isStatusError(err) && err.code === 405)) return { estimate, remaining: 0, byFinalizer: new Map() };
      throw fail(err);
    }
    const byFinalizer = new Map<string, number>();
    for (const it of items) for (const f of it.metadata?.finalizers ?? []) byFinalizer.set(f, (byFinalizer.get(f) ?? 0) + 1);
    if (items.length === 0) return { estimate, remaining: 0, byFinalizer };
    if (estimate !== 0) return { estimate, remaining: items.length, byFinalizer };
    if (byFinalizer.size > 0) return { estimate: FINALIZER_ESTIMATE_SECONDS, remaining: items.length, byFinalizer };
    throw Object.assign(new Error(`unexpected items still remain in namespace: ${ns} for gvr: ${r.gvr.group}/${r.gvr.version}, Resource=${r.gvr.resource}`), {
      estimate,
    });
  }

  /** Longest grace period of the namespace's non-terminal pods, less the time since deletion began. */
  private async estimateGracefulTerminationForPods(ns: string, deletedAt: number): Promise<number> {
    const pods = await this.o.client.resource<Kube<Pod>>(GVR.pods).namespace(ns).listAll();
    let estimate = 0;
    for (const p of pods.items) {
      const phase = p.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const grace = p.spec?.terminationGracePeriodSeconds;
      if (grace !== undefined && grace > estimate) estimate = grace;
    }
    const elapsed = Math.floor((this.o.clock.now() - deletedAt) / 1000);
    return Math.max(0, estimate - elapsed);
  }
}

export function newNamespacedResourcesDeleter(opts: DeleterOptions): NamespacedResourcesDeleter {
  return new Deleter(opts);
}
