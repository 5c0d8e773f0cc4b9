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
import type { Authorizer } from './authz/rbac.js';
import type { WebhookClient } from './admission/webhook/webhook-client.js';
import type { ResourceMetricsSource } from './metrics-api/types.js';
import type { KubeletClientConfig } from './handlers/node-proxy.js';

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
  /** What the authentication and authorization APIs use (reviews, TokenRequest). */
  auth: ServerAuth;
  /** Calls admission and CRD conversion webhooks. */
  webhookClient?: WebhookClient;
  /** Serves metrics.k8s.io (NodeMetrics, PodMetrics) when set. */
  resourceMetrics?: ResourceMetricsSource;
  /** How pods/log, exec, attach, portforward and the proxy subresources reach kubelets. */
  kubelet?: KubeletClientConfig;
}

/** The outcome of authenticating one bearer token for a TokenReview. */
export type TokenReviewResult = { user: UserInfo; audiences: string[] } | { error: string };

/** A bound service-account token to sign (TokenRequest, after validation). */
export interface TokenSignRequest {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  audiences: readonly string[];
  /** The token's lifetime (exp - iat). */
  expirationSeconds: number;
  /** Sets the `warnafter` claim this many seconds from now (extended pod-bound tokens). */
  warnAfterSeconds?: number;
  boundObject?: { kind: 'Pod' | 'Secret' | 'Node'; name: string; uid: string };
  node?: { name: string; uid: string };
}

export interface ServerAuth {
  /**
   * The authorizer of this server; undefined under AlwaysAllow (everything
   * allowed), except while a subject access review is answered: then
   * AlwaysAllow's (authz/always-allow.ts: anonymous users get the
   * public-information paths only).
   */
  authorizer?: Authorizer;
  /**
   * Authenticates a bearer token as requests are authenticated, for
   * `audiences` (empty: the API audiences). Absent: TokenReview answers that
   * token authentication is not configured.
   */
  reviewToken?(token: string, audiences: readonly string[]): Promise<TokenReviewResult>;
  /** Signs bound service-account tokens; absent without --service-account-signing-key-file. */
  tokenSigner?: {
    readonly apiAudiences: readonly string[];
    sign(req: TokenSignRequest): { token: string; expiresAtMs: number };
  };
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
