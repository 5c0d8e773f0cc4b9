/**
 * Registry entry of the ReplicationController controller
 * (`replicationcontroller-controller`, --concurrent-rc-syncs, default 5):
 * the ReplicaSet controller on core/v1 ReplicationControllers.
 */
import { GVR } from '../../api/gvr.js';
import type { ControllerDescriptor } from '../types.js';
import { replicationControllerKind } from './kind.js';
import { newReplicaSetController } from './replica-set.js';

export const descriptor: ControllerDescriptor = {
  name: 'replicationcontroller-controller',
  aliases: ['replicationcontroller'],
  requiredResources: [GVR.replicationControllers, GVR.pods],
  defaultWorkers: 5,
  create: (ctx) => newReplicaSetController(replicationControllerKind, ctx, 'replicationcontroller-controller'),
};
