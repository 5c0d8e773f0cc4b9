/**
 * The node IPAM controller with upstream's default RangeAllocator
 * (pkg/controller/nodeipam/ipam/range_allocator.go).
 *
 * Runs only with --allocate-node-cidrs (as upstream, otherwise it is not
 * started). Each node without `spec.podCIDRs` gets one subnet per
 * --cluster-cidr (one, or an IPv4 and an IPv6 one for dual stack) of
 * --node-cidr-mask-size (24 for IPv4, 64 for IPv6 by default;
 * --node-cidr-mask-size-ipv4/-ipv6 for dual stack), written as
 * `spec.podCIDR` + `spec.podCIDRs`. Subnets of existing nodes and the part of
 * --service-cluster-ip-range inside the cluster CIDR are never handed out;
 * a deleted node's subnets are released. An exhausted range records the
 * CIDRNotAvailable event on the node ("Node <n> status is now: CIDRNotAvailable").
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { recordNodeStatusChange } from '../nodelifecycle/node-util.js';
import type { ControllerContext, ControllerDescriptor, ControllerOptions } from '../types.js';
import { cidrsOverlap, formatCIDR, newCIDRSet, parseCIDR, type CIDRSet, type ParsedCIDR } from './cidr-set.js';

export const NODE_IPAM_CONTROLLER_NAME = 'node-ipam-controller';
/** Upstream's range allocator runs 30 workers (cidrUpdateWorkers). */
export const CIDR_UPDATE_WORKERS = 30;
const CIDR_UPDATE_RETRIES = 3;
/** Event source of upstream's node IPAM events. */
export const CIDR_ALLOCATOR_EVENT_SOURCE = 'cidrAllocator';

type NodeObj = Kube<Node>;

export interface NodeIpamController extends Controller {
  hasSynced(): boolean;
  /** Marks the subnets of existing nodes used (done once by run() before the workers start). */
  recoverFromNodes(): void;
  /** Allocates or occupies the subnets of one node. */
  syncNode(name: string): Promise<void>;
  /** Subnets in use per cluster CIDR (tests). */
  allocatedCounts(): number[];
}

/** The node mask size per cluster CIDR, as kube-controller-manager's setNodeCIDRMaskSizes. */
export function nodeCIDRMaskSizes(o: Pick<ControllerOptions, 'nodeCIDRMaskSize' | 'nodeCIDRMaskSizeIPv4' | 'nodeCIDRMaskSizeIPv6'>, cidrs: ParsedCIDR[]): number[] {
  const dual = cidrs.length > 1;
  return cidrs.map((c) => {
    if (!dual && o.nodeCIDRMaskSize > 0) return o.nodeCIDRMaskSize;
    if (c.bits === 32) return o.nodeCIDRMaskSizeIPv4 > 0 ? o.nodeCIDRMaskSizeIPv4 : 24;
    return o.nodeCIDRMaskSizeIPv6 > 0 ? o.nodeCIDRMaskSizeIPv6 : 64;
  });
}

/** Parses --cluster-cidr: one CIDR, or two of different families (dual stack). */
export function parseClusterCIDRs(s: string): ParsedCIDR[] {
  const parts = s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (!parts.length) throw new Error('--cluster-cidr must be set when --allocate-node-cidrs is true');
  const cidrs = parts.map(parseCIDR);
  if (cidrs.length > 2) throw new Error('len of clusters cidrs is:' + cidrs.length + ', > more than max allowed of 2');
  if (cidrs.length === 2 && cidrs[0]!.bits === cidrs[1]!.bits) throw new Error('ClusterCIDR: dual-stack needs one IPv4 and one IPv6 CIDR');
  return cidrs;
}

class NodeIpam implements NodeIpamController {
  readonly name = NODE_IPAM_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly nodes: Lister<NodeObj>;
  private readonly synced: () => boolean;
  private readonly worker: QueueWorker;
  private readonly sets: CIDRSet[];
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting range CIDR allocator', stopping: 'Shutting down range CIDR allocator', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder(CIDR_ALLOCATOR_EVENT_SOURCE);
    const cidrs = parseClusterCIDRs(ctx.options.clusterCIDR ?? '');
    const masks = nodeCIDRMaskSizes(ctx.options, cidrs);
    this.sets = cidrs.map((c, i) => newCIDRSet(c, masks[i]!));
    for (const svc of (ctx.options.serviceClusterIPRange ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
      let parsed: ParsedCIDR;
      try {
        parsed = parseCIDR(svc);
      } catch (err) {
        this.log.error(err, { cidr: svc }, 'ignoring malformed --service-cluster-ip-range');
        continue;
      }
      for (const set of this.sets) if (cidrsOverlap(set.clusterCIDR, parsed)) set.occupy(parsed);
    }
    this.log.info({ clusterCIDRs: cidrs.map(formatCIDR), nodeMaskSizes: masks }, 'Using range allocator');
    const inf = ctx.informers.nodes();
    this.nodes = newLister(inf.getIndexer());
    this.synced = () => inf.hasSynced();
    this.worker = newQueueWorker({ name: 'cidrallocator_node', clock: ctx.clock, logger: this.log, sync: (n) => this.syncNode(n) });
    inf.addEventHandler({
      onAdd: (n) => this.worker.enqueue(n.metadata?.name ?? ''),
      onUpdate: (_o, n) => this.worker.enqueue(n.metadata?.name ?? ''),
      onDelete: (d) => {
        const n = objectFromDeleted(d);
        if (!n) return;
        this.releaseCIDRs(n);
        this.worker.enqueue(n.metadata?.name ?? '');
      },
    });
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }
  allocatedCounts(): number[] {
    return this.sets.map((s) => s.allocatedCount());
  }

  run(_workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, async () => {
      this.recoverFromNodes();
      await this.worker.run(CIDR_UPDATE_WORKERS, signal);
    });
  }

  recoverFromNodes(): void {
    for (const n of this.nodes.list()) {
      if (!n.spec?.podCIDRs?.length) {
        this.log.v(4).info({ node: n.metadata?.name }, 'Node has no CIDR, ignoring');
        continue;
      }
      this.occupyCIDRs(n);
    }
  }

  private occupyCIDRs(n: NodeObj): void {
    for (const [i, s] of (n.spec?.podCIDRs ?? []).entries()) {
      const set = this.sets[i];
      if (!set) {
        this.log.error({ node: n.metadata?.name, podCIDR: s }, 'node has more podCIDRs than cluster CIDRs');
        continue;
      }
      try {
        set.occupy(parseCIDR(s));
      } catch (err) {
        this.log.error(err, { node: n.metadata?.name, podCIDR: s }, `failed to mark cidr[${s}] at idx [${i}] as occupied for node`);
      }
    }
  }

  private releaseCIDRs(n: NodeObj): void {
    for (const [i, s] of (n.spec?.podCIDRs ?? []).entries()) {
      try {
        this.sets[i]?.release(parseCIDR(s));
        this.log.v(4).info({ node: n.metadata?.name, podCIDR: s }, 'Release CIDR for node');
      } catch (err) {
        this.log.error(err, { node: n.metadata?.name, podCIDR: s }, 'error when releasing CIDR');
      }
    }
  }

  async syncNode(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) {
      this.log.v(3).info({ node: name }, 'node has been deleted');
      return;
    }
    if (node.metadata?.deletionTimestamp) {
      this.releaseCIDRs(node);
      return;
    }
    if (node.spec?.podCIDRs?.length) {
      this.occupyCIDRs(node);
      return;
    }
    const allocated: ParsedCIDR[] = [];
    for (const [i, set] of this.sets.entries()) {
      try {
        allocated.push(set.allocateNext());
      } catch (err) {
        allocated.forEach((c, j) => this.sets[j]!.release(c));
        recordNodeStatusChange(this.recorder, node, 'CIDRNotAvailable');
        throw new Error(`failed to allocate cidr from cluster cidr at idx:${i}: ${(err as Error).message}`, { cause: err });
      }
    }
    await this.updateCIDRsAllocation(name, allocated);
  }

  private async updateCIDRsAllocation(name: string, allocated: ParsedCIDR[]): Promise<void> {
    const cidrs = allocated.map(formatCIDR);
    const node = this.nodes.get(name);
    const release = () => allocated.forEach((c, i) => this.sets[i]!.release(c));
    if (!node) {
      release();
      return;
    }
    const current = node.spec?.podCIDRs ?? [];
    if (current.length === cidrs.length && current.every((c, i) => c === cidrs[i])) return;
    if (current.length) {
      this.log.error({ node: name, podCIDRs: current }, 'Node already has a CIDR allocated. Releasing the new one');
      release();
      return;
    }
    let lastErr: unknown;
    for (let i = 0; i < CIDR_UPDATE_RETRIES; i++) {
      try {
        await this.ctx.client.resource<NodeObj>(GVR.nodes).patch(name, 'strategic', { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } });
        this.log.info({ node: name, podCIDRs: cidrs }, 'Set node PodCIDR');
        return;
      } catch (err) {
        lastErr = err;
      }
    }
    this.log.error(lastErr, { node: name, podCIDRs: cidrs }, 'Failed to update node PodCIDR after multiple attempts');
    recordNodeStatusChange(this.recorder, node, 'CIDRAssignmentFailed');
    release();
    throw lastErr;
  }
}

export function newNodeIpamController(ctx: ControllerContext): NodeIpamController {
  return new NodeIpam(ctx);
}

/** What runs when --allocate-node-cidrs is false: nothing (upstream does not start the controller). */
function notStarted(ctx: ControllerContext): Controller {
  const log = ctx.logger(NODE_IPAM_CONTROLLER_NAME);
  return {
    name: NODE_IPAM_CONTROLLER_NAME,
    healthy: () => true,
    async run(_w, signal) {
      log.info({ controller: NODE_IPAM_CONTROLLER_NAME }, 'Skipping node-ipam-controller: --allocate-node-cidrs is false');
      if (signal.aborted) return;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

export const descriptor: ControllerDescriptor = {
  name: NODE_IPAM_CONTROLLER_NAME,
  aliases: ['nodeipam'],
  requiredResources: [GVR.nodes],
  defaultWorkers: 1,
  create: (ctx) => (ctx.options.allocateNodeCIDRs ? newNodeIpamController(ctx) : notStarted(ctx)),
};
