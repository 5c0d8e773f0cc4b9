/**
 * ResourceQuota admission: a create or update that would take a namespace
 * past a ResourceQuota's spec.hard is refused with 403 and upstream's
 * message (`exceeded quota: q, requested: pods=1, used: pods=2, limited:
 * pods=2`); a quota on cpu/memory makes every container declare them
 * (`failed quota: q: must specify limits.cpu for: c`). Every resource is at
 * least object-counted on create (`count/replicasets.apps`,
 * `count/widgets.example.com`), as upstream creates an object-count
 * evaluator on demand; events and virtual resources are ignored.
 *
 * Differences from kube-apiserver, deliberate: usage is computed at
 * admission from the namespace's stored objects (so a quota works before
 * any controller has filled status.used, and deletions free usage at
 * once), and spec.hard is the limit. The quota's status is the
 * resourcequota controller's to write.
 *
 * Concurrency: checks are serialized per namespace, and an admitted write
 * stays "pending" (counted as if stored) until storage holds it or
 * `pendingTtlMs` passes, so two concurrent creates cannot both take the
 * last slot.
 */
import type { ResourceQuota } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import { realClock, type Clock } from '../../util/clock/clock.js';
import {
  addLists,
  calculateQuotaUsage,
  hardLimits,
  hardResourceNames,
  isIgnoredQuotaResource,
  isZeroList,
  lessThanOrEqual,
  mask,
  matchesScopes,
  prettyPrint,
  quotaEvaluatorFor,
  subtractLists,
  type QuotaEvaluator,
  type ResourceList,
} from '../../api/quota/index.js';
import { compare, newQuantity } from '../../api/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin, ObjectLister } from './admission.js';
import { forbidden } from '../status.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface ResourceQuotaAdmissionOptions {
  clock?: Clock;
  /** How long an admitted write that never reached storage keeps counting (default 10 s). */
  pendingTtlMs?: number;
}

interface Pending {
  group: string;
  resource: string;
  name: string;
  uid: string;
  /** resourceVersion of the object the update replaces; undefined for creates. */
  oldRv: string | undefined;
  obj: KubeObject;
  at: number;
}

export function newResourceQuotaAdmission(lister: ObjectLister, opts: ResourceQuotaAdmissionOptions = {}): AdmissionPlugin {
  const clock = opts.clock ?? realClock;
  const ttl = opts.pendingTtlMs ?? 10_000;
  const locks = new Map<string, Promise<void>>();
  const pending = new Map<string, Pending[]>();

  async function withLock<T>(ns: string, fn: () => Promise<T>): Promise<T> {
    const prev = locks.get(ns) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    locks.set(ns, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (locks.get(ns) === tail) locks.delete(ns);
    }
  }

  /** Stored objects with pending writes laid over them; settles pending entries storage now holds. */
  function overlay(ns: string, group: string, resource: string, stored: readonly KubeObject[], nowMs: number): KubeObject[] {
    const byName = new Map<string, KubeObject>(stored.map((o) => [o.metadata?.name ?? '', o]));
    const keep: Pending[] = [];
    for (const p of pending.get(ns) ?? []) {
      if (nowMs - p.at > ttl) continue;
      if (p.group !== group || p.resource !== resource) {
        keep.push(p);
        continue;
      }
      const s = byName.get(p.name);
      // Stored under our uid at a new revision (written), or another object holds the name (our create lost).
      if (s && (s.metadata?.uid !== p.uid || s.metadata?.resourceVersion !== p.oldRv)) continue;
      keep.push(p);
      byName.set(p.name, p.obj);
    }
    if (keep.length) pending.set(ns, keep);
    else pending.delete(ns);
    return [...byName.values()];
  }

  async function check(a: AdmissionAttributes, ev: QuotaEvaluator, quotas: ResourceQuota[]): Promise<void> {
    const obj = a.object!;
    const now = clock.now();
    let delta = ev.usage(obj, now);
    if (a.operation === 'UPDATE' && a.oldObject?.metadata?.resourceVersion) {
      const prev = ev.usage(a.oldObject, now);
      const d = subtractLists(delta, prev);
      // SubtractWithNonNegativeResult: shrinking is free, never a credit.
      for (const [k, v] of d) if (compare(v, newQuantity(0)) < 0) d.set(k, newQuantity(0));
      delta = mask(d, delta.keys());
    }
    for (const [k, v] of delta) if (compare(v, newQuantity(0)) === 0) delta.delete(k);
    if (isZeroList(delta)) return;
    const cache = new Map<string, Promise<KubeObject[]>>();
    const objects = (group: string, resource: string) => {
      const key = `${group}/${resource}`;
      if (!cache.has(key)) cache.set(key, lister.list(group, resource, a.namespace).then((xs) => overlay(a.namespace, group, resource, xs ?? [], now)));
      return cache.get(key)!;
    };
    for (const q of quotas) {
      const names = hardResourceNames(q);
      const matched = ev.matchingResources(names);
      if (!matched.length || !matchesScopes(q, ev, obj)) continue;
      const qname = q.metadata?.name ?? '';
      const missing = ev.constraints(matched, obj);
      if (missing) throw forbidden(a.resource, a.name, `failed quota: ${qname}: ${missing}`);
      const requested = mask(delta, matched);
      if (!requested.size) continue;
      // Usage of everything else: the object itself is excluded (an update's old state is replaced by the delta).
      const others = async (group: string, resource: string) => {
        const xs = await objects(group, resource);
        return group === ev.group && resource === ev.resource && a.operation === 'UPDATE' ? xs.filter((x) => x.metadata?.name !== a.name) : xs;
      };
      let used: ResourceList = await calculateQuotaUsage(q, others, now);
      if (a.operation === 'UPDATE' && a.oldObject && matchesScopes(q, ev, a.oldObject)) used = addLists(used, mask(ev.usage(a.oldObject, now), matched));
      const hard = hardLimits(q);
      const next = mask(addLists(used, requested), requested.keys());
      const { ok, exceeded } = lessThanOrEqual(next, hard);
      if (!ok) {
        throw forbidden(
          a.resource,
          a.name,
          `exceeded quota: ${qname}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(used, exceeded))}, limited: ${prettyPrint(mask(hard, exceeded))}`,
        );
      }
    }
    if (a.dryRun) return;
    const m = obj.metadata ?? {};
    const list = pending.get(a.namespace) ?? [];
    list.push({ group: ev.group, resource: ev.resource, name: m.name ?? a.name, uid: m.uid ?? '', oldRv: a.oldObject?.metadata?.resourceVersion, obj: deepCopy(obj), at: now });
    pending.set(a.namespace, list);
  }

  return {
    name: 'ResourceQuota',
    async validate(a) {
      if (!a.resource.namespaced || !a.namespace || !a.object) return;
      if (isIgnoredQuotaResource(a.resource.group, a.resource.resource)) return;
      // Every other resource, custom ones included, is at least object-counted (count/<resource>.<group>).
      const ev = quotaEvaluatorFor(a.resource.group, a.resource.resource);
      if (!ev.handles(a.operation, a.subresource)) return;
      const quotas = ((await lister.list('', 'resourcequotas', a.namespace)) ?? []) as ResourceQuota[];
      if (!quotas.some((q) => ev.matchingResources(hardResourceNames(q)).length)) return;
      quotas.sort((x, y) => (x.metadata?.name ?? '').localeCompare(y.metadata?.name ?? ''));
      await withLock(a.namespace, () => check(a, ev, quotas));
    },
  };
}
