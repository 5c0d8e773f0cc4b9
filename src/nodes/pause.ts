/**
 * Node failure on demand: `kcm.dev/heartbeat: paused` on a simulated node
 * stops its lease and status updates (and its pods' updates) until removed.
 */
import type { Client } from '../client/interfaces.js';
import { typed } from '../client/typed.js';
import { HEARTBEAT_ANNOTATION } from './node-object.js';

/** Sets (paused = true) or removes the heartbeat annotation of node `name`. Throws the client's error (NotFound, ...). */
export async function setHeartbeatPaused(client: Client, name: string, paused: boolean): Promise<void> {
  await typed(client)
    .nodes()
    .patch(name, 'merge', { metadata: { annotations: { [HEARTBEAT_ANNOTATION]: paused ? 'paused' : null } } });
}
