/**
 * Storage out of the box for `kcm up`: the default StorageClass `standard`
 * of the local-path provisioner, created once per data directory (as kind
 * applies its storage manifest once at cluster creation: a class the user
 * deletes or edits later stays as they left it). With `--storage memory` the
 * cluster starts empty every time, so the class is created at every start.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GVR } from '../api/gvr.js';
import { isAlreadyExists } from '../client/errors.js';
import type { Client } from '../client/interfaces.js';
import { defaultStorageClass } from '../provisioner/default-class.js';
import type { Logger } from '../util/log/logger.js';

/** Marks a data directory whose default StorageClass was created. */
export const STORAGE_CLASS_MARKER = 'default-storage-class-created';

/** Creates the default StorageClass unless this data directory already had it; retries until created or `signal` aborts. */
export async function ensureDefaultStorageClass(client: Client, dataDir: string, durable: boolean, signal: AbortSignal, log: Logger): Promise<void> {
  const marker = join(dataDir, STORAGE_CLASS_MARKER);
  if (durable && existsSync(marker)) return;
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      await client.resource(GVR.storageClasses).create(defaultStorageClass() as never);
      log.info({ storageClass: 'standard' }, 'created the default StorageClass');
    } catch (err) {
      if (!isAlreadyExists(err)) {
        log.v(2).info({ error: (err as Error).message, attempt }, 'cannot create the default StorageClass yet');
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2000)));
        continue;
      }
    }
    if (durable) writeFileSync(marker, 'The default StorageClass "standard" was created; kcm up does not create it again.\n', { mode: 0o600 });
    return;
  }
}
