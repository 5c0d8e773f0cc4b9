/**
 * Quota usage: which quotas an object falls under and what a namespace's
 * objects add up to for one ResourceQuota (quota.CalculateUsage).
 */
import type { ResourceQuota, ScopedResourceSelectorRequirement } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../types.js';
import { newQuantity } from '../quantity.js';
import { addLists, mask, parseResourceList, type ResourceList } from './resource-list.js';
import { groupResourcesForQuotaNames, quotaEvaluatorFor, type QuotaEvaluator } from './evaluators.js';

/** The quota's resource names (spec.hard keys), sorted. */
export function hardResourceNames(q: ResourceQuota): string[] {
  return Object.keys(q.spec?.hard ?? {}).sort();
}

/** spec.hard parsed. */
export function hardLimits(q: ResourceQuota): ResourceList {
  return parseResourceList(q.spec?.hard as Record<string, string> | undefined);
}

/** spec.scopes (as Exists requirements) followed by spec.scopeSelector.matchExpressions. */
export function quotaScopes(q: ResourceQuota): ScopedResourceSelectorRequirement[] {
  return [...(q.spec?.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' })), ...(q.spec?.scopeSelector?.matchExpressions ?? [])];
}

/** Whether every scope of the quota matches the object (generic.Matches without the resource check). */
export function matchesScopes(q: ResourceQuota, ev: QuotaEvaluator, obj: KubeObject): boolean {
  return quotaScopes(q).every((s) => ev.matchesScope(s, obj));
}

/** Whether `obj` is charged against `q`: the quota limits something the evaluator tracks, and its scopes match. */
export function quotaMatches(q: ResourceQuota, ev: QuotaEvaluator, obj: KubeObject): boolean {
  if (!ev.matchingResources(hardResourceNames(q)).length) return false;
  return matchesScopes(q, ev, obj);
}

/** Lists a namespace's objects of one resource; undefined when the resource is not served. */
export type NamespaceObjects = (group: string, resource: string) => Promise<readonly KubeObject[] | undefined> | readonly KubeObject[] | undefined;

/**
 * The usage of the resources in `q.spec.hard` that can be measured from the
 * given objects of its namespace (quota.CalculateUsage): zero for a tracked
 * resource with no objects; names no evaluator tracks, and count/ names of
 * resources not served, are absent (the controller keeps their last
 * observed value, as upstream).
 */
export async function calculateQuotaUsage(q: ResourceQuota, objects: NamespaceObjects, nowMs: number): Promise<ResourceList> {
  const names = hardResourceNames(q);
  let used: ResourceList = new Map();
  for (const gr of groupResourcesForQuotaNames(names)) {
    const ev = quotaEvaluatorFor(gr.group, gr.resource);
    const matched = ev.matchingResources(names);
    if (!matched.length) continue;
    const items = await objects(gr.group, gr.resource);
    if (items === undefined) continue;
    for (const n of matched) if (!used.has(n)) used.set(n, newQuantity(0));
    for (const obj of items) {
      if (!matchesScopes(q, ev, obj)) continue;
      used = addLists(used, mask(ev.usage(obj, nowMs), matched));
    }
  }
  return mask(used, names);
}
