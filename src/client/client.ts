/**
 * KubeClient: the full client. A dynamic ResourceInterface per resource,
 * metadata-only variants, discovery, a REST mapper and raw requests, all
 * sharing one transport, rate limiter and credential cache. close() when done.
 */
import type { Registry } from 'prom-client';
import type { GroupVersionResource, KubeObject, PartialObjectMetadata } from '../api/types.js';
import { realClock, type Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { newDiscoveryClient, type DiscoveryClient } from './discovery.js';
import type { Client, ResourceInterface } from './interfaces.js';
import { newResourceClient } from './resource.js';
import { newRestClient, type HttpMethod, type RequestOptions, type RestClient, type WarningHandler } from './rest-client.js';
import type { RestConfig } from './rest-config.js';
import { newRestMapper, type RestMapper } from './rest-mapper.js';

export interface KubeClientOptions {
  clock?: Clock;
  metricsRegistry?: Registry;
  logger?: Logger;
  warningHandler?: WarningHandler;
  /** Environment for exec credential plugins (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface KubeClient extends Client {
  readonly config: RestConfig;
  readonly discovery: DiscoveryClient;
  readonly restMapper: RestMapper;
  /** A request to any path (`/healthz`, `/version`, `/readyz?verbose`), through the same auth, limits and retries. */
  request<T = unknown>(method: HttpMethod, path: string, opts?: RequestOptions): Promise<T>;
  /** Closes connections; in-flight requests and watches fail. */
  close(): Promise<void>;
}

class KubeClientImpl implements KubeClient {
  readonly discovery: DiscoveryClient;
  readonly restMapper: RestMapper;
  private readonly rest: RestClient;
  private readonly clock: Clock;

  constructor(
    readonly config: RestConfig,
    opts: KubeClientOptions,
  ) {
    this.clock = opts.clock ?? realClock;
    const log = opts.logger ?? newLogger('client');
    this.rest = newRestClient(config, {
      clock: this.clock,
      metricsRegistry: opts.metricsRegistry,
      logger: log,
      warningHandler: opts.warningHandler,
      env: opts.env,
    });
    this.discovery = newDiscoveryClient(this.rest);
    this.restMapper = newRestMapper(this.discovery, log);
  }

  resource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource): ResourceInterface<T> {
    return newResourceClient<T>(this.rest, gvr, { clock: this.clock });
  }

  metadata(gvr: GroupVersionResource): ResourceInterface<PartialObjectMetadata> {
    return newResourceClient<PartialObjectMetadata>(this.rest, gvr, { clock: this.clock, metadataOnly: true });
  }

  request<T = unknown>(method: HttpMethod, path: string, opts?: RequestOptions): Promise<T> {
    return this.rest.request<T>(method, path, opts);
  }

  close(): Promise<void> {
    return this.rest.close();
  }
}

export function newKubeClient(config: RestConfig, opts: KubeClientOptions = {}): KubeClient {
  return new KubeClientImpl(config, opts);
}
