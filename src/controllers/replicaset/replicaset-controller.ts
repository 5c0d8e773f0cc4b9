/**
 * Registry entry of the ReplicaSet controller (kube-controller-manager's
 * `replicaset-controller`, --concurrent-replicaset-syncs, default 5).
 */
import { GVR } from '../../api/gvr.js';
import type { ControllerDescriptor } from '../types.js';
import { replicaSetKind } from './kind.js';
import { newReplicaSetController } from './replica-set.js';

export const descriptor: ControllerDescriptor = {
  name: 'replicaset-controller',
  aliases: ['replicaset'],
  requiredResources: [GVR.replicaSets, GVR.pods],
  defaultWorkers: 5,
  create: (ctx) => newReplicaSetController(replicaSetKind, ctx, 'replicaset-controller'),
};
