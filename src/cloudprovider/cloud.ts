/**
 * The cloud-provider interface, after k8s.io/cloud-provider's cloud.go: what
 * the cloud controllers (service-lb, node-route, cloud-node,
 * cloud-node-lifecycle) need from a cloud. A provider implements the parts it
 * supports; each accessor returns undefined for a part it does not (Go's
 * `(impl, false)`).
 *
 * Objects passed in are shared cache state: treat them as read-only.
 */
import type { Node, NodeAddress, Service } from 'kubernetes-types/core/v1.js';

/** A LoadBalancerStatus (`status.loadBalancer` of a Service). */
export interface LoadBalancerStatus {
  ingress?: { ip?: string; hostname?: string; ipMode?: string; ports?: { port: number; protocol: string; error?: string }[] }[];
}

export interface CloudProvider {
  /** The provider's name (`local`, `fake`, ...), as given to `--cloud-provider`. */
  readonly providerName: string;
  loadBalancer(): LoadBalancer | undefined;
  instancesV2(): InstancesV2 | undefined;
  zones(): Zones | undefined;
  routes(): Routes | undefined;
}

/**
 * Load balancers for Services of type LoadBalancer. `clusterName` is
 * `--cluster-name`; `nodes` are the hosts the balancer should send traffic to.
 */
export interface LoadBalancer {
  /** The status of the balancer of `service`, and whether it exists. */
  getLoadBalancer(clusterName: string, service: Service): Promise<{ status?: LoadBalancerStatus; exists: boolean }>;
  /** The balancer's name: `a` + the service UID without dashes, cut to 32 characters (cloudprovider.DefaultLoadBalancerName). */
  getLoadBalancerName(clusterName: string, service: Service): string;
  /** Creates or updates the balancer; returns its status. Must not change `service`. */
  ensureLoadBalancer(clusterName: string, service: Service, nodes: readonly Node[]): Promise<LoadBalancerStatus>;
  /** Points the balancer at `nodes`. */
  updateLoadBalancer(clusterName: string, service: Service, nodes: readonly Node[]): Promise<void>;
  /** Deletes the balancer if it exists; no error when it does not. */
  ensureLoadBalancerDeleted(clusterName: string, service: Service): Promise<void>;
}

/** What the cloud knows about a node's instance (cloud.go's InstanceMetadata). */
export interface InstanceMetadata {
  /** `<provider>://<id>`; becomes node.spec.providerID. */
  providerID: string;
  /** Becomes the `node.kubernetes.io/instance-type` label. */
  instanceType: string;
  nodeAddresses: NodeAddress[];
  /** Becomes `topology.kubernetes.io/zone`. */
  zone: string;
  /** Becomes `topology.kubernetes.io/region`. */
  region: string;
}

/** Instances by node (cloud.go's InstancesV2). */
export interface InstancesV2 {
  /** False once the node's instance is gone (then cloud-node-lifecycle deletes the Node). */
  instanceExists(node: Node): Promise<boolean>;
  /** True while the node's instance is shut down (then it gets the shutdown taint). */
  instanceShutdown(node: Node): Promise<boolean>;
  instanceMetadata(node: Node): Promise<InstanceMetadata>;
}

export interface Zone {
  failureDomain: string;
  region: string;
}

/** Zones (cloud.go's Zones), by provider ID or node name. */
export interface Zones {
  getZoneByProviderID(providerID: string): Promise<Zone>;
  getZoneByNodeName(nodeName: string): Promise<Zone>;
}

/** A route that sends a node's pod CIDR to it (cloud.go's Route). */
export interface Route {
  /** Unique among the cluster's routes; providers may ignore it on create. */
  name: string;
  targetNode: string;
  destinationCIDR: string;
  /** Set by a provider when the route can not work (its target is gone). */
  blackhole?: boolean;
}

/** Routes of the cluster network (cloud.go's Routes). */
export interface Routes {
  listRoutes(clusterName: string): Promise<Route[]>;
  /** `nameHint` is a unique id (upstream passes the node's UID). */
  createRoute(clusterName: string, nameHint: string, route: Route): Promise<void>;
  deleteRoute(clusterName: string, route: Route): Promise<void>;
}

/** Raised by InstanceMetadata and friends for an instance the cloud does not know (cloudprovider.InstanceNotFound). */
export class InstanceNotFoundError extends Error {
  constructor(readonly nodeName: string) {
    super('instance not found');
    this.name = 'InstanceNotFoundError';
  }
}

/** cloudprovider.DefaultLoadBalancerName: `a` + the service UID without dashes, at most 32 characters. */
export function defaultLoadBalancerName(service: Service): string {
  return ('a' + (service.metadata?.uid ?? '').replace(/-/g, '')).slice(0, 32);
}
