/**
 * The Proxier: kube-proxy's event handlers, change trackers and sync loop
 * without the kernel. A sync applies the pending Service and EndpointSlice
 * changes, recomputes the rules of the changed Services only (or of all of
 * them after a node change: kube-proxy's needFullSync), and returns the
 * tables kube-proxy would program, as text sections.
 */
import type { Node, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { realClock, type Clock, type Timer } from '../util/clock/clock.js';
import { EndpointsChangeTracker, EndpointsMap } from './endpoints.js';
import { assembleIptables, iptablesServiceRules, LARGE_CLUSTER_ENDPOINTS_THRESHOLD, type IptablesServiceRules } from './iptables.js';
import { ipvsIptables, ipvsServiceRules, renderIpsets, renderIpvsadm, type IpvsServiceRules } from './ipvs.js';
import { isIPv4, isIPv4CIDR } from './net.js';
import { renderTable, type Section } from './render.js';
import { ServiceChangeTracker, ServicePortMap } from './service.js';
import type { LocalDetector, ProxyContext } from './types.js';

export type ProxyMode = 'iptables' | 'ipvs';

export interface ProxierOptions {
  mode: ProxyMode;
  /** The node this proxy runs on (kube-proxy's --hostname-override). */
  nodeName: string;
  /** --cluster-cidr: the local traffic detector matches it; empty: the Node's spec.podCIDR (NodeCIDR), else none. */
  clusterCIDR?: string;
  masqueradeAll?: boolean;
  /** --masquerade-bit (14: 0x4000). */
  masqueradeBit?: number;
  ipvsScheduler?: string;
  localhostNodePorts?: boolean;
}

/** What the node contributes to the rules. */
export interface NodeInfo {
  labels: Record<string, string>;
  /** Primary IPv4 address (first InternalIP, else ExternalIP). */
  nodeIP: string;
  nodeIPs: string[];
  podCIDR: string;
}

export function nodeInfo(node: Node | undefined): NodeInfo {
  const addrs = node?.status?.addresses ?? [];
  const internal = addrs.filter((a) => a.type === 'InternalIP' && isIPv4(a.address)).map((a) => a.address);
  const external = addrs.filter((a) => a.type === 'ExternalIP' && isIPv4(a.address)).map((a) => a.address);
  const podCIDRs = [node?.spec?.podCIDR ?? '', ...(node?.spec?.podCIDRs ?? [])].filter((c) => isIPv4CIDR(c));
  return {
    labels: { ...(node?.metadata?.labels ?? {}) },
    nodeIP: internal[0] ?? external[0] ?? '',
    nodeIPs: [...new Set([...internal, ...external])],
    podCIDR: podCIDRs[0] ?? '',
  };
}

export interface SyncResult {
  sections: Section[];
  /** Service port names whose rules this sync recomputed. */
  recomputed: string[];
  /** Whether this was a full sync (every service recomputed). */
  full: boolean;
}

interface CachedRules {
  iptables?: IptablesServiceRules;
  ipvs?: IpvsServiceRules;
}

export class Proxier {
  readonly serviceChanges = new ServiceChangeTracker();
  readonly endpointsChanges: EndpointsChangeTracker;
  readonly svcPortMap = new ServicePortMap();
  readonly endpointsMap = new EndpointsMap();
  private node: NodeInfo = nodeInfo(undefined);
  private nodeSeen = false;
  private needFullSync = true;
  private largeClusterMode = false;
  private cache = new Map<string, CachedRules>();
  private servicesSynced = false;
  private endpointSlicesSynced = false;
  /** Called when a change wants a sync (the runner batches them). */
  onChange: () => void = () => {};

  constructor(readonly opts: ProxierOptions) {
    this.endpointsChanges = new EndpointsChangeTracker(opts.nodeName);
  }

  get initialized(): boolean {
    return this.servicesSynced && this.endpointSlicesSynced;
  }
  /** The node object has been seen. */
  get hasNode(): boolean {
    return this.nodeSeen;
  }

  onServiceAdd(svc: Service): void {
    this.onServiceUpdate(undefined, svc);
  }
  onServiceUpdate(old: Service | undefined, svc: Service | undefined): void {
    if (this.serviceChanges.update(old, svc) && this.initialized) this.onChange();
  }
  onServiceDelete(svc: Service): void {
    this.onServiceUpdate(svc, undefined);
  }
  onServicesSynced(): void {
    this.servicesSynced = true;
  }
  onEndpointSliceAdd(slice: EndpointSlice): void {
    if (this.endpointsChanges.endpointSliceUpdate(slice, false) && this.initialized) this.onChange();
  }
  onEndpointSliceUpdate(_old: EndpointSlice, slice: EndpointSlice): void {
    this.onEndpointSliceAdd(slice);
  }
  onEndpointSliceDelete(slice: EndpointSlice): void {
    if (this.endpointsChanges.endpointSliceUpdate(slice, true) && this.initialized) this.onChange();
  }
  onEndpointSlicesSynced(): void {
    this.endpointSlicesSynced = true;
  }
  /** Add or update of this proxy's Node (others are ignored, as kube-proxy does). */
  onNodeUpdate(node: Node): void {
    if (node.metadata?.name !== this.opts.nodeName) return;
    this.nodeSeen = true;
    const info = nodeInfo(node);
    if (JSON.stringify(info) === JSON.stringify(this.node)) return;
    this.node = info;
    this.needFullSync = true;
    if (this.initialized) this.onChange();
  }
  onNodeDelete(node: Node): void {
    if (node.metadata?.name !== this.opts.nodeName) return;
    this.nodeSeen = false;
    this.node = nodeInfo(undefined);
    this.needFullSync = true;
    if (this.initialized) this.onChange();
  }

  /** The local traffic detector: --cluster-cidr, else the node's pod CIDR, else none. */
  localDetector(): LocalDetector | null {
    const cidr = this.opts.clusterCIDR || this.node.podCIDR;
    return cidr ? { ifLocal: `-s ${cidr}`, ifNotLocal: `! -s ${cidr}` } : null;
  }

  context(): ProxyContext {
    return {
      nodeName: this.opts.nodeName,
      nodeIP: this.node.nodeIP,
      nodeIPs: this.node.nodeIPs,
      nodeLabels: this.node.labels,
      masqueradeAll: this.opts.masqueradeAll ?? false,
      masqueradeMark: '0x' + ((1 << (this.opts.masqueradeBit ?? 14)) >>> 0).toString(16),
      localDetector: this.localDetector(),
      localhostNodePorts: this.opts.localhostNodePorts ?? true,
      largeClusterMode: this.largeClusterMode,
      ipvsScheduler: this.opts.ipvsScheduler || 'rr',
    };
  }

  /** syncProxyRules: applies pending changes and computes the rules. */
  syncProxyRules(): SyncResult {
    const updated = this.svcPortMap.applyChanges(this.serviceChanges);
    for (const s of this.endpointsMap.applyChanges(this.endpointsChanges)) updated.add(s);

    let total = 0;
    for (const name of this.svcPortMap.keys()) total += this.endpointsMap.get(name)?.length ?? 0;
    const large = total > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
    if (large !== this.largeClusterMode) {
      this.largeClusterMode = large;
      this.needFullSync = true;
    }
    const full = this.needFullSync;
    this.needFullSync = false;
    const ctx = this.context();

    const names = [...this.svcPortMap.keys()].sort();
    for (const k of this.cache.keys()) if (!this.svcPortMap.has(k)) this.cache.delete(k);
    const recomputed: string[] = [];
    for (const name of names) {
      const sp = this.svcPortMap.get(name)!;
      if (!full && this.cache.has(name) && !updated.has(sp.service)) continue;
      const eps = this.endpointsMap.get(name) ?? [];
      this.cache.set(name, this.opts.mode === 'ipvs' ? { ipvs: ipvsServiceRules(sp, eps, ctx) } : { iptables: iptablesServiceRules(sp, eps, ctx) });
      recomputed.push(name);
    }
    const blocks = names.map((n) => this.cache.get(n)!);
    return { sections: this.opts.mode === 'ipvs' ? this.ipvsSections(blocks, ctx) : this.iptablesSections(blocks, ctx), recomputed, full };
  }

  private iptablesSections(blocks: CachedRules[], ctx: ProxyContext): Section[] {
    const { filter, nat } = assembleIptables(
      blocks.map((b) => b.iptables!),
      ctx,
    );
    return [
      { name: 'filter', lines: renderTable(filter) },
      { name: 'nat', lines: renderTable(nat) },
    ];
  }

  private ipvsSections(blocks: CachedRules[], ctx: ProxyContext): Section[] {
    const entries = new Map<string, Set<string>>();
    const add = (set: string, e: string) => {
      let s = entries.get(set);
      if (!s) entries.set(set, (s = new Set()));
      s.add(e);
    };
    const lbNoNodeAccess: IpvsServiceRules['lbNoNodeAccess'] = [];
    for (const b of blocks) {
      for (const [set, e] of b.ipvs!.ipsetEntries) add(set, e);
      for (const a of b.ipvs!.bindAddrs) add('KUBE-IPVS-IPS', a);
      lbNoNodeAccess.push(...b.ipvs!.lbNoNodeAccess);
    }
    const { nat, filter } = ipvsIptables(entries, lbNoNodeAccess, ctx);
    return [
      { name: 'ipvs', lines: renderIpvsadm(blocks.flatMap((b) => b.ipvs!.virtualServers)) },
      { name: 'ipset', lines: renderIpsets(entries) },
      { name: 'nat', lines: renderTable(nat) },
      { name: 'filter', lines: renderTable(filter) },
    ];
  }
}

/** Renders sections as printed by `kcm proxy --print`: each under a `# <name>` header. */
export function renderSections(sections: readonly Section[]): string {
  return sections.map((s) => `# ${s.name}\n${s.lines.join('\n')}\n`).join('');
}

/**
 * async.BoundedFrequencyRunner: runs `fn` when asked, at most `burst` runs
 * at once and then one per `minIntervalMs` (a token bucket), and at least
 * once every `maxIntervalMs`. Requests made while a run is pending are
 * folded into it.
 */
export class BoundedFrequencyRunner {
  private tokens: number;
  private lastRefill: number;
  private pending: Timer | undefined;
  private periodic: Timer | undefined;
  private stopped = false;

  constructor(
    private readonly fn: () => void,
    private readonly minIntervalMs: number,
    private readonly maxIntervalMs: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.lastRefill = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    if (this.minIntervalMs <= 0) this.tokens = this.burst;
    else this.tokens = Math.min(this.burst, this.tokens + (now - this.lastRefill) / this.minIntervalMs);
    this.lastRefill = now;
  }

  /** Starts the periodic (maxInterval) runs. */
  loop(): void {
    this.armPeriodic();
  }

  private armPeriodic(): void {
    this.periodic?.stop();
    if (this.stopped || this.maxIntervalMs <= 0) return;
    this.periodic = this.clock.setTimer(() => this.tryRun(true), this.maxIntervalMs);
  }

  /** Asks for a run (soon, but no sooner than the rate allows). */
  run(): void {
    if (this.stopped || this.pending) return;
    this.pending = this.clock.setTimer(() => {
      this.pending = undefined;
      this.tryRun(false);
    }, 0);
  }

  private tryRun(periodic: boolean): void {
    if (this.stopped) return;
    this.refill();
    if (this.tokens >= 1 || periodic) {
      if (!periodic) this.tokens -= 1;
      this.pending?.stop();
      this.pending = undefined;
      this.armPeriodic();
      this.fn();
      return;
    }
    const wait = Math.ceil((1 - this.tokens) * this.minIntervalMs);
    this.pending = this.clock.setTimer(() => {
      this.pending = undefined;
      this.tryRun(false);
    }, wait);
  }

  stop(): void {
    this.stopped = true;
    this.pending?.stop();
    this.periodic?.stop();
  }
}
