/**
 * The route controller (k8s.io/cloud-provider's controllers/route,
 * `node-route-controller`): makes the cloud's routes match the nodes' pod
 * CIDRs. Every `--route-reconciliation-period` (10 s), and when a node's pod
 * CIDRs change, it creates a route for each `spec.podCIDRs` entry without one
 * (name hint: the node's UID; event FailedToCreateRoute on failure) and
 * deletes routes inside `--cluster-cidr` whose node is gone or no longer has
 * that CIDR, or that the cloud marks blackhole. A node whose routes all exist
 * gets `NetworkUnavailable=False` (reason RouteCreated, "RouteController
 * created a route"); one whose route failed gets `True` (NoRouteCreated). A
 * node without a pod CIDR yet is skipped.
 *
 * kube-controller-manager starts it only with `--allocate-node-cidrs` and
 * `--configure-cloud-routes` (both needed; see descriptor).
 */
import type { Node, NodeCondition } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Route, Routes } from '../../cloudprovider/cloud.js';
import { isNotFound } from '../../client/errors.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { until } from '../../util/wait/backoff.js';
import { cidrsOverlap, parseCIDR, type ParsedCIDR } from '../nodeipam/cidr-set.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const NODE_ROUTE_CONTROLLER_NAME = 'node-route-controller';
export const DEFAULT_ROUTE_RECONCILIATION_PERIOD_MS = 10_000;

export interface NodeRouteController extends Controller {
  /** One reconciliation of routes against nodes. */
  reconcileNodeRoutes(): Promise<void>;
  hasSynced(): boolean;
}

function podCIDRs(node: Node): string[] {
  const list = node.spec?.podCIDRs && node.spec.podCIDRs.length > 0 ? node.spec.podCIDRs : node.spec?.podCIDR ? [node.spec.podCIDR] : [];
  return [...list];
}

class NodeRoute implements NodeRouteController {
  readonly name = NODE_ROUTE_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly synced: () => boolean;
  private readonly recorder: EventRecorder;
  private readonly clusterName: string;
  private readonly clusterCIDRs: ParsedCIDR[];
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;

  constructor(private readonly ctx: ControllerContext, private readonly routes: Routes) {
    this.log = ctx.logger(this.name);
    this.recorder = ctx.recorder('route_controller');
    this.clusterName = String(ctx.options.extra?.['cluster-name'] ?? 'kubernetes');
    this.clusterCIDRs = (ctx.options.clusterCIDR ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => parseCIDR(s));
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting route controller', stopping: 'Shutting down route controller', fields: { controller: this.name } });
    const inf = ctx.informers.nodes();
    this.nodes = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({
      onAdd: (n) => {
        if (podCIDRs(n as Node).length > 0) this.trigger();
      },
      onUpdate: (o, n) => {
        if (podCIDRs(o as Node).join(',') !== podCIDRs(n as Node).join(',')) this.trigger();
      },
      onDelete: () => this.trigger(),
    });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy();
  }

  run(_workers: number, signal: AbortSignal): Promise<void> {
    const period = Number(this.ctx.options.extra?.['route-reconciliation-period'] ?? DEFAULT_ROUTE_RECONCILIATION_PERIOD_MS) || DEFAULT_ROUTE_RECONCILIATION_PERIOD_MS;
    return this.lifecycle.run(signal, this.synced, async () => {
      this.started = true;
      await until(() => this.reconcileNodeRoutes(), period, signal, this.ctx.clock, { onError: (err) => this.log.error(err, 'Couldn\'t reconcile node routes') });
      this.started = false;
      await this.running;
    });
  }

  /** A node event while running: one more reconciliation (at most one at a time). */
  private trigger(): void {
    if (!this.started) return;
    void this.reconcileNodeRoutes().catch((err: unknown) => this.log.error(err, 'Couldn\'t reconcile node routes'));
  }

  reconcileNodeRoutes(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        const routeList = await this.routes.listRoutes(this.clusterName);
        await this.reconcile(this.nodes.list(), routeList);
      } while (this.again);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  private responsibleFor(cidr: string): boolean {
    let c: ParsedCIDR;
    try {
      c = parseCIDR(cidr);
    } catch {
      return false;
    }
    if (this.clusterCIDRs.length === 0) return true;
    return this.clusterCIDRs.some((cc) => cc.bits === c.bits && c.prefix >= cc.prefix && cidrsOverlap(c, cc));
  }

  private async reconcile(nodes: Node[], routeList: Route[]): Promise<void> {
    const byNode = new Map<string, Map<string, Route>>();
    for (const r of routeList) {
      let m = byNode.get(r.targetNode);
      if (!m) byNode.set(r.targetNode, (m = new Map()));
      m.set(r.destinationCIDR, r);
    }
    const nodeCIDRs = new Map<string, Set<string>>();
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      const cidrs = podCIDRs(node);
      // Not assigned a CIDR yet: nothing to route.
      if (cidrs.length === 0) continue;
      nodeCIDRs.set(name, new Set(cidrs));
      let allCreated = true;
      for (const cidr of cidrs) {
        const existing = byNode.get(name)?.get(cidr);
        if (existing && !existing.blackhole) continue;
        if (existing) continue; // a blackhole route is deleted below and created on the next pass
        const nameHint = node.metadata?.uid ?? name;
        const started = this.ctx.clock.now();
        try {
          await this.routes.createRoute(this.clusterName, nameHint, { name: '', targetNode: name, destinationCIDR: cidr });
          this.log.info({ node: name, cidr, ms: this.ctx.clock.since(started) }, 'Created route for node');
        } catch (err) {
          allCreated = false;
          const msg = `Could not create route ${nameHint} ${cidr} for node ${name} after ${((this.ctx.clock.now() - started) / 1000).toFixed(3)}s: ${(err as Error).message}`;
          this.recorder.event({ kind: 'Node', name, uid: node.metadata?.uid ?? '', namespace: '' }, 'Warning', 'FailedToCreateRoute', msg);
          this.log.info({ node: name }, msg);
        }
      }
      await this.updateNetworkingCondition(node, allCreated);
    }
    for (const r of routeList) {
      if (!this.responsibleFor(r.destinationCIDR)) continue;
      if (r.blackhole || !nodeCIDRs.get(r.targetNode)?.has(r.destinationCIDR)) {
        try {
          await this.routes.deleteRoute(this.clusterName, r);
          this.log.info({ route: r.name, cidr: r.destinationCIDR, node: r.targetNode }, 'Deleted route');
        } catch (err) {
          this.log.error(err, { route: r.name, cidr: r.destinationCIDR }, 'Could not delete route');
        }
      }
    }
  }

  private async updateNetworkingCondition(node: Node, routesCreated: boolean): Promise<void> {
    const cur = node.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
    if (routesCreated && cur?.status === 'False') return;
    if (!routesCreated && cur?.status === 'True') return;
    const now = rfc3339(this.ctx.clock.now());
    const cond: NodeCondition = routesCreated
      ? { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route', lastTransitionTime: now, lastHeartbeatTime: now }
      : { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'RouteController failed to create a route', lastTransitionTime: now, lastHeartbeatTime: now };
    try {
      await this.ctx.client.resource(GVR.nodes).patch(node.metadata!.name!, 'strategic', { status: { conditions: [cond] } }, { subresource: 'status' });
    } catch (err) {
      if (!isNotFound(err)) this.log.error(err, { node: node.metadata?.name }, 'Error updating node');
    }
  }
}

export function newNodeRouteController(ctx: ControllerContext): NodeRouteController {
  if (!ctx.cloud) throw new Error('no cloud provider provided');
  if (!ctx.options.allocateNodeCIDRs || ctx.options.extra?.['configure-cloud-routes'] === false) {
    throw new Error(`Will not configure cloud provider routes for allocate-node-cidrs: ${ctx.options.allocateNodeCIDRs}, configure-cloud-routes: ${ctx.options.extra?.['configure-cloud-routes'] ?? true}.`);
  }
  const routes = ctx.cloud.routes();
  if (!routes) throw new Error('configure-cloud-routes is set, but cloud provider does not support routes. Will not configure cloud provider routes.');
  return new NodeRoute(ctx, routes);
}

/** kube-controller-manager's `node-route-controller` (alias `route`). */
export const descriptor: ControllerDescriptor = {
  name: NODE_ROUTE_CONTROLLER_NAME,
  aliases: ['route'],
  requiredResources: [GVR.nodes],
  defaultWorkers: 1,
  create: (ctx) => newNodeRouteController(ctx),
};
