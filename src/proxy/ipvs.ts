/**
 * The IPVS proxier's state (pkg/proxy/ipvs/proxier.go): virtual servers
 * with their real servers (as `ipvsadm -S -n` prints them), the ipsets
 * (`ipset save`), and the iptables rules that match those sets.
 */
import { KUBE_FORWARD, KUBE_MARK_MASQ, KUBE_POSTROUTING, KUBE_PROXY_FIREWALL, KUBE_SERVICES } from './chains.js';
import { categorizeEndpoints, type Endpoint } from './endpoints.js';
import { builtinJumpRules } from './iptables.js';
import { cidrContains } from './net.js';
import type { ServicePort } from './service.js';
import type { ProxyContext, Rule, Table } from './types.js';

export const KUBE_NODE_PORT = 'KUBE-NODE-PORT';
export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER';
export const KUBE_SOURCE_RANGES_FIREWALL = 'KUBE-SOURCE-RANGES-FIREWALL';
export const KUBE_IPVS_FILTER = 'KUBE-IPVS-FILTER';
export const KUBE_IPVS_OUT_FILTER = 'KUBE-IPVS-OUT-FILTER';

type SetType = 'hash:ip,port,ip' | 'hash:ip,port' | 'hash:ip,port,net' | 'bitmap:port' | 'hash:ip';

/** kube-proxy's ipsets (ipsetInfo), in its order, with their comments. */
export const IPSETS: ReadonlyArray<{ name: string; type: SetType; comment: string }> = [
  { name: 'KUBE-LOOP-BACK', type: 'hash:ip,port,ip', comment: 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose' },
  { name: 'KUBE-CLUSTER-IP', type: 'hash:ip,port', comment: 'Kubernetes service cluster ip + port for masquerade purpose' },
  { name: 'KUBE-EXTERNAL-IP', type: 'hash:ip,port', comment: 'Kubernetes service external ip + port for masquerade and filter purpose' },
  { name: 'KUBE-EXTERNAL-IP-LOCAL', type: 'hash:ip,port', comment: 'Kubernetes service external ip + port with externalTrafficPolicy=local' },
  { name: 'KUBE-LOAD-BALANCER', type: 'hash:ip,port', comment: 'Kubernetes service lb portal' },
  { name: 'KUBE-LOAD-BALANCER-FW', type: 'hash:ip,port', comment: 'Kubernetes service load balancer ip + port for load balancer with sourceRange' },
  { name: 'KUBE-LOAD-BALANCER-LOCAL', type: 'hash:ip,port', comment: 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local' },
  { name: 'KUBE-LOAD-BALANCER-SOURCE-IP', type: 'hash:ip,port,ip', comment: 'Kubernetes service load balancer ip + port + source IP for packet filter purpose' },
  { name: 'KUBE-LOAD-BALANCER-SOURCE-CIDR', type: 'hash:ip,port,net', comment: 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose' },
  { name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port for masquerade purpose' },
  { name: 'KUBE-NODE-PORT-LOCAL-TCP', type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port with externalTrafficPolicy=local' },
  { name: 'KUBE-NODE-PORT-UDP', type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port for masquerade purpose' },
  { name: 'KUBE-NODE-PORT-LOCAL-UDP', type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port with externalTrafficPolicy=local' },
  { name: 'KUBE-NODE-PORT-SCTP-HASH', type: 'hash:ip,port', comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'" },
  { name: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH', type: 'hash:ip,port', comment: "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'" },
  { name: 'KUBE-HEALTH-CHECK-NODE-PORT', type: 'bitmap:port', comment: 'Kubernetes health check node port' },
  { name: 'KUBE-IPVS-IPS', type: 'hash:ip', comment: 'IPVS service addresses' },
];
const SET_TYPE = new Map(IPSETS.map((s) => [s.name, s.type]));
const SET_COMMENT = new Map(IPSETS.map((s) => [s.name, s.comment]));

/** ipsetWithIptablesChain: `-A <from> [-p proto] -m set --match-set <name> <match> -j <to>`, in kube-proxy's order. */
const IPSET_WITH_IPTABLES_CHAIN: ReadonlyArray<{ name: string; table: 'nat' | 'filter'; from: string; to: string; match: string; proto: string }> = [
  { name: 'KUBE-LOOP-BACK', table: 'nat', from: KUBE_POSTROUTING, to: 'MASQUERADE', match: 'dst,dst,src', proto: '' },
  { name: 'KUBE-LOAD-BALANCER', table: 'nat', from: KUBE_SERVICES, to: KUBE_LOAD_BALANCER, match: 'dst,dst', proto: '' },
  { name: 'KUBE-LOAD-BALANCER-LOCAL', table: 'nat', from: KUBE_LOAD_BALANCER, to: 'RETURN', match: 'dst,dst', proto: '' },
  { name: 'KUBE-NODE-PORT-LOCAL-TCP', table: 'nat', from: KUBE_NODE_PORT, to: 'RETURN', match: 'dst', proto: 'tcp' },
  { name: 'KUBE-NODE-PORT-TCP', table: 'nat', from: KUBE_NODE_PORT, to: KUBE_MARK_MASQ, match: 'dst', proto: 'tcp' },
  { name: 'KUBE-NODE-PORT-LOCAL-UDP', table: 'nat', from: KUBE_NODE_PORT, to: 'RETURN', match: 'dst', proto: 'udp' },
  { name: 'KUBE-NODE-PORT-UDP', table: 'nat', from: KUBE_NODE_PORT, to: KUBE_MARK_MASQ, match: 'dst', proto: 'udp' },
  { name: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH', table: 'nat', from: KUBE_NODE_PORT, to: 'RETURN', match: 'dst,dst', proto: 'sctp' },
  { name: 'KUBE-NODE-PORT-SCTP-HASH', table: 'nat', from: KUBE_NODE_PORT, to: KUBE_MARK_MASQ, match: 'dst,dst', proto: 'sctp' },
  { name: 'KUBE-LOAD-BALANCER-FW', table: 'filter', from: KUBE_PROXY_FIREWALL, to: KUBE_SOURCE_RANGES_FIREWALL, match: 'dst,dst', proto: '' },
  { name: 'KUBE-LOAD-BALANCER-SOURCE-CIDR', table: 'filter', from: KUBE_SOURCE_RANGES_FIREWALL, to: 'RETURN', match: 'dst,dst,src', proto: '' },
  { name: 'KUBE-LOAD-BALANCER-SOURCE-IP', table: 'filter', from: KUBE_SOURCE_RANGES_FIREWALL, to: 'RETURN', match: 'dst,dst,src', proto: '' },
];

export interface VirtualServer {
  protocol: string;
  address: string;
  port: number;
  scheduler: string;
  /** Session affinity timeout (ipvsadm -p), 0: none. */
  persistent: number;
  /** Source-hash flag (scheduler mh). */
  sourceHash: boolean;
  /** `ip:port` of each real server, sorted. */
  realServers: string[];
}

export interface IpvsServiceRules {
  virtualServers: VirtualServer[];
  /** [set, entry] pairs. */
  ipsetEntries: Array<[string, string]>;
  /** Addresses bound to kube-ipvs0 (KUBE-IPVS-IPS). */
  bindAddrs: string[];
  /** Load-balancer IPs the node may not reach (KUBE-IPVS-OUT-FILTER). */
  lbNoNodeAccess: Array<{ ip: string; protocol: string; port: number }>;
}

/** The virtual servers and ipset entries of one service port. */
export function ipvsServiceRules(svc: ServicePort, allEndpoints: readonly Endpoint[], ctx: ProxyContext): IpvsServiceRules {
  const protocol = svc.protocol.toLowerCase();
  const entries: Array<[string, string]> = [];
  const vss: VirtualServer[] = [];
  const bindAddrs: string[] = [];
  const lbNoNodeAccess: IpvsServiceRules['lbNoNodeAccess'] = [];
  const { clusterEndpoints, localEndpoints } = categorizeEndpoints(allEndpoints, svc, ctx.nodeName, ctx.nodeLabels);
  const realServers = (onlyNodeLocal: boolean) => {
    const eps = onlyNodeLocal ? (localEndpoints.length > 0 ? localEndpoints : clusterEndpoints) : clusterEndpoints;
    return [...new Set(eps.map((e) => e.str))].sort();
  };
  const vs = (address: string, port: number, onlyNodeLocal: boolean): VirtualServer => ({
    protocol,
    address,
    port,
    scheduler: ctx.ipvsScheduler,
    persistent: svc.sessionAffinityClientIP ? svc.stickyMaxAgeSeconds : 0,
    sourceHash: ctx.ipvsScheduler === 'mh',
    realServers: realServers(onlyNodeLocal),
  });

  for (const ep of allEndpoints) {
    if (ep.isLocal) entries.push(['KUBE-LOOP-BACK', `${ep.ip},${protocol}:${ep.port},${ep.ip}`]);
  }

  entries.push(['KUBE-CLUSTER-IP', `${svc.clusterIP},${protocol}:${svc.port}`]);
  vss.push(vs(svc.clusterIP, svc.port, svc.internalPolicyLocal));
  bindAddrs.push(svc.clusterIP);

  for (const ip of svc.externalIPs) {
    entries.push([svc.externalPolicyLocal ? 'KUBE-EXTERNAL-IP-LOCAL' : 'KUBE-EXTERNAL-IP', `${ip},${protocol}:${svc.port}`]);
    vss.push(vs(ip, svc.port, svc.externalPolicyLocal));
    if (!ctx.nodeIPs.includes(ip)) bindAddrs.push(ip);
  }

  for (const lbip of svc.loadBalancerVIPs) {
    const entry = `${lbip},${protocol}:${svc.port}`;
    entries.push(['KUBE-LOAD-BALANCER', entry]);
    if (svc.externalPolicyLocal) entries.push(['KUBE-LOAD-BALANCER-LOCAL', entry]);
    if (svc.loadBalancerSourceRanges.length > 0) {
      entries.push(['KUBE-LOAD-BALANCER-FW', entry]);
      let allowFromNode = false;
      for (const cidr of svc.loadBalancerSourceRanges) {
        entries.push(['KUBE-LOAD-BALANCER-SOURCE-CIDR', `${entry},${cidr}`]);
        if (ctx.nodeIP && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
      }
      if (allowFromNode) entries.push(['KUBE-LOAD-BALANCER-SOURCE-IP', `${entry},${lbip}`]);
      else lbNoNodeAccess.push({ ip: lbip, protocol, port: svc.port });
    }
    vss.push(vs(lbip, svc.port, svc.externalPolicyLocal));
    if (!ctx.nodeIPs.includes(lbip)) bindAddrs.push(lbip);
  }

  if (svc.nodePort !== 0 && ctx.nodeIPs.length > 0) {
    const upper = protocol.toUpperCase();
    const sets = protocol === 'sctp' ? ['KUBE-NODE-PORT-SCTP-HASH', 'KUBE-NODE-PORT-LOCAL-SCTP-HASH'] : [`KUBE-NODE-PORT-${upper}`, `KUBE-NODE-PORT-LOCAL-${upper}`];
    const npEntries = protocol === 'sctp' ? ctx.nodeIPs.map((ip) => `${ip},sctp:${svc.nodePort}`) : [String(svc.nodePort)];
    for (const e of npEntries) {
      entries.push([sets[0]!, e]);
      if (svc.externalPolicyLocal) entries.push([sets[1]!, e]);
    }
    for (const ip of ctx.nodeIPs) vss.push(vs(ip, svc.nodePort, svc.externalPolicyLocal));
  }

  if (svc.healthCheckNodePort !== 0) entries.push(['KUBE-HEALTH-CHECK-NODE-PORT', String(svc.healthCheckNodePort)]);
  return { virtualServers: vss, ipsetEntries: entries, bindAddrs, lbNoNodeAccess };
}

const IPVSADM_PROTO: Record<string, string> = { tcp: '-t', udp: '-u', sctp: '--sctp-service' };

/** `ipvsadm -S -n`: each virtual server (`-A`) followed by its real servers (`-a`, masquerading, weight 1). */
export function renderIpvsadm(vss: readonly VirtualServer[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const v of vss) {
    const flag = IPVSADM_PROTO[v.protocol] ?? '-t';
    const addr = `${v.address}:${v.port}`;
    const key = `${flag} ${addr}`;
    if (seen.has(key)) continue;
    seen.add(key);
    let line = `-A ${flag} ${addr} -s ${v.scheduler}`;
    if (v.sourceHash) line += ' -b flag-1';
    if (v.persistent > 0) line += ` -p ${v.persistent}`;
    out.push(line);
    for (const rs of v.realServers) out.push(`-a ${flag} ${addr} -r ${rs} -m -w 1`);
  }
  return out;
}

/** `ipset save`: every set kube-proxy creates, then its entries (sorted). */
export function renderIpsets(entries: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const out: string[] = [];
  for (const s of IPSETS) {
    out.push(s.type === 'bitmap:port' ? `create ${s.name} bitmap:port range 0-65535` : `create ${s.name} ${s.type} family inet hashsize 1024 maxelem 65536`);
    const es = [...(entries.get(s.name) ?? [])];
    es.sort(s.type === 'bitmap:port' ? (a, b) => Number(a) - Number(b) : undefined);
    for (const e of es) out.push(`add ${s.name} ${e}`);
  }
  return out;
}

function rule(chain: string, ...args: string[]): Rule {
  return { chain, args: args.filter((a) => a !== '').join(' ') };
}
function q(s: string): string {
  return `"${s}"`;
}

const IPVS_JUMP_CHAINS: Array<{ table: 'filter' | 'nat'; dst: string; src: string; comment: string; extra: string }> = [
  { table: 'nat', src: 'OUTPUT', dst: KUBE_SERVICES, comment: 'kubernetes service portals', extra: '' },
  { table: 'nat', src: 'PREROUTING', dst: KUBE_SERVICES, comment: 'kubernetes service portals', extra: '' },
  { table: 'nat', src: 'POSTROUTING', dst: KUBE_POSTROUTING, comment: 'kubernetes postrouting rules', extra: '' },
  { table: 'filter', src: 'FORWARD', dst: KUBE_FORWARD, comment: 'kubernetes forwarding rules', extra: '' },
  { table: 'filter', src: 'INPUT', dst: KUBE_NODE_PORT, comment: 'kubernetes health check rules', extra: '' },
  { table: 'filter', src: 'INPUT', dst: KUBE_PROXY_FIREWALL, comment: 'kube-proxy firewall rules', extra: '' },
  { table: 'filter', src: 'FORWARD', dst: KUBE_PROXY_FIREWALL, comment: 'kube-proxy firewall rules', extra: '' },
  { table: 'filter', src: 'INPUT', dst: KUBE_IPVS_FILTER, comment: 'kubernetes ipvs access filter', extra: '' },
  { table: 'filter', src: 'OUTPUT', dst: KUBE_IPVS_OUT_FILTER, comment: 'kubernetes ipvs access filter', extra: '' },
];

/** writeIptablesRules: the nat and filter rules of IPVS mode, given the sets' contents. */
export function ipvsIptables(
  entries: ReadonlyMap<string, ReadonlySet<string>>,
  lbNoNodeAccess: IpvsServiceRules['lbNoNodeAccess'],
  ctx: ProxyContext,
): { filter: Table; nat: Table } {
  const mark = ctx.masqueradeMark;
  const nonEmpty = (name: string) => (entries.get(name)?.size ?? 0) > 0;
  const comment = (name: string) => `-m comment --comment ${q(SET_COMMENT.get(name)!)}`;
  const nat: Rule[] = [];
  const filter: Rule[] = [];

  nat.push(rule(KUBE_SERVICES, '-s 127.0.0.0/8', '-j RETURN'));
  for (const s of IPSET_WITH_IPTABLES_CHAIN) {
    if (!nonEmpty(s.name)) continue;
    const r = rule(s.from, s.proto ? `-p ${s.proto}` : '', comment(s.name), `-m set --match-set ${s.name} ${s.match}`, `-j ${s.to}`);
    (s.table === 'filter' ? filter : nat).push(r);
  }
  if (nonEmpty('KUBE-CLUSTER-IP')) {
    const args = [comment('KUBE-CLUSTER-IP'), '-m set --match-set KUBE-CLUSTER-IP'];
    if (ctx.masqueradeAll) nat.push(rule(KUBE_SERVICES, ...args, 'dst,dst', `-j ${KUBE_MARK_MASQ}`));
    else if (ctx.localDetector) nat.push(rule(KUBE_SERVICES, ...args, 'dst,dst', ctx.localDetector.ifNotLocal, `-j ${KUBE_MARK_MASQ}`));
    else nat.push(rule(KUBE_SERVICES, ...args, 'src,dst', `-j ${KUBE_MARK_MASQ}`));
  }
  const externalIPRules = (args: string[]) => {
    nat.push(rule(KUBE_SERVICES, ...args, '-m physdev ! --physdev-is-in', '-m addrtype ! --src-type LOCAL', '-j ACCEPT'));
    nat.push(rule(KUBE_SERVICES, ...args, '-m addrtype --dst-type LOCAL', '-j ACCEPT'));
  };
  if (nonEmpty('KUBE-EXTERNAL-IP')) {
    const args = [comment('KUBE-EXTERNAL-IP'), '-m set --match-set KUBE-EXTERNAL-IP dst,dst'];
    nat.push(rule(KUBE_SERVICES, ...args, `-j ${KUBE_MARK_MASQ}`));
    externalIPRules(args);
  }
  if (nonEmpty('KUBE-EXTERNAL-IP-LOCAL')) externalIPRules([comment('KUBE-EXTERNAL-IP-LOCAL'), '-m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst']);
  nat.push(rule(KUBE_SERVICES, '-m addrtype --dst-type LOCAL', `-j ${KUBE_NODE_PORT}`));
  nat.push(rule(KUBE_LOAD_BALANCER, `-j ${KUBE_MARK_MASQ}`));
  filter.push(rule(KUBE_SOURCE_RANGES_FIREWALL, '-j DROP'));
  for (const e of lbNoNodeAccess) {
    filter.push(rule(KUBE_IPVS_OUT_FILTER, `-s ${e.ip}`, `-m ipvs --vaddr ${e.ip} --vproto ${e.protocol} --vport ${e.port}`, '-j DROP'));
  }
  for (const set of ['KUBE-CLUSTER-IP', 'KUBE-LOAD-BALANCER']) {
    if (nonEmpty(set)) nat.push(rule(KUBE_SERVICES, `-m set --match-set ${set} ${SET_TYPE.get(set) === 'bitmap:port' ? 'dst' : 'dst,dst'}`, '-j ACCEPT'));
  }
  filter.push(rule(KUBE_FORWARD, '-m comment --comment', q('kubernetes forwarding rules'), `-m mark --mark ${mark}/${mark}`, '-j ACCEPT'));
  filter.push(rule(KUBE_FORWARD, '-m comment --comment', q('kubernetes forwarding conntrack rule'), '-m conntrack --ctstate RELATED,ESTABLISHED', '-j ACCEPT'));
  filter.push(rule(KUBE_NODE_PORT, comment('KUBE-HEALTH-CHECK-NODE-PORT'), '-m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst', '-j ACCEPT'));
  for (const set of ['KUBE-LOAD-BALANCER', 'KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-EXTERNAL-IP-LOCAL']) {
    filter.push(rule(KUBE_IPVS_FILTER, `-m set --match-set ${set} dst,dst`, '-j RETURN'));
  }
  filter.push(rule(KUBE_IPVS_FILTER, '-m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst', '-j RETURN'));
  filter.push(rule(KUBE_IPVS_FILTER, '-m conntrack --ctstate NEW', '-m set --match-set KUBE-IPVS-IPS dst', '-j REJECT'));
  nat.push(rule(KUBE_POSTROUTING, `-m mark ! --mark ${mark}/${mark}`, '-j RETURN'));
  nat.push(rule(KUBE_POSTROUTING, `-j MARK --xor-mark ${mark}`));
  nat.push(rule(KUBE_POSTROUTING, '-m comment --comment', q('kubernetes service traffic requiring SNAT'), '-j MASQUERADE --random-fully'));
  nat.push(rule(KUBE_MARK_MASQ, `-j MARK --or-mark ${mark}`));

  return {
    nat: {
      name: 'nat',
      builtin: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
      chains: [KUBE_SERVICES, KUBE_POSTROUTING, KUBE_NODE_PORT, KUBE_LOAD_BALANCER, KUBE_MARK_MASQ],
      rules: [...builtinJumpRules(IPVS_JUMP_CHAINS, 'nat'), ...nat],
    },
    filter: {
      name: 'filter',
      builtin: ['INPUT', 'FORWARD', 'OUTPUT'],
      chains: [KUBE_FORWARD, KUBE_NODE_PORT, KUBE_PROXY_FIREWALL, KUBE_SOURCE_RANGES_FIREWALL, KUBE_IPVS_FILTER, KUBE_IPVS_OUT_FILTER],
      rules: [...builtinJumpRules(IPVS_JUMP_CHAINS, 'filter'), ...filter],
    },
  };
}
