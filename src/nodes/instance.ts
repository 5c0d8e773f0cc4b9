/**
 * The simulated nodes as instances of kcm up's local cloud: `kcm nodes
 * delete-instance NAME` / `shutdown-instance NAME` / `start-instance NAME`
 * set (or remove) the annotation `kcm.dev/instance` on the Node. The local
 * cloud provider reads it (InstanceExists, InstanceShutdown) and the simulated
 * kubelet of that node stops; cloud-node-lifecycle-controller then deletes
 * the Node (deleted) or taints it `node.cloudprovider.kubernetes.io/shutdown`
 * (shut down) once it is no longer Ready.
 */
import type { Client } from '../client/interfaces.js';
import { typed } from '../client/typed.js';
import { INSTANCE_ANNOTATION } from './node-object.js';

export type InstanceState = 'deleted' | 'shutdown' | 'running';

/** Records `state` for node `name`'s instance. Throws the client's error (NotFound, ...). */
export async function setInstanceState(client: Client, name: string, state: InstanceState): Promise<void> {
  await typed(client)
    .nodes()
    .patch(name, 'merge', { metadata: { annotations: { [INSTANCE_ANNOTATION]: state === 'running' ? null : state } } });
}
