/** Types shared by the proxy's modes. */

/** One `-A CHAIN ...` rule: its chain and the arguments after `-A CHAIN`. */
export interface Rule {
  chain: string;
  args: string;
}

/** One iptables table: its built-in chains (policy ACCEPT), our chains, and the rules in restore order. */
export interface Table {
  name: 'filter' | 'nat';
  builtin: string[];
  chains: string[];
  rules: Rule[];
}

/** kube-proxy's LocalTrafficDetector: the match for traffic from this cluster's pods. */
export interface LocalDetector {
  /** e.g. `-s 10.244.0.0/16` */
  ifLocal: string;
  /** e.g. `! -s 10.244.0.0/16` */
  ifNotLocal: string;
}

/** What a sync needs to know about this node and kube-proxy's configuration. */
export interface ProxyContext {
  nodeName: string;
  /** The node's primary IPv4 address (for loadBalancerSourceRanges' allowFromNode), or ''. */
  nodeIP: string;
  /** All the node's IPv4 addresses (IPVS NodePort virtual servers). */
  nodeIPs: string[];
  nodeLabels: Record<string, string>;
  masqueradeAll: boolean;
  /** `0x4000` (masquerade bit 14). */
  masqueradeMark: string;
  localDetector: LocalDetector | null;
  /** --iptables-localhost-nodeports (kube-proxy's default true). */
  localhostNodePorts: boolean;
  /** More than 1000 endpoint chains: comments on endpoint rules are dropped. */
  largeClusterMode: boolean;
  /** IPVS scheduler (rr). */
  ipvsScheduler: string;
}

/** A tracked change of one Service: its entries (by service port name) before and after. */
export interface TrackedChange<V> {
  previous: Map<string, V>;
  current: Map<string, V>;
}

/**
 * Applies a change tracker's checked-out changes to a map by service port
 * name (ServicePortMap.Update, EndpointsMap.Update); returns the `ns/name`
 * of each changed Service.
 */
export function applyTrackedChanges<V>(map: Map<string, V>, changes: Map<string, TrackedChange<V>>): Set<string> {
  const updated = new Set<string>();
  for (const [svc, change] of changes) {
    updated.add(svc);
    for (const k of change.previous.keys()) map.delete(k);
    for (const [k, v] of change.current) map.set(k, v);
  }
  return updated;
}
