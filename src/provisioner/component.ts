/**
 * The local-path provisioner as a component of its own (as a CSI driver's
 * controller sidecars run beside, not inside, kube-controller-manager): its
 * own client and user agent, informers and event recorder. `kcm up` starts
 * it on the controller side; `kcm local-path-provisioner` runs it alone.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { newKubeClient } from '../client/client.js';
import type { RestConfig } from '../client/rest-config.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { newEventBroadcaster } from '../tools/record/index.js';
import { realClock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import { LOCAL_PATH_PROVISIONER } from './constants.js';
import { eventSourceComponent, newLocalPathProvisioner } from './local-path-provisioner.js';
import { newVolumeDirs } from './volume-dirs.js';

export const PROVISIONER_USER_AGENT = 'kcm-local-path-provisioner/v0.1.0';

export interface ProvisionerComponentOptions {
  /** Where the API server is; the user agent is set here. */
  restConfig: RestConfig;
  /** Volume directories live in `<volumesDir>/<pv>` (kcm up: `<data-dir>/volumes`). */
  volumesDir: string;
  logger: Logger;
  /** Called once the caches synced and the workers run. */
  onStarted?: () => void;
}

/** The directory kcm up keeps volumes in. */
export function volumesDirOf(dataDir: string): string {
  return join(dataDir, 'volumes');
}

/** Runs until `signal` aborts; resolves after everything stopped. */
export async function runProvisionerComponent(o: ProvisionerComponentOptions, signal: AbortSignal): Promise<void> {
  const rest: RestConfig = { ...o.restConfig, userAgent: PROVISIONER_USER_AGENT };
  const client = newKubeClient(rest, { logger: o.logger });
  const informers = newSharedInformerFactory(client, { clock: realClock });
  const broadcaster = newEventBroadcaster({ client, clock: realClock, logger: o.logger });
  const provisioner = newLocalPathProvisioner({
    client,
    informers,
    recorder: broadcaster.newRecorder({ component: eventSourceComponent(LOCAL_PATH_PROVISIONER, hostname()) }),
    clock: realClock,
    logger: o.logger,
    dirs: newVolumeDirs(o.volumesDir),
  });
  try {
    informers.start(signal);
    o.onStarted?.();
    await provisioner.run(signal);
  } finally {
    await informers.shutdown();
    await broadcaster.shutdown();
    await client.close().catch(() => undefined);
  }
}
