/**
 * Resource lists for quota arithmetic (apiserver/pkg/quota/v1 helpers):
 * maps from resource name (`pods`, `requests.cpu`, `count/deployments.apps`)
 * to quantities. API objects carry strings; these helpers work on parsed
 * Quantity values and convert at the edges.
 */
import { add, compare, isZero as quantityIsZero, quantityToString, sub, toQuantity, newQuantity, type Quantity, type QuantityLike } from '../quantity.js';

export type ResourceList = Map<string, Quantity>;

/** Parses an API ResourceList (`{ cpu: '100m' }`). Unparsable values are skipped by the caller's validation; here they throw. */
export function parseResourceList(rl: Readonly<Record<string, QuantityLike>> | undefined | null): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(rl ?? {})) out.set(k, toQuantity(v));
  return out;
}

/** The API form: `{ cpu: '1500m' }`, keys sorted. */
export function formatResourceList(rl: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...rl.keys()].sort()) out[k] = quantityToString(rl.get(k)!);
  return out;
}

/** a + b for every key of either. */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, out.has(k) ? add(out.get(k)!, v) : v);
  return out;
}

/** a - b for every key of either. */
export function subtractLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, sub(out.get(k) ?? newQuantity(0), v));
  return out;
}

/** Only the keys in `names`. */
export function mask(rl: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const n of names) {
    const v = rl.get(n);
    if (v !== undefined) out.set(n, v);
  }
  return out;
}

/** True when every value is zero (or the list is empty). */
export function isZeroList(rl: ResourceList): boolean {
  for (const v of rl.values()) if (!quantityIsZero(v)) return false;
  return true;
}

/** quota.LessThanOrEqual: whether a[k] <= b[k] for every k in both; the keys where not. */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { ok: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [k, v] of a) {
    const limit = b.get(k);
    if (limit !== undefined && compare(v, limit) > 0) exceeded.push(k);
  }
  return { ok: exceeded.length === 0, exceeded: exceeded.sort() };
}

/** `pods=1,requests.cpu=500m`: sorted `name=value` joined by commas, as upstream's prettyPrint. */
export function prettyPrint(rl: ResourceList): string {
  return [...rl.keys()]
    .sort()
    .map((k) => `${k}=${quantityToString(rl.get(k)!)}`)
    .join(',');
}
