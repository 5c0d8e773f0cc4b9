/**
 * The cloud node controller (k8s.io/cloud-provider's controllers/node,
 * `cloud-node-controller`, upstream part of cloud-controller-manager):
 * initialises the nodes a kubelet registered with the taint
 * `node.cloudprovider.kubernetes.io/uninitialized` (kubelet
 * `--cloud-provider=external`). From the cloud's InstanceMetadata it sets
 * `status.addresses`, `spec.providerID` (when empty), the labels
 * `node.kubernetes.io/instance-type`, `topology.kubernetes.io/zone`,
 * `topology.kubernetes.io/region` (and their deprecated beta twins), then
 * removes the taint; event `Synced` "Node synced successfully". Every
 * 5 minutes it refreshes the addresses of initialised nodes from the cloud.
 */
import type { Node, NodeAddress } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { InstanceMetadata, InstancesV2 } from '../../cloudprovider/cloud.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import { jitter, until } from '../../util/wait/backoff.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** cloud-provider's UpdateNodeSpecBackoff: Steps 20, Duration 50 ms, Jitter 1.0. */
const UPDATE_NODE_SPEC_STEPS = 20;
const UPDATE_NODE_SPEC_RETRY_MS = 50;

export const CLOUD_NODE_CONTROLLER_NAME = 'cloud-node-controller';
export const UNINITIALIZED_TAINT_KEY = 'node.cloudprovider.kubernetes.io/uninitialized';
export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const LABEL_INSTANCE_TYPE_BETA = 'beta.kubernetes.io/instance-type';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_ZONE_BETA = 'failure-domain.beta.kubernetes.io/zone';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_REGION_BETA = 'failure-domain.beta.kubernetes.io/region';
/** Upstream nodeStatusUpdateFrequency of cloud-controller-manager. */
export const NODE_STATUS_UPDATE_PERIOD_MS = 5 * 60_000;

export interface CloudNodeController extends Controller {
  syncNode(name: string): Promise<void>;
  /** Refreshes the addresses of every initialised node (the periodic loop's body). */
  updateNodeStatus(): Promise<void>;
  hasSynced(): boolean;
}

export function hasUninitializedTaint(node: Node): boolean {
  return node.spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT_KEY) ?? false;
}

function sameAddresses(a: readonly NodeAddress[] | undefined, b: readonly NodeAddress[]): boolean {
  const key = (xs: readonly NodeAddress[]) => xs.map((x) => `${x.type}=${x.address}`).join(',');
  return key(a ?? []) === key(b);
}

class CloudNode implements CloudNodeController {
  readonly name = CLOUD_NODE_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;
  private readonly worker: QueueWorker;
  private readonly nodes: Lister<Kube<Node>>;
  private readonly synced: () => boolean;
  private readonly recorder: EventRecorder;

  constructor(private readonly ctx: ControllerContext, private readonly instances: InstancesV2) {
    this.log = ctx.logger(this.name);
    this.recorder = ctx.recorder('cloud-node-controller');
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting cloud node controller', stopping: 'Shutting down cloud node controller', fields: { controller: this.name } });
    this.worker = newQueueWorker({ name: 'cloud-node', clock: ctx.clock, logger: this.log, sync: (key) => this.syncNode(key) });
    const inf = ctx.informers.nodes();
    this.nodes = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({
      onAdd: (n) => {
        if (hasUninitializedTaint(n as Node)) this.worker.enqueue(n.metadata?.name ?? '');
      },
      onUpdate: (_o, n) => {
        if (hasUninitializedTaint(n as Node)) this.worker.enqueue(n.metadata?.name ?? '');
      },
    });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () =>
      Promise.all([
        this.worker.run(workers, signal),
        this.ctx.clock
          .sleep(NODE_STATUS_UPDATE_PERIOD_MS, signal)
          .then(() => until(() => this.updateNodeStatus(), NODE_STATUS_UPDATE_PERIOD_MS, signal, this.ctx.clock, { onError: (err) => this.log.error(err, 'node status update failed') }))
          .catch(() => undefined),
      ]),
    );
  }

  async syncNode(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node || !hasUninitializedTaint(node)) return;
    let md: InstanceMetadata;
    try {
      md = await this.instances.instanceMetadata(node);
    } catch (err) {
      this.log.error(err, { node: name }, 'failed to get instance metadata');
      throw err;
    }
    let updated: Kube<Node>;
    // Labels, providerID and the taint in one update; a conflict re-reads the node and tries again, as upstream's
    // RetryOnConflict(UpdateNodeSpecBackoff): 20 tries, 50-100 ms apart (the kubelet writes its status meanwhile).
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await this.ctx.clock.sleep(jitter(UPDATE_NODE_SPEC_RETRY_MS, 1));
      const cur = attempt === 0 ? node : await this.ctx.client.resource(GVR.nodes).get(name);
      const next = deepCopy(cur) as Node & { metadata: { name: string } };
      const labels = (next.metadata.labels ??= {});
      if (!next.spec?.providerID && md.providerID) (next.spec ??= {}).providerID = md.providerID;
      if (md.instanceType) {
        labels[LABEL_INSTANCE_TYPE] = md.instanceType;
        labels[LABEL_INSTANCE_TYPE_BETA] = md.instanceType;
      }
      if (md.zone) {
        labels[LABEL_ZONE] = md.zone;
        labels[LABEL_ZONE_BETA] = md.zone;
      }
      if (md.region) {
        labels[LABEL_REGION] = md.region;
        labels[LABEL_REGION_BETA] = md.region;
      }
      const taints = (next.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT_KEY);
      if (next.spec) {
        if (taints.length > 0) next.spec.taints = taints;
        else delete next.spec.taints;
      }
      try {
        updated = await this.ctx.client.resource<Kube<Node>>(GVR.nodes).update(next as Kube<Node>);
        break;
      } catch (err) {
        if (isNotFound(err)) return;
        if (attempt + 1 >= UPDATE_NODE_SPEC_STEPS || !isConflict(err)) throw err;
      }
    }
    // Then the addresses, as upstream's initializeNode (updateNodeAddress after the update).
    await this.patchAddresses(updated, md.nodeAddresses);
    this.log.info({ node: name }, 'Successfully initialized node with cloud provider');
    this.recorder.event({ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? name }, 'Normal', 'Synced', 'Node synced successfully');
  }

  private async patchAddresses(node: Node, addresses: NodeAddress[]): Promise<void> {
    if (addresses.length === 0 || sameAddresses(node.status?.addresses, addresses)) return;
    try {
      await this.ctx.client.resource(GVR.nodes).patch(node.metadata!.name!, 'merge', { status: { addresses } }, { subresource: 'status' });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async updateNodeStatus(): Promise<void> {
    for (const node of this.nodes.list()) {
      if (hasUninitializedTaint(node)) continue;
      try {
        if (!(await this.instances.instanceExists(node))) continue;
        const md = await this.instances.instanceMetadata(node);
        await this.patchAddresses(node, md.nodeAddresses);
      } catch (err) {
        this.log.error(err, { node: node.metadata?.name }, 'failed to update node addresses');
      }
    }
  }
}

export function newCloudNodeController(ctx: ControllerContext): CloudNodeController {
  if (!ctx.cloud) throw new Error('no cloud provider provided');
  const instances = ctx.cloud.instancesV2();
  if (!instances) throw new Error('the cloud provider does not support instances');
  return new CloudNode(ctx, instances);
}

/** cloud-controller-manager's `cloud-node-controller`; kcm runs it beside the others when a cloud provider is set. */
export const descriptor: ControllerDescriptor = {
  name: CLOUD_NODE_CONTROLLER_NAME,
  aliases: ['cloud-node'],
  requiredResources: [GVR.nodes],
  defaultWorkers: 1,
  create: (ctx) => newCloudNodeController(ctx),
};
