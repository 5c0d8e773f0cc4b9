/**
 * A scriptable cloud for the cloud controllers' unit tests (after
 * k8s.io/cloud-provider/fake): records every call, keeps instances, balancers
 * and routes in maps, and fails a method on demand.
 */
import type { Node, Service } from 'kubernetes-types/core/v1.js';
import { defaultLoadBalancerName, InstanceNotFoundError, type CloudProvider, type InstanceMetadata, type InstancesV2, type LoadBalancer, type LoadBalancerStatus, type Route, type Routes, type Zone, type Zones } from './cloud.js';
import { deepCopy } from '../util/json/deep-copy.js';

export interface FakeCloud extends CloudProvider {
  /** `method name-or-key`, oldest first. */
  readonly calls: string[];
  /** Instances by node name; a node missing here does not exist. */
  readonly instances: Map<string, InstanceMetadata & { shutdown?: boolean }>;
  /** Balancers by name: status and hosts. */
  readonly balancers: Map<string, { status: LoadBalancerStatus; hosts: string[] }>;
  readonly routeTable: Route[];
  /** Method name -> error thrown by the next calls of it. */
  readonly errors: Map<string, Error>;
  /** Turn parts off (the accessor then returns undefined). */
  disabled: Set<'loadBalancer' | 'instancesV2' | 'zones' | 'routes'>;
  /** The status ensureLoadBalancer returns for a balancer it creates. */
  nextIngressIP: (service: Service) => string;
}

export function newFakeCloud(): FakeCloud {
  const calls: string[] = [];
  const instances = new Map<string, InstanceMetadata & { shutdown?: boolean }>();
  const balancers = new Map<string, { status: LoadBalancerStatus; hosts: string[] }>();
  const routeTable: Route[] = [];
  const errors = new Map<string, Error>();
  let n = 0;
  const check = (method: string, what: string) => {
    calls.push(`${method} ${what}`);
    const err = errors.get(method);
    if (err) throw err;
  };
  const lb: LoadBalancer = {
    getLoadBalancerName: (_c, svc) => defaultLoadBalancerName(svc),
    async getLoadBalancer(_c, svc) {
      check('getLoadBalancer', svc.metadata?.name ?? '');
      const b = balancers.get(defaultLoadBalancerName(svc));
      return b ? { status: b.status, exists: true } : { exists: false };
    },
    async ensureLoadBalancer(_c, svc, nodes) {
      check('ensureLoadBalancer', svc.metadata?.name ?? '');
      const name = defaultLoadBalancerName(svc);
      const b = balancers.get(name) ?? { status: { ingress: [{ ip: cloud.nextIngressIP(svc) }] }, hosts: [] };
      b.hosts = nodes.map((x) => x.metadata?.name ?? '').sort();
      balancers.set(name, b);
      return b.status;
    },
    async updateLoadBalancer(_c, svc, nodes) {
      check('updateLoadBalancer', svc.metadata?.name ?? '');
      const b = balancers.get(defaultLoadBalancerName(svc));
      if (b) b.hosts = nodes.map((x) => x.metadata?.name ?? '').sort();
    },
    async ensureLoadBalancerDeleted(_c, svc) {
      check('ensureLoadBalancerDeleted', svc.metadata?.name ?? '');
      balancers.delete(defaultLoadBalancerName(svc));
    },
  };
  const inst: InstancesV2 = {
    async instanceExists(node: Node) {
      check('instanceExists', node.metadata?.name ?? '');
      return instances.has(node.metadata?.name ?? '');
    },
    async instanceShutdown(node: Node) {
      check('instanceShutdown', node.metadata?.name ?? '');
      const i = instances.get(node.metadata?.name ?? '');
      if (!i) throw new InstanceNotFoundError(node.metadata?.name ?? '');
      return i.shutdown === true;
    },
    async instanceMetadata(node: Node) {
      check('instanceMetadata', node.metadata?.name ?? '');
      const i = instances.get(node.metadata?.name ?? '');
      if (!i) throw new InstanceNotFoundError(node.metadata?.name ?? '');
      const { shutdown: _s, ...md } = i;
      return deepCopy(md);
    },
  };
  const zones: Zones = {
    async getZoneByNodeName(name): Promise<Zone> {
      check('getZoneByNodeName', name);
      const i = instances.get(name);
      if (!i) throw new InstanceNotFoundError(name);
      return { failureDomain: i.zone, region: i.region };
    },
    async getZoneByProviderID(id): Promise<Zone> {
      check('getZoneByProviderID', id);
      for (const i of instances.values()) if (i.providerID === id) return { failureDomain: i.zone, region: i.region };
      throw new InstanceNotFoundError(id);
    },
  };
  const routes: Routes = {
    async listRoutes() {
      check('listRoutes', '');
      return routeTable.map((r) => ({ ...r }));
    },
    async createRoute(clusterName, hint, route) {
      check('createRoute', route.targetNode);
      routeTable.push({ ...route, name: `${clusterName}-${hint}` });
    },
    async deleteRoute(_c, route) {
      check('deleteRoute', route.targetNode);
      const i = routeTable.findIndex((r) => r.name === route.name);
      if (i >= 0) routeTable.splice(i, 1);
    },
  };
  const cloud: FakeCloud = {
    providerName: 'fake',
    calls,
    instances,
    balancers,
    routeTable,
    errors,
    disabled: new Set(),
    nextIngressIP: () => `192.0.2.${++n}`,
    loadBalancer: () => (cloud.disabled.has('loadBalancer') ? undefined : lb),
    instancesV2: () => (cloud.disabled.has('instancesV2') ? undefined : inst),
    zones: () => (cloud.disabled.has('zones') ? undefined : zones),
    routes: () => (cloud.disabled.has('routes') ? undefined : routes),
  };
  return cloud;
}
