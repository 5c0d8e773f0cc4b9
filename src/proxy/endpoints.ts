/**
 * Endpoints as kube-proxy sees them (pkg/proxy/endpoints.go,
 * endpointslicecache.go): EndpointSlices are cached per Service, merged per
 * service port (deduplicated by address, sorted by `ip:port`), and the
 * EndpointsChangeTracker hands over only the Services whose endpoints changed.
 */
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { isIPv4, joinHostPort } from './net.js';
import { servicePortNameString } from './service.js';
import { applyTrackedChanges } from './types.js';

export interface Endpoint {
  ip: string;
  port: number;
  /** `ip:port` (BaseEndpointInfo.String()). */
  str: string;
  /** On this node (the slice endpoint's nodeName is the proxy's node). */
  isLocal: boolean;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints: string[];
  nodeHints: string[];
}

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface SliceEndpoint {
  address: string;
  nodeName: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints: string[];
  nodeHints: string[];
}

interface SliceInfo {
  ports: Array<{ name: string; port: number; protocol: string }>;
  endpoints: SliceEndpoint[];
}

function sliceInfo(slice: EndpointSlice): SliceInfo {
  const ports = (slice.ports ?? [])
    .filter((p) => p.port !== undefined && p.port !== 0)
    .map((p) => ({ name: p.name ?? '', port: p.port!, protocol: p.protocol ?? 'TCP' }))
    .sort((a, b) => a.port - b.port);
  const endpoints: SliceEndpoint[] = [];
  for (const ep of slice.endpoints ?? []) {
    const address = ep.addresses?.[0];
    if (!address) continue;
    const c = ep.conditions ?? {};
    const ready = c.ready === undefined || c.ready === null || c.ready === true;
    endpoints.push({
      address,
      nodeName: ep.nodeName ?? '',
      ready,
      serving: c.serving === undefined || c.serving === null ? ready : c.serving === true,
      terminating: c.terminating === true,
      zoneHints: (ep.hints?.forZones ?? []).map((z) => z.name),
      nodeHints: ((ep.hints as { forNodes?: Array<{ name: string }> } | undefined)?.forNodes ?? []).map((n) => n.name),
    });
  }
  endpoints.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { ports, endpoints };
}

/** The endpoints of each service port of one Service, from its slices. */
function endpointsFromSlices(service: string, slices: Map<string, SliceInfo>, nodeName: string): Map<string, Endpoint[]> {
  const [ns, name] = splitKey(service);
  const byPort = new Map<string, Map<string, Endpoint>>();
  for (const si of slices.values()) {
    for (const p of si.ports) {
      const key = servicePortNameString(ns, name, p.name);
      let m = byPort.get(key);
      if (!m) byPort.set(key, (m = new Map()));
      for (const ep of si.endpoints) {
        if (!isIPv4(ep.address)) continue;
        const isLocal = nodeName !== '' && ep.nodeName === nodeName;
        const str = joinHostPort(ep.address, p.port);
        if (!m.has(str) || isLocal) {
          m.set(str, { ip: ep.address, port: p.port, str, isLocal, ready: ep.ready, serving: ep.serving, terminating: ep.terminating, zoneHints: ep.zoneHints, nodeHints: ep.nodeHints });
        }
      }
    }
  }
  const out = new Map<string, Endpoint[]>();
  for (const [k, m] of byPort) {
    if (m.size === 0) continue;
    out.set(k, [...m.values()].sort((a, b) => (a.str < b.str ? -1 : a.str > b.str ? 1 : 0)));
  }
  return out;
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}

interface EndpointsChange {
  previous: Map<string, Endpoint[]>;
  current: Map<string, Endpoint[]>;
}

/**
 * The EndpointSlice cache with its pending changes: `applied` is what the
 * last sync used, `pending` what arrived since, per Service and slice name.
 */
export class EndpointsChangeTracker {
  private applied = new Map<string, Map<string, SliceInfo>>();
  private pendingSlices = new Map<string, Map<string, SliceInfo | null>>();

  constructor(private readonly nodeName: string) {}

  /** Records a slice added, updated or (remove) deleted. True when changes are pending. */
  endpointSliceUpdate(slice: EndpointSlice, remove: boolean): boolean {
    const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    const ns = slice.metadata?.namespace;
    const sliceName = slice.metadata?.name;
    if (!service || !ns || !sliceName) return this.pendingSlices.size > 0;
    if (slice.addressType !== undefined && slice.addressType !== 'IPv4') return this.pendingSlices.size > 0;
    const key = `${ns}/${service}`;
    const info = remove ? null : sliceInfo(slice);
    let pend = this.pendingSlices.get(key);
    const appliedInfo = this.applied.get(key)?.get(sliceName) ?? null;
    const before = pend?.has(sliceName) ? pend.get(sliceName)! : appliedInfo;
    if (JSON.stringify(before) !== JSON.stringify(info)) {
      if (!pend) this.pendingSlices.set(key, (pend = new Map()));
      if (JSON.stringify(appliedInfo) === JSON.stringify(info)) {
        pend.delete(sliceName);
        if (pend.size === 0) this.pendingSlices.delete(key);
      } else pend.set(sliceName, info);
    }
    return this.pendingSlices.size > 0;
  }

  pending(): number {
    return this.pendingSlices.size;
  }

  /** Applies the pending slices; per changed Service, its endpoints before and after. */
  checkout(): Map<string, EndpointsChange> {
    const out = new Map<string, EndpointsChange>();
    for (const [key, pend] of this.pendingSlices) {
      const applied = this.applied.get(key) ?? new Map<string, SliceInfo>();
      const previous = endpointsFromSlices(key, applied, this.nodeName);
      for (const [name, info] of pend) {
        if (info === null) applied.delete(name);
        else applied.set(name, info);
      }
      if (applied.size === 0) this.applied.delete(key);
      else this.applied.set(key, applied);
      out.set(key, { previous, current: endpointsFromSlices(key, applied, this.nodeName) });
    }
    this.pendingSlices = new Map();
    return out;
  }
}

/** EndpointsMap: the endpoints of each service port. */
export class EndpointsMap extends Map<string, Endpoint[]> {
  /** Applies the tracker's changes; returns the `ns/name` of each changed Service. */
  applyChanges(tracker: EndpointsChangeTracker): Set<string> {
    return applyTrackedChanges(this, tracker.checkout());
  }
}

/**
 * CategorizeEndpoints (pkg/proxy/topology.go): the endpoints for Cluster
 * and for Local traffic policy, all endpoints reachable from this node, and
 * whether the Service has usable endpoints anywhere. Ready endpoints are
 * used; when there are none, serving-and-terminating ones (independently
 * for Cluster and Local).
 */
export function categorizeEndpoints(
  endpoints: readonly Endpoint[],
  sp: { internalPolicyLocal: boolean; externalPolicyLocal: boolean; nodePort: number; loadBalancerVIPs: string[]; externalIPs: string[] },
  nodeName: string,
  nodeLabels: Record<string, string>,
): { clusterEndpoints: Endpoint[]; localEndpoints: Endpoint[]; allReachable: Endpoint[]; hasAnyEndpoints: boolean } {
  const extAccessible = sp.nodePort !== 0 || sp.loadBalancerVIPs.length > 0 || sp.externalIPs.length > 0;
  const usesCluster = !sp.internalPolicyLocal || (extAccessible && !sp.externalPolicyLocal);
  const usesLocal = sp.internalPolicyLocal || (sp.externalPolicyLocal && extAccessible);
  let clusterEndpoints: Endpoint[] = [];
  let localEndpoints: Endpoint[] = [];
  let hasAnyEndpoints = false;
  let topologyMode = '';
  let useServingTerminating = false;
  const zone = nodeLabels['topology.kubernetes.io/zone'] ?? '';

  if (usesCluster) {
    topologyMode = topologyModeFromHints(endpoints, nodeName, zone);
    clusterEndpoints = endpoints.filter((ep) => ep.ready && availableForTopology(ep, topologyMode, nodeName, zone));
    if (clusterEndpoints.length === 0) clusterEndpoints = endpoints.filter((ep) => ep.serving && ep.terminating);
    if (clusterEndpoints.length > 0) hasAnyEndpoints = true;
  }
  if (!usesLocal) return { clusterEndpoints, localEndpoints, allReachable: clusterEndpoints, hasAnyEndpoints };

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of endpoints) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (ep.serving && ep.terminating) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }
  if (hasLocalReady) localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.ready);
  else if (hasLocalServingTerminating) {
    useServingTerminating = true;
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.serving && ep.terminating);
  }
  if (!usesCluster) return { clusterEndpoints, localEndpoints, allReachable: localEndpoints, hasAnyEndpoints };
  if (topologyMode === '' && !useServingTerminating) return { clusterEndpoints, localEndpoints, allReachable: clusterEndpoints, hasAnyEndpoints };
  const merged = new Map<string, Endpoint>();
  for (const ep of clusterEndpoints) merged.set(ep.str, ep);
  for (const ep of localEndpoints) merged.set(ep.str, ep);
  const allReachable = [...merged.values()].sort((a, b) => (a.str < b.str ? -1 : a.str > b.str ? 1 : 0));
  return { clusterEndpoints, localEndpoints, allReachable, hasAnyEndpoints };
}

function topologyModeFromHints(endpoints: readonly Endpoint[], nodeName: string, zone: string): string {
  let hasEndpointForNode = false;
  let allNodeHints = true;
  let hasEndpointForZone = false;
  let allZoneHints = true;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    if (ep.nodeHints.length === 0) allNodeHints = false;
    else if (ep.nodeHints.includes(nodeName)) hasEndpointForNode = true;
    if (ep.zoneHints.length === 0) allZoneHints = false;
    else if (ep.zoneHints.includes(zone)) hasEndpointForZone = true;
  }
  if (allNodeHints && hasEndpointForNode) return 'PreferSameNode';
  if (allZoneHints && hasEndpointForZone) return 'PreferSameZone';
  return '';
}

function availableForTopology(ep: Endpoint, mode: string, nodeName: string, zone: string): boolean {
  if (mode === '') return true;
  if (mode === 'PreferSameNode') return ep.nodeHints.includes(nodeName);
  if (mode === 'PreferSameZone') return ep.zoneHints.includes(zone);
  return false;
}
