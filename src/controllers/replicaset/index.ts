export { descriptor as replicaSetDescriptor } from './replicaset-controller.js';
export { descriptor as replicationControllerDescriptor } from './replicationcontroller-controller.js';
export { newReplicaSetController, BURST_REPLICAS, type ReplicaSetController, type ReplicaSetControllerOptions } from './replica-set.js';
export { replicaSetKind, replicationControllerKind, type ReplicaSetKind, type ReplicaSetLike } from './kind.js';
export { slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE, type SlowStartResult } from './slow-start.js';
export { calculateStatus, nextAvailabilityCheckMs, updateReplicaSetStatus, REPLICA_FAILURE } from './status.js';
