/**
 * Endpoints subsets: repacking into the canonical N-to-M form
 * (pkg/api/v1/endpoints RepackSubsets), truncation at the 1000-address
 * capacity, and comparison ignoring the pods' resourceVersions.
 */
import type { EndpointAddress, EndpointPort, EndpointSubset } from 'kubernetes-types/core/v1.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** Addresses an Endpoints object may hold before it is truncated. */
export const MAX_CAPACITY = 1000;
/** Annotation set to `truncated` on an Endpoints object over capacity. */
export const OVER_CAPACITY_ANNOTATION = 'endpoints.kubernetes.io/over-capacity';

function addressKey(a: EndpointAddress): string {
  return `${a.ip}\u0000${a.targetRef?.uid ?? ''}`;
}

function portKey(p: EndpointPort): string {
  return JSON.stringify([p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? '']);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  return compareStrings(a.ip, b.ip) || compareStrings(a.targetRef?.uid ?? '', b.targetRef?.uid ?? '');
}

function comparePorts(a: EndpointPort, b: EndpointPort): number {
  return compareStrings(a.name ?? '', b.name ?? '') || a.port - b.port || compareStrings(a.protocol ?? '', b.protocol ?? '');
}

/**
 * Regroups subsets so that each subset holds every address offering exactly
 * the same set of ports. An address is ready for a port unless every
 * appearance of it for that port is not ready. Addresses, ports and subsets
 * come out in a deterministic order (upstream sorts by hash; the order itself
 * carries no meaning).
 */
export function repackSubsets(subsets: readonly EndpointSubset[]): EndpointSubset[] {
  const allAddrs = new Map<string, EndpointAddress>();
  // port key -> (address key -> ready)
  const byPort = new Map<string, { port: EndpointPort | undefined; addrs: Map<string, boolean> }>();
  const map = (addr: EndpointAddress, port: EndpointPort | undefined, ready: boolean) => {
    const ak = addressKey(addr);
    if (!allAddrs.has(ak)) allAddrs.set(ak, deepCopy(addr));
    const pk = port ? portKey(port) : '<none>';
    let entry = byPort.get(pk);
    if (!entry) byPort.set(pk, (entry = { port, addrs: new Map() }));
    entry.addrs.set(ak, (entry.addrs.get(ak) ?? false) || ready);
  };
  for (const s of subsets) {
    const ports: Array<EndpointPort | undefined> = s.ports?.length ? s.ports : [undefined];
    for (const p of ports) {
      for (const a of s.addresses ?? []) map(a, p, true);
      for (const a of s.notReadyAddresses ?? []) map(a, p, false);
    }
  }
  // address-set key -> ports offered by exactly that set
  const groups = new Map<string, { addrs: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const { port, addrs } of byPort.values()) {
    const key = [...addrs.entries()].map(([k, r]) => `${k}=${r}`).sort().join('|');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { addrs, ports: [] }));
    if (port && port.port > 0) g.ports.push(port);
  }
  const out: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, r] of g.addrs) (r ? ready : notReady).push(allAddrs.get(k)!);
    const subset: EndpointSubset = {};
    if (ready.length) subset.addresses = ready.sort(compareAddresses);
    if (notReady.length) subset.notReadyAddresses = notReady.sort(compareAddresses);
    if (g.ports.length) subset.ports = g.ports.sort(comparePorts);
    out.push(subset);
  }
  const first = (s: EndpointSubset) => (s.addresses ?? s.notReadyAddresses ?? [])[0];
  return out.sort((a, b) => {
    const fa = first(a);
    const fb = first(b);
    return (fa && fb ? compareAddresses(fa, fb) : 0) || compareStrings(JSON.stringify(a.ports ?? []), JSON.stringify(b.ports ?? []));
  });
}

function countAddresses(subsets: readonly EndpointSubset[] | undefined): { ready: number; notReady: number } {
  let ready = 0;
  let notReady = 0;
  for (const s of subsets ?? []) {
    ready += s.addresses?.length ?? 0;
    notReady += s.notReadyAddresses?.length ?? 0;
  }
  return { ready, notReady };
}

/** False when the over-capacity annotation does not match the number of addresses. */
export function capacityAnnotationSetCorrectly(annotations: Record<string, string> | undefined, subsets: readonly EndpointSubset[] | undefined): boolean {
  const { ready, notReady } = countAddresses(subsets);
  if (ready + notReady > MAX_CAPACITY) return false;
  return !(annotations && OVER_CAPACITY_ANNOTATION in annotations);
}

/**
 * Cuts `subsets` (in place) down to MAX_CAPACITY addresses, ready ones first,
 * each subset keeping its proportional share (rounded up, the last taking what
 * is left). Returns whether anything was cut.
 */
export function truncateSubsets(subsets: EndpointSubset[]): boolean {
  const { ready: totalReady, notReady: totalNotReady } = countAddresses(subsets);
  if (totalReady + totalNotReady <= MAX_CAPACITY) return false;
  const truncateReady = totalReady > MAX_CAPACITY;
  const max = truncateReady ? MAX_CAPACITY : MAX_CAPACITY - totalReady;
  const numTotal = truncateReady ? totalReady : totalNotReady;
  let canBeAdded = max;
  for (const s of subsets) {
    const inSubset = truncateReady ? s.addresses?.length ?? 0 : s.notReadyAddresses?.length ?? 0;
    const toBeAdded = Math.min(Math.ceil((inSubset / numTotal) * max), canBeAdded);
    if (truncateReady) {
      s.addresses = (s.addresses ?? []).slice(0, toBeAdded);
      s.notReadyAddresses = [];
      canBeAdded -= s.addresses.length;
    } else {
      s.notReadyAddresses = (s.notReadyAddresses ?? []).slice(0, toBeAdded);
      canBeAdded -= s.notReadyAddresses.length;
    }
  }
  return true;
}

/** Drops empty arrays and targetRef.resourceVersion so that equal content compares equal. */
function normalize(subsets: readonly EndpointSubset[] | undefined): unknown {
  const addr = (a: EndpointAddress) => {
    const { targetRef, ...rest } = a;
    if (!targetRef) return rest;
    const { resourceVersion: _rv, ...ref } = targetRef;
    return { ...rest, targetRef: ref };
  };
  return (subsets ?? []).map((s) => ({
    addresses: (s.addresses ?? []).map(addr),
    notReadyAddresses: (s.notReadyAddresses ?? []).map(addr),
    ports: s.ports ?? [],
  }));
}

/** Deep equality of subsets ignoring the pods' resourceVersions and empty-vs-missing lists. */
export function subsetsEqualIgnoreResourceVersion(a: readonly EndpointSubset[] | undefined, b: readonly EndpointSubset[] | undefined): boolean {
  return stableStringify(normalize(a)) === stableStringify(normalize(b));
}

/** JSON with object keys sorted, for order-insensitive comparison of plain data. */
export function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
