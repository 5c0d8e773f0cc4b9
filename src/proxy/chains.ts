/**
 * kube-proxy's iptables chain names (pkg/proxy/iptables/proxier.go): the
 * per-service chains are a prefix and the first 16 characters of the
 * standard base32 encoding of sha256(servicePortName + protocol
 * [+ endpoint]), so that a name fits iptables' 28-character limit.
 */
import { createHash } from 'node:crypto';

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 with padding (Go's base32.StdEncoding). */
export function base32Std(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/** portProtoHash: the 16-character hash of a service port and its (lower-case) protocol. */
export function portProtoHash(servicePortName: string, protocol: string): string {
  const sum = createHash('sha256').update(servicePortName + protocol).digest();
  return base32Std(sum).slice(0, 16);
}

export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS';
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
/** kubelet's anti-martian chain, which kube-proxy duplicates. */
export const KUBE_FIREWALL = 'KUBE-FIREWALL';

/** KUBE-SVC-<hash>: dispatch to the endpoints for Cluster traffic policy. */
export function servicePortPolicyClusterChain(servicePortName: string, protocol: string): string {
  return 'KUBE-SVC-' + portProtoHash(servicePortName, protocol);
}
/** KUBE-SVL-<hash>: dispatch to the node-local endpoints for Local traffic policy. */
export function servicePortPolicyLocalChain(servicePortName: string, protocol: string): string {
  return 'KUBE-SVL-' + portProtoHash(servicePortName, protocol);
}
/** KUBE-FW-<hash>: loadBalancerSourceRanges filtering. */
export function serviceFirewallChain(servicePortName: string, protocol: string): string {
  return 'KUBE-FW-' + portProtoHash(servicePortName, protocol);
}
/** KUBE-EXT-<hash>: external (NodePort, load balancer, external IP) traffic. */
export function serviceExternalChain(servicePortName: string, protocol: string): string {
  return 'KUBE-EXT-' + portProtoHash(servicePortName, protocol);
}
/** KUBE-SEP-<hash>: DNAT to one endpoint (`ip:port`). */
export function servicePortEndpointChain(servicePortName: string, protocol: string, endpoint: string): string {
  const sum = createHash('sha256').update(servicePortName + protocol + endpoint).digest();
  return 'KUBE-SEP-' + base32Std(sum).slice(0, 16);
}

/** The per-service chain prefixes (isServiceChainName). */
export function isServiceChainName(chain: string): boolean {
  return ['KUBE-SVC-', 'KUBE-SVL-', 'KUBE-SEP-', 'KUBE-FW-', 'KUBE-EXT-'].some((p) => chain.startsWith(p));
}
