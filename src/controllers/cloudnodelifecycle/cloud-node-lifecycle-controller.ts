/**
 * The cloud node lifecycle controller (k8s.io/cloud-provider's
 * controllers/nodelifecycle, `cloud-node-lifecycle-controller`): every
 * `--node-monitor-period` it looks at each node that is not Ready and asks
 * the cloud about its instance. A shut-down instance gets the taint
 * `node.cloudprovider.kubernetes.io/shutdown:NoSchedule`; an instance that no
 * longer exists gets its Node deleted (event `DeletingNode` "Deleting node X
 * because it does not exist in the cloud provider"). A Ready node loses the
 * shutdown taint.
 */
import type { Node, Taint } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { InstancesV2 } from '../../cloudprovider/cloud.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { until } from '../../util/wait/backoff.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const CLOUD_NODE_LIFECYCLE_CONTROLLER_NAME = 'cloud-node-lifecycle-controller';
export const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
export const SHUTDOWN_TAINT: Taint = { key: SHUTDOWN_TAINT_KEY, effect: 'NoSchedule' };

export interface CloudNodeLifecycleController extends Controller {
  /** One pass over every node (the periodic loop's body). */
  monitorNodes(): Promise<void>;
  hasSynced(): boolean;
}

function readyStatus(node: Node): string | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

class CloudNodeLifecycle implements CloudNodeLifecycleController {
  readonly name = CLOUD_NODE_LIFECYCLE_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly synced: () => boolean;
  private readonly recorder: EventRecorder;
  private busy = false;

  constructor(private readonly ctx: ControllerContext, private readonly instances: InstancesV2) {
    this.log = ctx.logger(this.name);
    this.recorder = ctx.recorder('cloud-node-lifecycle-controller');
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting CloudNodeLifecycleController', stopping: 'Shutting down CloudNodeLifecycleController', fields: { controller: this.name } });
    const inf = ctx.informers.nodes();
    this.nodes = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({});
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy();
  }

  run(_workers: number, signal: AbortSignal): Promise<void> {
    const period = this.ctx.options.nodeMonitorPeriodMs || 5_000;
    return this.lifecycle.run(signal, this.synced, () => until(() => this.monitorNodes(), period, signal, this.ctx.clock, { onError: (err) => this.log.error(err, 'monitoring nodes failed') }));
  }

  async monitorNodes(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (const node of this.nodes.list()) await this.monitorNode(node);
    } finally {
      this.busy = false;
    }
  }

  private async monitorNode(node: Node): Promise<void> {
    const name = node.metadata?.name ?? '';
    const hasShutdownTaint = node.spec?.taints?.some((t) => t.key === SHUTDOWN_TAINT_KEY) ?? false;
    if (readyStatus(node) === 'True') {
      if (hasShutdownTaint) await this.setShutdownTaint(name, false);
      return;
    }
    let shutdown: boolean;
    try {
      shutdown = await this.instances.instanceShutdown(node);
    } catch (err) {
      this.log.error(err, { node: name }, 'Error checking if node is shutdown');
      shutdown = false;
    }
    if (shutdown) {
      if (!hasShutdownTaint) await this.setShutdownTaint(name, true);
      // Shut down, not gone: keep the Node.
      return;
    }
    let exists: boolean;
    try {
      exists = await this.instances.instanceExists(node);
    } catch (err) {
      this.log.error(err, { node: name }, 'Error checking if node exists');
      return;
    }
    if (exists) return;
    this.log.v(2).info({ node: name }, 'Deleting node since it is no longer present in cloud provider');
    this.recorder.eventf({ kind: 'Node', name, uid: node.metadata?.uid ?? '', namespace: '' }, 'Normal', 'DeletingNode', 'Deleting node %s because it does not exist in the cloud provider', name);
    try {
      await this.ctx.client.resource(GVR.nodes).delete(name);
    } catch (err) {
      if (!isNotFound(err)) this.log.error(err, { node: name }, 'unable to delete node');
    }
  }

  private async setShutdownTaint(name: string, present: boolean): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const cur = await this.ctx.client.resource(GVR.nodes).get(name) as Kube<Node>;
        const taints = (cur.spec?.taints ?? []).filter((t) => t.key !== SHUTDOWN_TAINT_KEY);
        if (present) taints.push({ ...SHUTDOWN_TAINT });
        const next = deepCopy(cur);
        next.spec ??= {};
        if (taints.length > 0) next.spec.taints = taints;
        else delete next.spec.taints;
        await this.ctx.client.resource(GVR.nodes).update(next);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (isConflict(err) && attempt < 4) continue;
        this.log.error(err, { node: name }, present ? 'failed to apply shutdown taint to node' : 'failed to remove shutdown taint from node');
        return;
      }
    }
  }
}

export function newCloudNodeLifecycleController(ctx: ControllerContext): CloudNodeLifecycleController {
  if (!ctx.cloud) throw new Error('no cloud provider provided');
  const instances = ctx.cloud.instancesV2();
  if (!instances) throw new Error('the cloud provider does not support instances');
  return new CloudNodeLifecycle(ctx, instances);
}

/** kube-controller-manager's `cloud-node-lifecycle-controller`. */
export const descriptor: ControllerDescriptor = {
  name: CLOUD_NODE_LIFECYCLE_CONTROLLER_NAME,
  aliases: ['cloud-node-lifecycle'],
  requiredResources: [GVR.nodes],
  defaultWorkers: 1,
  create: (ctx) => newCloudNodeLifecycleController(ctx),
};
