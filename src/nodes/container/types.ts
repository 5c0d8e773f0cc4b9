import type { ConfigMap, Pod, Secret, Service } from 'kubernetes-types/core/v1.js';
import type { FileSystem } from '../shell/fs.js';

/** What kubelet needs to read from the API, provided by the caller (synchronously, from informer caches). */
export interface ObjectSource {
  configMap(namespace: string, name: string): ConfigMap | undefined;
  secret(namespace: string, name: string): Secret | undefined;
  /** Services of a namespace (for service links); also asked for "default" (the kubernetes service). */
  services(namespace: string): Service[];
  /**
   * A TokenRequest result (the token, as text or as its file's bytes) for a
   * projected serviceAccountToken source; undefined when it cannot be issued. `PodVolumes` caches it as
   * kubelet's token manager does (until 80% of its lifetime or 24h).
   */
  serviceAccountToken?(namespace: string, serviceAccount: string, audience: string | undefined, expirationSeconds: number, pod: Pod): string | Buffer | undefined;
}

/** What kubelet knows about its node and the pod's sandbox. */
export interface NodeFacts {
  nodeName: string;
  /** status.hostIP (the node's first address). */
  hostIP: string;
  /** status.podIP; '' while unknown. */
  podIP: string;
  /** status.podIPs; default [podIP] (or [] when podIP is ''). */
  podIPs?: string[];
  /** The node's allocatable (`cpu`, `memory`, `ephemeral-storage`): limits default to it for the downward API. */
  allocatable: Record<string, string>;
  /** kubelet's --cluster-domain; default `cluster.local`. */
  clusterDomain?: string;
  /** kubelet's --cluster-dns; default ['10.96.0.10']. */
  clusterDNS?: string[];
  /**
   * The node's own file system, shared by the pods on it: hostPath volumes
   * are its paths (created per the hostPath type). Without it a hostPath is
   * an empty directory of the pod.
   */
  hostFs?: FileSystem;
  /** The node's resolv.conf (kubelet's --resolv-conf), for dnsPolicy Default; default nameserver 8.8.8.8, no search, no options. */
  hostDNS?: { nameservers: string[]; searches: string[]; options: string[] };
}

export function podIPsOf(node: NodeFacts): string[] {
  if (node.podIPs && node.podIPs.length > 0) return node.podIPs;
  return node.podIP ? [node.podIP] : [];
}
