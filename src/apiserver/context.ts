/**
 * What every handler gets: the server's shared parts and the parsed request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import type { Storage } from './storage/storage.js';
import type { ResourceTable, ServedResource } from './resources.js';
import type { Store } from './store.js';
import type { ApiMetrics } from './metrics.js';
import type { Rendering } from './output.js';
import type { UserInfo, Verb } from './request-info.js';
import type { ServiceAllocators } from './ipalloc.js';

export interface ServerContext {
  storage: Storage;
  store: Store;
  resources: ResourceTable;
  clock: Clock;
  logger: Logger;
  metrics: ApiMetrics;
  allocators: ServiceAllocators;
  /** Open watches, for close() and leak checks. */
  watches: Set<{ stop(): void }>;
  /** Minimum request timeout in seconds for watches (kube-apiserver --min-request-timeout, 1800). */
  minRequestTimeoutSeconds: number;
  /** Bookmark period of watches, in milliseconds (upstream: about a minute). */
  bookmarkIntervalMs: number;
}

export interface RequestScope {
  server: ServerContext;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  query: URLSearchParams;
  user: UserInfo;
  r: ServedResource;
  namespace: string;
  name: string;
  subresource: string;
  verb: Verb;
  rendering: Rendering;
}
