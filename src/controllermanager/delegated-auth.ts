/**
 * Sets up delegated authentication and authorization for a component's
 * HTTPS endpoints from its flags, as DelegatingAuthenticationOptions.ApplyTo
 * and DelegatingAuthorizationOptions.ApplyTo do at start-up:
 *
 * - TokenReview and SubjectAccessReview go through the authentication and
 *   authorization kubeconfigs (QPS 200, burst 400, 10 s per call);
 * - the client CA is `--client-ca-file`, else (unless
 *   `--authentication-skip-lookup`) `client-ca-file` of the ConfigMap
 *   kube-system/extension-apiserver-authentication;
 * - the request-header settings are `--requestheader-*` when
 *   `--requestheader-client-ca-file` is given, else the ConfigMap's
 *   `requestheader-*` keys. Failing to read the ConfigMap stops start-up
 *   unless `--authentication-tolerate-lookup-failure` (a missing ConfigMap
 *   is fine: no request-header authentication).
 *
 * Values read from the ConfigMap are re-read every minute (upstream watches
 * it); a failed re-read keeps the previous values.
 */
import { readFileSync } from 'node:fs';
import type { X509Certificate } from 'node:crypto';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { isForbidden, isNotFound } from '../client/errors.js';
import type { RestConfig } from '../client/rest-config.js';
import { parseCertificateBundle } from '../util/cert/verify.js';
import type { Clock, Timer } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import { newDelegatingAuthenticator, type DelegatingAuthenticator, type RequestHeaderConfig, type TokenReviewStatus } from './delegated-authn.js';
import { newDelegatingAuthorizer, newPathMatcher, type DelegatingAuthorizer, type SubjectAccessReviewStatus } from './delegated-authz.js';

export const authenticationConfigMap = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;

/** The delegated-auth flag values, in the form the components pass them. */
export interface DelegatedAuthConfig {
  /** Where TokenReviews and the ConfigMap lookup go; undefined: tokens are not checked and nothing is looked up. */
  authentication?: RestConfig;
  /** Where SubjectAccessReviews go; undefined: only always-allowed paths are served. */
  authorization?: RestConfig;
  tokenCacheTtlMs: number;
  /** PEM file; '' for none. */
  clientCAFile: string;
  skipLookup: boolean;
  tolerateLookupFailure: boolean;
  requestHeader: {
    /** PEM file; '' to look the settings up in the cluster. */
    clientCAFile: string;
    usernameHeaders: readonly string[];
    groupHeaders: readonly string[];
    extraHeaderPrefixes: readonly string[];
    allowedNames: readonly string[];
  };
  alwaysAllowPaths: readonly string[];
  allowCacheTtlMs: number;
  denyCacheTtlMs: number;
}

export interface DelegatedAuth {
  authenticator: DelegatingAuthenticator;
  authorizer: DelegatingAuthorizer;
  /** Whether the TLS layer should ask clients for certificates (some client or front-proxy CA may apply). */
  requestClientCertificates: boolean;
  /** Stops the ConfigMap refresh and closes the clients. */
  close(): Promise<void>;
}

/** A flag or lookup problem that stops start-up. */
export class DelegatedAuthError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DelegatedAuthError';
  }
}

export interface DelegatedAuthDeps {
  clock: Clock;
  logger: Logger;
  readFile?: (path: string) => string;
}

const refreshMs = 60_000;
const reviewTimeoutMs = 10_000;

function reviewClient(config: RestConfig, log: Logger): KubeClient {
  // As upstream: high limits, since these calls bound how fast the endpoints answer.
  return newKubeClient({ ...config, qps: 200, burst: 400 }, { logger: log.child({}, 'delegated-auth') });
}

function jsonStrings(raw: string | undefined, key: string): string[] {
  if (!raw) return [];
  const v: unknown = JSON.parse(raw);
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`${key} is not a JSON list of strings`);
  return v;
}

/** What the ConfigMap says (RequestHeaderAuthRequestController and the client-ca ConfigMap controller). */
function fromConfigMap(data: Record<string, string>): { clientCA?: X509Certificate[]; requestHeader?: RequestHeaderConfig } {
  const out: { clientCA?: X509Certificate[]; requestHeader?: RequestHeaderConfig } = {};
  if (data['client-ca-file']) out.clientCA = parseCertificateBundle(data['client-ca-file']);
  if (data['requestheader-client-ca-file']) {
    out.requestHeader = {
      clientCA: parseCertificateBundle(data['requestheader-client-ca-file']),
      usernameHeaders: jsonStrings(data['requestheader-username-headers'], 'requestheader-username-headers'),
      groupHeaders: jsonStrings(data['requestheader-group-headers'], 'requestheader-group-headers'),
      extraHeaderPrefixes: jsonStrings(data['requestheader-extra-headers-prefix'], 'requestheader-extra-headers-prefix'),
      allowedNames: jsonStrings(data['requestheader-allowed-names'], 'requestheader-allowed-names'),
    };
  }
  return out;
}

/** Reads the flags' files, looks up the cluster's authentication ConfigMap and builds the authenticator and authorizer. Throws DelegatedAuthError. */
export async function setUpDelegatedAuth(cfg: DelegatedAuthConfig, deps: DelegatedAuthDeps): Promise<DelegatedAuth> {
  const log = deps.logger;
  const readFile = deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const readBundle = (path: string, what: string): X509Certificate[] => {
    try {
      return parseCertificateBundle(readFile(path));
    } catch (err) {
      throw new DelegatedAuthError(`unable to load ${what} ${JSON.stringify(path)}: ${(err as Error).message}`, { cause: err });
    }
  };
  try {
    newPathMatcher(cfg.alwaysAllowPaths);
  } catch (err) {
    throw new DelegatedAuthError(`--authorization-always-allow-paths: ${(err as Error).message}`, { cause: err });
  }

  const authnClient = cfg.authentication ? reviewClient(cfg.authentication, log) : undefined;
  const authzClient = cfg.authorization ? reviewClient(cfg.authorization, log) : undefined;
  const closeClients = async () => {
    await Promise.all([authnClient?.close(), authzClient?.close()].map((p) => p?.catch((err: unknown) => log.error(err, 'closing a delegated-auth client'))));
  };

  let clientCA: X509Certificate[] | undefined;
  let requestHeader: RequestHeaderConfig | undefined;
  const lookUpClientCA = !cfg.clientCAFile && !cfg.skipLookup;
  const lookUpRequestHeader = !cfg.requestHeader.clientCAFile && !cfg.skipLookup;
  const where = `configmap/${authenticationConfigMap.name} in ${authenticationConfigMap.namespace}`;
  try {
    if (cfg.clientCAFile) clientCA = readBundle(cfg.clientCAFile, 'client CA file');
    else if (lookUpClientCA && !authnClient) log.warn(`No authentication-kubeconfig provided in order to lookup client-ca-file in ${where}, so client certificate authentication won't work.`);
    if (cfg.requestHeader.clientCAFile) {
      requestHeader = { ...cfg.requestHeader, clientCA: readBundle(cfg.requestHeader.clientCAFile, 'request-header client CA file') };
    } else if (lookUpRequestHeader && !authnClient) {
      log.warn(`No authentication-kubeconfig provided in order to lookup requestheader-client-ca-file in ${where}, so request-header client certificate authentication won't work.`);
    }
  } catch (err) {
    await closeClients();
    throw err;
  }

  const lookup = authnClient && (lookUpClientCA || lookUpRequestHeader) ? authnClient : undefined;
  /** Reads the ConfigMap; undefined when it does not exist. */
  const readConfigMap = async (client: KubeClient) => {
    const path = `/api/v1/namespaces/${authenticationConfigMap.namespace}/configmaps/${authenticationConfigMap.name}`;
    try {
      const cm = await client.request<{ data?: Record<string, string> }>('GET', path, { timeoutMs: reviewTimeoutMs });
      return fromConfigMap(cm.data ?? {});
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const apply = (found: ReturnType<typeof fromConfigMap> | undefined) => {
    if (lookUpClientCA) clientCA = found?.clientCA;
    if (lookUpRequestHeader) requestHeader = found?.requestHeader;
  };
  if (lookup) {
    try {
      apply(await readConfigMap(lookup));
    } catch (err) {
      if (isForbidden(err)) {
        log.warn(
          `Unable to get ${where}.  Usually fixed by 'kubectl create rolebinding -n ${authenticationConfigMap.namespace} ROLEBINDING_NAME --role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'`,
        );
      }
      if (!lookUpRequestHeader) {
        log.warn({ error: (err as Error).message }, 'cannot look up the client CA in the cluster yet; client certificates are refused until it is read');
      } else if (cfg.tolerateLookupFailure) {
        log.warn(`Error looking up in-cluster authentication configuration: ${(err as Error).message}`);
        log.warn('Continuing without authentication configuration. This may treat all requests as anonymous.');
        log.warn('To require authentication configuration lookup to succeed, set --authentication-tolerate-lookup-failure=false');
      } else {
        await closeClients();
        throw new DelegatedAuthError(`unable to load configmap based request-header-client-ca-file: ${(err as Error).message}`, { cause: err });
      }
    }
  }

  let timer: Timer | undefined;
  let closed = false;
  const refresh = () => {
    timer = undefined;
    if (closed || !lookup) return;
    readConfigMap(lookup).then(
      (found) => apply(found),
      (err: unknown) => log.v(2).info({ error: (err as Error).message }, `cannot re-read ${where}; keeping the previous authentication settings`),
    ).finally(() => {
      if (!closed) timer = deps.clock.setTimer(refresh, refreshMs);
    });
  };
  if (lookup) timer = deps.clock.setTimer(refresh, refreshMs);

  if (!authzClient) log.warn('No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won\'t work.');

  const authenticator = newDelegatingAuthenticator({
    ...(authnClient
      ? {
          reviewToken: async (token: string) => {
            const r = await authnClient.request<{ status?: TokenReviewStatus }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
              body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
              timeoutMs: reviewTimeoutMs,
            });
            return r.status ?? {};
          },
        }
      : {}),
    tokenCacheTtlMs: cfg.tokenCacheTtlMs,
    clientCA: () => clientCA,
    requestHeader: () => requestHeader,
    clock: deps.clock,
  });
  const authorizer = newDelegatingAuthorizer({
    alwaysAllowPaths: cfg.alwaysAllowPaths,
    ...(authzClient
      ? {
          reviewAccess: async (spec) => {
            const r = await authzClient.request<{ status?: SubjectAccessReviewStatus }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
              body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
              timeoutMs: reviewTimeoutMs,
            });
            return r.status ?? {};
          },
        }
      : {}),
    allowCacheTtlMs: cfg.allowCacheTtlMs,
    denyCacheTtlMs: cfg.denyCacheTtlMs,
    clock: deps.clock,
  });
  return {
    authenticator,
    authorizer,
    requestClientCertificates: !!cfg.clientCAFile || !!cfg.requestHeader.clientCAFile || !!lookup,
    async close() {
      closed = true;
      timer?.stop();
      await closeClients();
    },
  };
}
