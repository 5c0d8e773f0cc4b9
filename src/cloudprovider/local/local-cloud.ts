/**
 * The `local` cloud provider of `kcm up`: a cloud whose instances are the
 * simulated nodes.
 *
 * - Load balancers take an ingress IP from a pool (`--load-balancer-ip-range`,
 *   default 127.0.0.100-127.0.0.200: loopback, where nothing else listens)
 *   and give it back on delete. A Service's `spec.loadBalancerIP` is honoured
 *   when it is in the pool and free. The pool lives in memory; after a restart
 *   a balancer takes back the address its Service's status shows.
 * - Instances: every Node is an instance (`kcm://<node>`) until its
 *   `kcm.dev/instance` annotation says `deleted` (`kcm nodes delete-instance`)
 *   or `shutdown`. Zones spread over `zones` by the node's trailing number
 *   (or a hash of its name), region `region`, instance type `instanceType`;
 *   addresses are the node's own InternalIP/ExternalIP plus its Hostname.
 * - Routes: an in-memory route table.
 */
import type { Node, NodeAddress, Service } from 'kubernetes-types/core/v1.js';
import { parse as parseYaml } from 'yaml';
import { defaultLoadBalancerName, type CloudProvider, type InstanceMetadata, type InstancesV2, type LoadBalancer, type LoadBalancerStatus, type Route, type Routes, type Zone, type Zones } from '../cloud.js';
import type { CloudConfig } from '../registry.js';
import { newIpPool, type IpPool } from './ip-pool.js';

export const LOCAL_PROVIDER_NAME = 'local';
/** The annotation that tells the local cloud what became of a node's instance: `deleted` or `shutdown`. */
export const INSTANCE_ANNOTATION = 'kcm.dev/instance';
export const DEFAULT_LB_IP_RANGE = '127.0.0.100-127.0.0.200';
export const DEFAULT_ZONES: readonly string[] = ['kcm-zone-a', 'kcm-zone-b', 'kcm-zone-c'];
export const DEFAULT_REGION = 'kcm-local';
export const DEFAULT_INSTANCE_TYPE = 'kcm.standard';

export interface LocalCloudOptions {
  loadBalancerIPRange?: string;
  zones?: readonly string[];
  region?: string;
  instanceType?: string;
}

export interface LocalCloud extends CloudProvider {
  /** The load balancer IP pool (tests, status). */
  readonly pool: IpPool;
  loadBalancer(): LoadBalancer;
  instancesV2(): InstancesV2;
  zones(): Zones;
  routes(): Routes;
  /** The nodes a balancer sends traffic to (tests). */
  hostsOf(clusterName: string, service: Service): string[] | undefined;
}

interface Balancer {
  ip: string;
  hosts: string[];
}

/** FNV-32a of `s`. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

class Local implements LocalCloud, LoadBalancer, InstancesV2, Zones, Routes {
  readonly providerName = LOCAL_PROVIDER_NAME;
  readonly pool: IpPool;
  private readonly zoneNames: readonly string[];
  private readonly region: string;
  private readonly instanceType: string;
  private readonly balancers = new Map<string, Balancer>();
  private readonly routeTable = new Map<string, Route>();

  constructor(o: LocalCloudOptions) {
    this.pool = newIpPool(o.loadBalancerIPRange || DEFAULT_LB_IP_RANGE);
    this.zoneNames = o.zones && o.zones.length > 0 ? o.zones : DEFAULT_ZONES;
    this.region = o.region || DEFAULT_REGION;
    this.instanceType = o.instanceType || DEFAULT_INSTANCE_TYPE;
  }

  loadBalancer(): LoadBalancer {
    return this;
  }
  instancesV2(): InstancesV2 {
    return this;
  }
  zones(): Zones {
    return this;
  }
  routes(): Routes {
    return this;
  }

  // --- load balancers ---

  getLoadBalancerName(_clusterName: string, service: Service): string {
    return defaultLoadBalancerName(service);
  }

  private status(ip: string): LoadBalancerStatus {
    return { ingress: [{ ip, ipMode: 'VIP' }] };
  }

  /** After a restart: the address the Service's status shows, if it is ours to take back. */
  private adopt(name: string, service: Service): Balancer | undefined {
    for (const ing of service.status?.loadBalancer?.ingress ?? []) {
      if (ing.ip && this.pool.contains(ing.ip) && this.pool.reserve(ing.ip, name)) {
        const b = { ip: ing.ip, hosts: [] };
        this.balancers.set(name, b);
        return b;
      }
    }
    return undefined;
  }

  async getLoadBalancer(clusterName: string, service: Service): Promise<{ status?: LoadBalancerStatus; exists: boolean }> {
    const name = this.getLoadBalancerName(clusterName, service);
    const b = this.balancers.get(name) ?? this.adopt(name, service);
    return b ? { status: this.status(b.ip), exists: true } : { exists: false };
  }

  async ensureLoadBalancer(clusterName: string, service: Service, nodes: readonly Node[]): Promise<LoadBalancerStatus> {
    const name = this.getLoadBalancerName(clusterName, service);
    const hosts = nodes.map((n) => n.metadata?.name ?? '').sort();
    const wanted = service.spec?.loadBalancerIP;
    let b = this.balancers.get(name);
    if (b && wanted && b.ip !== wanted) {
      this.pool.release(name);
      this.balancers.delete(name);
      b = undefined;
    }
    if (!b && !wanted) b = this.adopt(name, service);
    if (!b) {
      let ip: string | undefined;
      if (wanted) {
        if (!this.pool.contains(wanted)) throw new Error(`requested load balancer IP ${wanted} is not in the range ${this.pool.range}`);
        if (!this.pool.reserve(wanted, name)) throw new Error(`requested load balancer IP ${wanted} is in use by another service`);
        ip = wanted;
      } else {
        ip = this.pool.allocate(name);
        if (!ip) throw new Error(`no free IP in the load balancer range ${this.pool.range}`);
      }
      b = { ip, hosts };
      this.balancers.set(name, b);
    }
    b.hosts = hosts;
    return this.status(b.ip);
  }

  async updateLoadBalancer(clusterName: string, service: Service, nodes: readonly Node[]): Promise<void> {
    const b = this.balancers.get(this.getLoadBalancerName(clusterName, service));
    if (!b) throw new Error(`load balancer ${this.getLoadBalancerName(clusterName, service)} does not exist`);
    b.hosts = nodes.map((n) => n.metadata?.name ?? '').sort();
  }

  async ensureLoadBalancerDeleted(clusterName: string, service: Service): Promise<void> {
    const name = this.getLoadBalancerName(clusterName, service);
    this.balancers.delete(name);
    this.pool.release(name);
  }

  /** The nodes a balancer sends traffic to (tests). */
  hostsOf(clusterName: string, service: Service): string[] | undefined {
    return this.balancers.get(this.getLoadBalancerName(clusterName, service))?.hosts;
  }

  // --- instances ---

  private zoneOf(nodeName: string): string {
    const m = /(\d+)$/.exec(nodeName);
    const i = m ? Number(m[1]) : fnv32a(nodeName);
    return this.zoneNames[i % this.zoneNames.length]!;
  }

  async instanceExists(node: Node): Promise<boolean> {
    return node.metadata?.annotations?.[INSTANCE_ANNOTATION] !== 'deleted';
  }

  async instanceShutdown(node: Node): Promise<boolean> {
    return node.metadata?.annotations?.[INSTANCE_ANNOTATION] === 'shutdown';
  }

  async instanceMetadata(node: Node): Promise<InstanceMetadata> {
    const name = node.metadata?.name ?? '';
    const addresses: NodeAddress[] = [];
    const provided = node.metadata?.annotations?.['alpha.kubernetes.io/provided-node-ip'];
    for (const a of node.status?.addresses ?? []) if (a.type === 'InternalIP' || a.type === 'ExternalIP') addresses.push({ type: a.type, address: a.address });
    if (provided && !addresses.some((a) => a.address === provided)) addresses.unshift({ type: 'InternalIP', address: provided });
    addresses.push({ type: 'Hostname', address: name });
    return { providerID: `kcm://${name}`, instanceType: this.instanceType, nodeAddresses: addresses, zone: this.zoneOf(name), region: this.region };
  }

  // --- zones ---

  async getZoneByProviderID(providerID: string): Promise<Zone> {
    return this.getZoneByNodeName(providerID.replace(/^kcm:\/\//, ''));
  }

  async getZoneByNodeName(nodeName: string): Promise<Zone> {
    return { failureDomain: this.zoneOf(nodeName), region: this.region };
  }

  // --- routes ---

  async listRoutes(_clusterName: string): Promise<Route[]> {
    return [...this.routeTable.values()].map((r) => ({ ...r }));
  }

  async createRoute(clusterName: string, nameHint: string, route: Route): Promise<void> {
    const name = `${clusterName}-${nameHint}`;
    this.routeTable.set(name, { ...route, name });
  }

  async deleteRoute(_clusterName: string, route: Route): Promise<void> {
    this.routeTable.delete(route.name);
  }
}

function stringList(v: unknown): string[] | undefined {
  if (Array.isArray(v)) return v.map(String).filter((s) => s !== '');
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return undefined;
}

/**
 * Options from a `--cloud-config` file (YAML or JSON: loadBalancerIPRange,
 * zones (list or comma-separated), region, instanceType) with `options`
 * (kcm up's flags, same names) over it. Throws an Error with a one-line message.
 */
export function localCloudOptions(config: CloudConfig): LocalCloudOptions {
  let file: Record<string, unknown> = {};
  if (config.configText && config.configText.trim() !== '') {
    const doc: unknown = parseYaml(config.configText);
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('the local cloud config must be a mapping');
    file = doc as Record<string, unknown>;
  }
  const o = { ...file, ...(config.options ?? {}) };
  const out: LocalCloudOptions = {};
  if (typeof o['loadBalancerIPRange'] === 'string' && o['loadBalancerIPRange'] !== '') out.loadBalancerIPRange = o['loadBalancerIPRange'];
  const zones = stringList(o['zones']);
  if (zones && zones.length > 0) out.zones = zones;
  if (typeof o['region'] === 'string' && o['region'] !== '') out.region = o['region'];
  if (typeof o['instanceType'] === 'string' && o['instanceType'] !== '') out.instanceType = o['instanceType'];
  return out;
}

export function newLocalCloud(o: LocalCloudOptions = {}): LocalCloud {
  return new Local(o);
}
