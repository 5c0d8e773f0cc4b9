/**
 * Services as kube-proxy sees them (pkg/proxy/service.go): one ServicePort
 * per port of a proxied Service, and the ServiceChangeTracker that
 * accumulates changes between syncs so that only the changed Services are
 * recomputed.
 */
import type { Service } from 'kubernetes-types/core/v1.js';
import { isIPv4, isIPv4CIDR } from './net.js';
import { applyTrackedChanges } from './types.js';

/** `ns/name:port` (or `ns/name` for an unnamed port), as ServicePortName.String(). */
export function servicePortNameString(namespace: string, name: string, port: string): string {
  return `${namespace}/${name}${port ? ':' + port : ''}`;
}

export interface ServicePort {
  /** ServicePortName.String(): `ns/name:port`. */
  name: string;
  /** `ns/name` of the Service. */
  service: string;
  portName: string;
  /** TCP, UDP or SCTP. */
  protocol: string;
  clusterIP: string;
  port: number;
  nodePort: number;
  sessionAffinityClientIP: boolean;
  stickyMaxAgeSeconds: number;
  externalIPs: string[];
  loadBalancerSourceRanges: string[];
  loadBalancerVIPs: string[];
  healthCheckNodePort: number;
  externalPolicyLocal: boolean;
  internalPolicyLocal: boolean;
}

/** Reachable from outside the cluster: a NodePort, a load-balancer IP or an external IP. */
export function externallyAccessible(sp: ServicePort): boolean {
  return sp.nodePort !== 0 || sp.loadBalancerVIPs.length > 0 || sp.externalIPs.length > 0;
}
/** Some traffic uses the Cluster-policy endpoints. */
export function usesClusterEndpoints(sp: ServicePort): boolean {
  return !sp.internalPolicyLocal || (externallyAccessible(sp) && !sp.externalPolicyLocal);
}
/** Some traffic uses the Local-policy endpoints. */
export function usesLocalEndpoints(sp: ServicePort): boolean {
  return sp.internalPolicyLocal || (sp.externalPolicyLocal && externallyAccessible(sp));
}

/** proxyutil.ShouldSkipService: headless and ExternalName Services are not proxied. */
export function shouldSkipService(svc: Service): boolean {
  const ip = svc.spec?.clusterIP ?? '';
  return ip === '' || ip === 'None' || svc.spec?.type === 'ExternalName';
}

const DEFAULT_CLIENT_IP_TIMEOUT = 10800;

/** The Service's ports as ServicePorts keyed by name (IPv4 only). */
export function serviceToServicePorts(svc: Service | undefined): Map<string, ServicePort> {
  const out = new Map<string, ServicePort>();
  if (!svc || shouldSkipService(svc)) return out;
  const spec = svc.spec ?? {};
  const ns = svc.metadata?.namespace ?? '';
  const name = svc.metadata?.name ?? '';
  const clusterIP = [spec.clusterIP ?? '', ...(spec.clusterIPs ?? [])].find((ip) => isIPv4(ip));
  if (!clusterIP) return out;
  const type = spec.type ?? 'ClusterIP';
  const affinity = spec.sessionAffinity === 'ClientIP';
  const externallyAccessibleSvc = type === 'LoadBalancer' || type === 'NodePort' || (spec.externalIPs?.length ?? 0) > 0;
  const externalPolicyLocal = externallyAccessibleSvc && spec.externalTrafficPolicy === 'Local';
  const vips =
    type === 'LoadBalancer'
      ? (svc.status?.loadBalancer?.ingress ?? [])
          .filter((ing) => ing.ip && isIPv4(ing.ip) && (ing as { ipMode?: string }).ipMode !== 'Proxy')
          .map((ing) => ing.ip!)
      : [];
  for (const p of spec.ports ?? []) {
    const portName = p.name ?? '';
    const key = servicePortNameString(ns, name, portName);
    out.set(key, {
      name: key,
      service: `${ns}/${name}`,
      portName,
      protocol: p.protocol ?? 'TCP',
      clusterIP,
      port: p.port,
      nodePort: p.nodePort ?? 0,
      sessionAffinityClientIP: affinity,
      stickyMaxAgeSeconds: affinity ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_CLIENT_IP_TIMEOUT) : 0,
      externalIPs: (spec.externalIPs ?? []).filter((ip) => isIPv4(ip)),
      loadBalancerSourceRanges: (spec.loadBalancerSourceRanges ?? []).map((c) => c.trim()).filter((c) => isIPv4CIDR(c)),
      loadBalancerVIPs: vips,
      healthCheckNodePort: type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local' ? (spec.healthCheckNodePort ?? 0) : 0,
      externalPolicyLocal,
      internalPolicyLocal: spec.internalTrafficPolicy === 'Local',
    });
  }
  return out;
}

function samePorts(a: Map<string, ServicePort>, b: Map<string, ServicePort>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || JSON.stringify(v) !== JSON.stringify(w)) return false;
  }
  return true;
}

interface ServiceChange {
  previous: Map<string, ServicePort>;
  current: Map<string, ServicePort>;
}

/**
 * Accumulates Service changes between syncs: for each Service, its ports
 * before the first change and after the last one. A change that undoes
 * itself disappears.
 */
export class ServiceChangeTracker {
  private items = new Map<string, ServiceChange>();

  /** Records a change (previous undefined: added; current undefined: deleted). True when changes are pending. */
  update(previous: Service | undefined, current: Service | undefined): boolean {
    const svc = current ?? previous;
    if (!svc) return false;
    const key = `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}`;
    let change = this.items.get(key);
    if (!change) {
      change = { previous: serviceToServicePorts(previous), current: new Map() };
      this.items.set(key, change);
    }
    change.current = serviceToServicePorts(current);
    if (samePorts(change.previous, change.current)) this.items.delete(key);
    return this.items.size > 0;
  }

  pending(): number {
    return this.items.size;
  }

  /** Hands the accumulated changes over and forgets them. */
  checkout(): Map<string, ServiceChange> {
    const out = this.items;
    this.items = new Map();
    return out;
  }
}

/** ServicePortMap: every proxied service port by name. */
export class ServicePortMap extends Map<string, ServicePort> {
  /** Applies the tracker's changes; returns the `ns/name` of each changed Service. */
  applyChanges(tracker: ServiceChangeTracker): Set<string> {
    return applyTrackedChanges(this, tracker.checkout());
  }
}
