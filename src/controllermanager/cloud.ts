/**
 * `--cloud-provider` and `--cloud-config` of the controller manager (and of
 * `kcm up`, which adds the local cloud's own settings).
 */
import { readFileSync } from 'node:fs';
import type { CloudProvider } from '../cloudprovider/cloud.js';
import { initCloudProvider } from '../cloudprovider/registry.js';
import { FlagError } from '../cmd/flags.js';

/** The provider of `--cloud-provider` with `--cloud-config`'s text; throws FlagError with upstream's one-line message. */
export function newCloudProvider(name: string, configFile: string, options?: Record<string, string>): CloudProvider | undefined {
  let configText = '';
  if (configFile) {
    try {
      configText = readFileSync(configFile, 'utf8');
    } catch (err) {
      throw new FlagError(`couldn't open cloud provider configuration ${configFile}: ${(err as Error).message}`, { cause: err });
    }
  }
  try {
    return initCloudProvider(name, { configText, ...(options ? { options } : {}) });
  } catch (err) {
    const msg = (err as Error).message;
    throw new FlagError(msg.startsWith('cloud provider could not be initialized') ? msg : `cloud provider could not be initialized: ${msg}`, { cause: err });
  }
}
