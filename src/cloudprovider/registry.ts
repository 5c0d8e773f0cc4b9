/**
 * Cloud providers by name (k8s.io/cloud-provider's plugins.go):
 * `--cloud-provider=NAME` picks one. `external` means an external cloud
 * controller manager runs the cloud controllers, so kcm does not.
 */
import type { CloudProvider } from './cloud.js';
import { LOCAL_PROVIDER_NAME, localCloudOptions, newLocalCloud } from './local/local-cloud.js';

/** Settings a provider is built with: the `--cloud-config` file's text, and kcm up's options. */
export interface CloudConfig {
  /** Contents of `--cloud-config` (empty: none). */
  configText?: string;
  /** Provider-specific settings by name (kcm up's `--load-balancer-ip-range`, ...). */
  options?: Record<string, string>;
}

export type CloudProviderFactory = (config: CloudConfig) => CloudProvider;

/** The name that leaves the cloud controllers to an external cloud controller manager. */
export const EXTERNAL_CLOUD_PROVIDER = 'external';

const factories = new Map<string, CloudProviderFactory>();

/** Raised for a `--cloud-provider` no provider is registered under; the message is the one-line error. */
export class UnknownCloudProviderError extends Error {
  constructor(readonly providerName: string) {
    super(`cloud provider could not be initialized: unknown cloud provider "${providerName}"`);
    this.name = 'UnknownCloudProviderError';
  }
}

/** Registers `factory` under `name`; a second registration of a name throws (upstream: klog.Fatalf). */
export function registerCloudProvider(name: string, factory: CloudProviderFactory): void {
  if (factories.has(name)) throw new Error(`cloud provider ${JSON.stringify(name)} was registered twice`);
  factories.set(name, factory);
}

/** Names of the registered providers, sorted. */
export function cloudProviderNames(): string[] {
  return [...factories.keys()].sort();
}

export function isExternalCloudProvider(name: string): boolean {
  return name === EXTERNAL_CLOUD_PROVIDER;
}

/**
 * The provider for `--cloud-provider=name`: undefined for '' (no cloud) and
 * `external`; throws UnknownCloudProviderError for an unknown name and
 * rethrows a factory's error.
 */
export function initCloudProvider(name: string, config: CloudConfig = {}): CloudProvider | undefined {
  if (name === '' || isExternalCloudProvider(name)) return undefined;
  const factory = factories.get(name);
  if (!factory) throw new UnknownCloudProviderError(name);
  return factory(config);
}

/** Throws UnknownCloudProviderError unless `name` is '', `external` or registered (flag validation). */
export function validateCloudProviderName(name: string): void {
  if (name === '' || isExternalCloudProvider(name) || factories.has(name)) return;
  throw new UnknownCloudProviderError(name);
}

// Built in: the local cloud of `kcm up`.
registerCloudProvider(LOCAL_PROVIDER_NAME, (config) => newLocalCloud(localCloudOptions(config)));
