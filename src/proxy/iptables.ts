/**
 * The iptables proxier's rules (pkg/proxy/iptables/proxier.go,
 * syncProxyRules): the `filter` and `nat` tables kube-proxy would restore,
 * computed per service port so that a sync recomputes only the Services
 * that changed.
 */
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  serviceExternalChain,
  serviceFirewallChain,
  servicePortEndpointChain,
  servicePortPolicyClusterChain,
  servicePortPolicyLocalChain,
} from './chains.js';
import { categorizeEndpoints, type Endpoint } from './endpoints.js';
import { cidrContains } from './net.js';
import { externallyAccessible, usesClusterEndpoints, usesLocalEndpoints, type ServicePort } from './service.js';
import type { ProxyContext, Rule, Table } from './types.js';

/** Endpoint chains beyond which kube-proxy drops the per-endpoint comments (largeClusterEndpointsThreshold). */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** kube-proxy's computeProbability: 1/n as %0.10f. */
export function probability(n: number): string {
  return (1 / n).toFixed(10);
}

/** Quotes an argument as iptables-save does for comments with spaces. */
function q(s: string): string {
  return `"${s}"`;
}

export interface IptablesServiceRules {
  filter: Rule[];
  nat: Rule[];
  /** Per-service nat chains (KUBE-SVC/SVL/EXT/FW/SEP) this service port owns. */
  natChains: string[];
}

function rule(chain: string, ...args: string[]): Rule {
  return { chain, args: args.join(' ') };
}

/** The rules of one service port (the body of syncProxyRules' loop). */
export function iptablesServiceRules(svc: ServicePort, allEndpoints: readonly Endpoint[], ctx: ProxyContext): IptablesServiceRules {
  const filter: Rule[] = [];
  const nat: Rule[] = [];
  const natChains: string[] = [];
  const protocol = svc.protocol.toLowerCase();
  const name = svc.name;
  const port = String(svc.port);

  const { clusterEndpoints, localEndpoints, allReachable, hasAnyEndpoints: hasEndpoints } = categorizeEndpoints(allEndpoints, svc, ctx.nodeName, ctx.nodeLabels);

  const clusterPolicyChain = servicePortPolicyClusterChain(name, protocol);
  const usesClusterPolicyChain = clusterEndpoints.length > 0 && usesClusterEndpoints(svc);
  const localPolicyChain = servicePortPolicyLocalChain(name, protocol);
  const usesLocalPolicyChain = localEndpoints.length > 0 && usesLocalEndpoints(svc);

  let internalPolicyChain = clusterPolicyChain;
  let hasInternalEndpoints = hasEndpoints;
  if (svc.internalPolicyLocal) {
    internalPolicyChain = localPolicyChain;
    if (localEndpoints.length === 0) hasInternalEndpoints = false;
  }
  const internalTrafficChain = internalPolicyChain;

  let externalPolicyChain = clusterPolicyChain;
  let hasExternalEndpoints = hasEndpoints;
  if (svc.externalPolicyLocal) {
    externalPolicyChain = localPolicyChain;
    if (localEndpoints.length === 0) hasExternalEndpoints = false;
  }
  const externalTrafficChain = serviceExternalChain(name, protocol);
  const usesExternalTrafficChain = hasEndpoints && externallyAccessible(svc);

  let loadBalancerTrafficChain = externalTrafficChain;
  const fwChain = serviceFirewallChain(name, protocol);
  const usesFWChain = hasEndpoints && svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;
  if (usesFWChain) loadBalancerTrafficChain = fwChain;

  let internalFilterTarget = '';
  let internalFilterComment = '';
  let externalFilterTarget = '';
  let externalFilterComment = '';
  if (!hasEndpoints) {
    internalFilterTarget = 'REJECT';
    internalFilterComment = q(`${name} has no endpoints`);
    externalFilterTarget = 'REJECT';
    externalFilterComment = internalFilterComment;
  } else {
    if (!hasInternalEndpoints) {
      internalFilterTarget = 'DROP';
      internalFilterComment = q(`${name} has no local endpoints`);
    }
    if (!hasExternalEndpoints) {
      externalFilterTarget = 'DROP';
      externalFilterComment = q(`${name} has no local endpoints`);
    }
  }

  // Capture the clusterIP.
  if (hasInternalEndpoints) {
    nat.push(rule(KUBE_SERVICES, '-m comment --comment', q(`${name} cluster IP`), `-m ${protocol} -p ${protocol}`, `-d ${svc.clusterIP}`, `--dport ${port}`, `-j ${internalTrafficChain}`));
  } else {
    filter.push(rule(KUBE_SERVICES, '-m comment --comment', internalFilterComment, `-m ${protocol} -p ${protocol}`, `-d ${svc.clusterIP}`, `--dport ${port}`, `-j ${internalFilterTarget}`));
  }

  // Capture externalIPs.
  for (const ip of svc.externalIPs) {
    if (hasEndpoints) {
      nat.push(rule(KUBE_SERVICES, '-m comment --comment', q(`${name} external IP`), `-m ${protocol} -p ${protocol}`, `-d ${ip}`, `--dport ${port}`, `-j ${externalTrafficChain}`));
    }
    if (!hasExternalEndpoints) {
      filter.push(rule(KUBE_EXTERNAL_SERVICES, '-m comment --comment', externalFilterComment, `-m ${protocol} -p ${protocol}`, `-d ${ip}`, `--dport ${port}`, `-j ${externalFilterTarget}`));
    }
  }

  // Capture load-balancer ingress.
  for (const lbip of svc.loadBalancerVIPs) {
    if (hasEndpoints) {
      nat.push(rule(KUBE_SERVICES, '-m comment --comment', q(`${name} loadbalancer IP`), `-m ${protocol} -p ${protocol}`, `-d ${lbip}`, `--dport ${port}`, `-j ${loadBalancerTrafficChain}`));
    }
    if (usesFWChain) {
      filter.push(rule(KUBE_PROXY_FIREWALL, '-m comment --comment', q(`${name} traffic not accepted by ${fwChain}`), `-m ${protocol} -p ${protocol}`, `-d ${lbip}`, `--dport ${port}`, '-j DROP'));
    }
  }
  if (!hasExternalEndpoints) {
    for (const lbip of svc.loadBalancerVIPs) {
      filter.push(rule(KUBE_EXTERNAL_SERVICES, '-m comment --comment', externalFilterComment, `-m ${protocol} -p ${protocol}`, `-d ${lbip}`, `--dport ${port}`, `-j ${externalFilterTarget}`));
    }
  }

  // Capture nodeports.
  if (svc.nodePort !== 0) {
    if (hasEndpoints) {
      nat.push(rule(KUBE_NODEPORTS, '-m comment --comment', name, `-m ${protocol} -p ${protocol}`, `--dport ${svc.nodePort}`, `-j ${externalTrafficChain}`));
    }
    if (!hasExternalEndpoints) {
      filter.push(rule(KUBE_EXTERNAL_SERVICES, '-m comment --comment', externalFilterComment, '-m addrtype --dst-type LOCAL', `-m ${protocol} -p ${protocol}`, `--dport ${svc.nodePort}`, `-j ${externalFilterTarget}`));
    }
  }

  // Capture healthCheckNodePorts.
  if (svc.healthCheckNodePort !== 0) {
    filter.push(rule(KUBE_NODEPORTS, '-m comment --comment', q(`${name} health check node port`), '-m tcp -p tcp', `--dport ${svc.healthCheckNodePort}`, '-j ACCEPT'));
  }

  // Internal traffic handling.
  if (hasInternalEndpoints) {
    const args = ['-m comment --comment', q(`${name} cluster IP`), `-m ${protocol} -p ${protocol}`, `-d ${svc.clusterIP}`, `--dport ${port}`];
    if (ctx.masqueradeAll) nat.push(rule(internalTrafficChain, ...args, `-j ${KUBE_MARK_MASQ}`));
    else if (ctx.localDetector) nat.push(rule(internalTrafficChain, ...args, ctx.localDetector.ifNotLocal, `-j ${KUBE_MARK_MASQ}`));
  }

  // External traffic handling.
  if (usesExternalTrafficChain) {
    natChains.push(externalTrafficChain);
    if (!svc.externalPolicyLocal) {
      nat.push(rule(externalTrafficChain, '-m comment --comment', q(`masquerade traffic for ${name} external destinations`), `-j ${KUBE_MARK_MASQ}`));
    } else {
      if (ctx.localDetector) {
        nat.push(rule(externalTrafficChain, '-m comment --comment', q(`pod traffic for ${name} external destinations`), ctx.localDetector.ifLocal, `-j ${clusterPolicyChain}`));
      }
      nat.push(rule(externalTrafficChain, '-m comment --comment', q(`masquerade LOCAL traffic for ${name} external destinations`), '-m addrtype --src-type LOCAL', `-j ${KUBE_MARK_MASQ}`));
      nat.push(rule(externalTrafficChain, '-m comment --comment', q(`route LOCAL traffic for ${name} external destinations`), '-m addrtype --src-type LOCAL', `-j ${clusterPolicyChain}`));
    }
    if (hasExternalEndpoints) nat.push(rule(externalTrafficChain, `-j ${externalPolicyChain}`));
  }

  // Firewall chain (loadBalancerSourceRanges).
  if (usesFWChain) {
    natChains.push(fwChain);
    const args = ['-m comment --comment', q(`${name} loadbalancer IP`)];
    let allowFromNode = false;
    for (const cidr of svc.loadBalancerSourceRanges) {
      nat.push(rule(fwChain, ...args, `-s ${cidr}`, `-j ${externalTrafficChain}`));
      if (ctx.nodeIP && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
    }
    if (allowFromNode) {
      for (const lbip of svc.loadBalancerVIPs) nat.push(rule(fwChain, ...args, `-s ${lbip}`, `-j ${externalTrafficChain}`));
    }
    nat.push(rule(fwChain, '-m comment --comment', q(`other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL`)));
  }

  if (usesClusterPolicyChain) {
    natChains.push(clusterPolicyChain);
    writeServiceToEndpointRules(nat, svc, clusterPolicyChain, clusterEndpoints, ctx);
  }
  if (usesLocalPolicyChain) {
    natChains.push(localPolicyChain);
    writeServiceToEndpointRules(nat, svc, localPolicyChain, localEndpoints, ctx);
  }

  // Per-endpoint chains.
  for (const ep of allReachable) {
    const epChain = servicePortEndpointChain(name, protocol, ep.str);
    natChains.push(epChain);
    const base = ctx.largeClusterMode ? [] : ['-m comment --comment', name];
    nat.push(rule(epChain, ...base, `-s ${ep.ip}`, `-j ${KUBE_MARK_MASQ}`));
    const args = [...base];
    if (svc.sessionAffinityClientIP) args.push(`-m recent --name ${epChain} --set`);
    nat.push(rule(epChain, ...args, `-m ${protocol} -p ${protocol}`, `-j DNAT --to-destination ${ep.str}`));
  }

  return { filter, nat, natChains };
}

function writeServiceToEndpointRules(nat: Rule[], svc: ServicePort, svcChain: string, endpoints: readonly Endpoint[], ctx: ProxyContext): void {
  const protocol = svc.protocol.toLowerCase();
  const comment = (ep: Endpoint) => (ctx.largeClusterMode ? [] : ['-m comment --comment', q(`${svc.name} -> ${ep.str}`)]);
  if (svc.sessionAffinityClientIP) {
    for (const ep of endpoints) {
      const epChain = servicePortEndpointChain(svc.name, protocol, ep.str);
      nat.push(rule(svcChain, ...comment(ep), `-m recent --name ${epChain} --rcheck --seconds ${svc.stickyMaxAgeSeconds} --reap`, `-j ${epChain}`));
    }
  }
  const n = endpoints.length;
  endpoints.forEach((ep, i) => {
    const epChain = servicePortEndpointChain(svc.name, protocol, ep.str);
    const stat = i < n - 1 ? [`-m statistic --mode random --probability ${probability(n - i)}`] : [];
    nat.push(rule(svcChain, ...comment(ep), ...stat, `-j ${epChain}`));
  });
}

/** The jump rules kube-proxy ensures in the built-in chains (iptablesJumpChains, then kubelet's), each prepended. */
const JUMP_CHAINS: Array<{ table: 'filter' | 'nat'; dst: string; src: string; comment: string; extra: string }> = [
  { table: 'filter', dst: KUBE_EXTERNAL_SERVICES, src: 'INPUT', comment: 'kubernetes externally-visible service portals', extra: '-m conntrack --ctstate NEW' },
  { table: 'filter', dst: KUBE_EXTERNAL_SERVICES, src: 'FORWARD', comment: 'kubernetes externally-visible service portals', extra: '-m conntrack --ctstate NEW' },
  { table: 'filter', dst: KUBE_NODEPORTS, src: 'INPUT', comment: 'kubernetes health check service ports', extra: '' },
  { table: 'filter', dst: KUBE_SERVICES, src: 'FORWARD', comment: 'kubernetes service portals', extra: '-m conntrack --ctstate NEW' },
  { table: 'filter', dst: KUBE_SERVICES, src: 'OUTPUT', comment: 'kubernetes service portals', extra: '-m conntrack --ctstate NEW' },
  { table: 'filter', dst: KUBE_FORWARD, src: 'FORWARD', comment: 'kubernetes forwarding rules', extra: '' },
  { table: 'filter', dst: KUBE_PROXY_FIREWALL, src: 'INPUT', comment: 'kubernetes load balancer firewall', extra: '-m conntrack --ctstate NEW' },
  { table: 'filter', dst: KUBE_PROXY_FIREWALL, src: 'OUTPUT', comment: 'kubernetes load balancer firewall', extra: '-m conntrack --ctstate NEW' },
  { table: 'filter', dst: KUBE_PROXY_FIREWALL, src: 'FORWARD', comment: 'kubernetes load balancer firewall', extra: '-m conntrack --ctstate NEW' },
  { table: 'nat', dst: KUBE_SERVICES, src: 'OUTPUT', comment: 'kubernetes service portals', extra: '' },
  { table: 'nat', dst: KUBE_SERVICES, src: 'PREROUTING', comment: 'kubernetes service portals', extra: '' },
  { table: 'nat', dst: KUBE_POSTROUTING, src: 'POSTROUTING', comment: 'kubernetes postrouting rules', extra: '' },
];
const KUBELET_JUMP_CHAINS = [
  { table: 'filter' as const, dst: KUBE_FIREWALL, src: 'INPUT', comment: '', extra: '' },
  { table: 'filter' as const, dst: KUBE_FIREWALL, src: 'OUTPUT', comment: '', extra: '' },
];

/** Prepends each jump as EnsureRule(Prepend, ...) does: the last ensured is first. */
export function builtinJumpRules(
  jumps: ReadonlyArray<{ table: 'filter' | 'nat'; dst: string; src: string; comment: string; extra: string }>,
  table: 'filter' | 'nat',
): Rule[] {
  const out: Rule[] = [];
  for (const j of jumps) {
    if (j.table !== table) continue;
    const args = [j.extra, j.comment ? `-m comment --comment ${q(j.comment)}` : '', `-j ${j.dst}`].filter((s) => s !== '');
    out.unshift(rule(j.src, ...args));
  }
  return out;
}

/** Assembles both tables from the per-service rules (in service port name order). */
export function assembleIptables(perService: ReadonlyArray<IptablesServiceRules>, ctx: ProxyContext): { filter: Table; nat: Table } {
  const mark = ctx.masqueradeMark;
  const filterChains = [KUBE_SERVICES, KUBE_EXTERNAL_SERVICES, KUBE_FORWARD, KUBE_NODEPORTS, KUBE_PROXY_FIREWALL];
  const natChains = [KUBE_SERVICES, KUBE_NODEPORTS, KUBE_POSTROUTING, KUBE_MARK_MASQ];
  const filterRules: Rule[] = [];
  const natRules: Rule[] = [];

  natRules.push(rule(KUBE_POSTROUTING, `-m mark ! --mark ${mark}/${mark}`, '-j RETURN'));
  natRules.push(rule(KUBE_POSTROUTING, `-j MARK --xor-mark ${mark}`));
  natRules.push(rule(KUBE_POSTROUTING, '-m comment --comment', q('kubernetes service traffic requiring SNAT'), '-j MASQUERADE --random-fully'));
  natRules.push(rule(KUBE_MARK_MASQ, `-j MARK --or-mark ${mark}`));

  if (ctx.localhostNodePorts) {
    filterChains.push(KUBE_FIREWALL);
    filterRules.push(rule(KUBE_FIREWALL, '-m comment --comment', q('block incoming localnet connections'), '-d 127.0.0.0/8 ! -s 127.0.0.0/8', '-m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT', '-j DROP'));
  }

  for (const s of perService) {
    filterRules.push(...s.filter);
    natRules.push(...s.nat);
    natChains.push(...s.natChains);
  }

  const destinations = ctx.localhostNodePorts ? '-m addrtype --dst-type LOCAL' : '-m addrtype --dst-type LOCAL ! -d 127.0.0.0/8';
  natRules.push(rule(KUBE_SERVICES, '-m comment --comment', q('kubernetes service nodeports; NOTE: this must be the last rule in this chain'), destinations, `-j ${KUBE_NODEPORTS}`));

  filterRules.push(rule(KUBE_FORWARD, '-m conntrack --ctstate INVALID', '-j DROP'));
  filterRules.push(rule(KUBE_FORWARD, '-m comment --comment', q('kubernetes forwarding rules'), `-m mark --mark ${mark}/${mark}`, '-j ACCEPT'));
  filterRules.push(rule(KUBE_FORWARD, '-m comment --comment', q('kubernetes forwarding conntrack rule'), '-m conntrack --ctstate RELATED,ESTABLISHED', '-j ACCEPT'));

  const jumps = ctx.localhostNodePorts ? [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS] : JUMP_CHAINS;
  return {
    filter: { name: 'filter', builtin: ['INPUT', 'FORWARD', 'OUTPUT'], chains: filterChains, rules: [...builtinJumpRules(jumps, 'filter'), ...filterRules] },
    nat: { name: 'nat', builtin: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'], chains: natChains, rules: [...builtinJumpRules(jumps, 'nat'), ...natRules] },
  };
}
