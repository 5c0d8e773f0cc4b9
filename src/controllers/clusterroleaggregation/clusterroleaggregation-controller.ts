/**
 * The ClusterRole aggregation controller (pkg/controller/clusterroleaggregation):
 * a ClusterRole with `aggregationRule.clusterRoleSelectors` gets as its
 * rules the union of the rules of every other ClusterRole matched by a
 * selector, in selector order, each selector's roles by name, first
 * occurrence of each rule kept. Any ClusterRole change re-syncs every
 * aggregated role. The result is written with an update (upstream applies
 * it server-side with field manager clusterrole-aggregation-controller and
 * falls back to an update; the stored outcome is the same).
 */
import type { ClusterRole, PolicyRule } from 'kubernetes-types/rbac/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromLabelSelector } from '../../api/labels.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const CLUSTERROLE_AGGREGATION_CONTROLLER_NAME = 'clusterrole-aggregation-controller';

type Role = Kube<ClusterRole>;

export interface ClusterRoleAggregationController extends Controller {
  syncClusterRole(name: string): Promise<void>;
  hasSynced(): boolean;
}

/** A canonical string of a rule: semantic equality (nil and empty lists alike). */
function ruleKey(r: PolicyRule): string {
  return JSON.stringify([r.verbs ?? [], r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? []]);
}

/** The aggregated rules of `role` given every ClusterRole (upstream's order and deduplication). */
export function aggregateRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const ls of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const sel = selectorFromLabelSelector(ls);
    const matched = all
      .filter((r) => sel.matches(r.metadata?.labels ?? {}))
      .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : (a.metadata?.name ?? '') > (b.metadata?.name ?? '') ? 1 : 0));
    for (const r of matched) {
      if (r.metadata?.name === role.metadata?.name) continue;
      for (const rule of r.rules ?? []) {
        const k = ruleKey(rule);
        if (seen.has(k)) continue;
        seen.add(k);
        out.push(rule);
      }
    }
  }
  return out;
}

class Aggregator implements ClusterRoleAggregationController {
  readonly name = CLUSTERROLE_AGGREGATION_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly roles: Lister<Role>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting ClusterRoleAggregator controller', stopping: 'Shutting down ClusterRoleAggregator controller' };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({ name: 'ClusterRoleAggregator', clock: ctx.clock, logger: this.log, sync: (k) => this.syncClusterRole(k) });
    const inf = ctx.informers.clusterRoles();
    this.roles = newLister(inf.getIndexer());
    const enqueueAll = () => {
      for (const r of this.roles.list()) if (r.aggregationRule) this.worker.enqueue(r.metadata?.name ?? '');
    };
    const reg = inf.addEventHandler({ onAdd: enqueueAll, onUpdate: enqueueAll, onDelete: enqueueAll });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async syncClusterRole(name: string): Promise<void> {
    const role = this.roles.get(name);
    if (!role?.aggregationRule) return;
    const rules = aggregateRules(role, this.roles.list());
    const current = role.rules ?? [];
    if (current.length === rules.length && current.every((r, i) => ruleKey(r) === ruleKey(rules[i]!))) return;
    const next = deepCopy(role);
    next.rules = rules;
    await this.ctx.client.resource<Role>(GVR.clusterRoles).update(next);
    this.log.v(2).info({ clusterRole: name, rules: rules.length }, 'aggregated cluster role rules');
  }
}

export function newClusterRoleAggregationController(ctx: ControllerContext): ClusterRoleAggregationController {
  return new Aggregator(ctx);
}

/** kube-controller-manager runs it with 5 workers. */
export const descriptor: ControllerDescriptor = {
  name: CLUSTERROLE_AGGREGATION_CONTROLLER_NAME,
  aliases: ['clusterrole-aggregation'],
  requiredResources: [GVR.clusterRoles],
  defaultWorkers: 5,
  create: (ctx) => newClusterRoleAggregationController(ctx),
};
