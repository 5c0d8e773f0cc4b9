/**
 * RestConfig: everything needed to talk to one API server (client-go's
 * rest.Config). Plain data; build it with loadKubeconfig or inClusterConfig,
 * or by hand in tests.
 */

/** An exec credential plugin, as written under `users[].user.exec` in a kubeconfig. */
export interface ExecConfig {
  /** `client.authentication.k8s.io/v1` or `client.authentication.k8s.io/v1beta1`. */
  apiVersion: string;
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  /** Shown when the command cannot be found. */
  installHint?: string;
  /** Put the cluster's server and CA into KUBERNETES_EXEC_INFO. */
  provideClusterInfo?: boolean;
  /** Cluster `extensions[name=client.authentication.k8s.io/exec].extension`, passed through when provideClusterInfo. */
  clusterConfig?: unknown;
  /** Working directory for a relative command (the kubeconfig's directory). */
  dir?: string;
}

export interface TlsConfig {
  /** PEM data of the CA bundle. */
  caData?: string;
  caFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  insecureSkipTLSVerify?: boolean;
  /** SNI and the name checked against the server certificate. */
  serverName?: string;
}

export interface AuthConfig {
  bearerToken?: string;
  /** Re-read every minute, so rotated tokens are picked up. Wins over bearerToken. */
  bearerTokenFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
}

export interface RestConfig {
  /** `https://host:port` (http allowed for tests), optionally with a path prefix. */
  host: string;
  tls: TlsConfig;
  auth: AuthConfig;
  /** Client-side requests per second (default 20). Zero or less disables the limiter. */
  qps: number;
  /** Token bucket size (default 30). */
  burst: number;
  /** Per-request timeout in ms; 0 means none (watches ignore it). */
  timeoutMs: number;
  userAgent: string;
  /**
   * Connections of its own rather than the pool that clients with the same
   * TLS settings share (leader election: client-go's clients share one
   * HTTP/2 connection, where no request waits behind another; over our
   * HTTP/1.1 pool a renewal could queue behind a burst of other requests).
   * A number is how many (default REQUEST_CONNECTIONS): a client whose
   * requests may come in floods (events) then holds at most that many of
   * the server's attention at once.
   */
  ownConnections?: boolean | number;
  /**
   * Connect over this Unix domain socket instead of TCP to `host`, whose
   * scheme still decides TLS (kcm up's components reach its API server over
   * a private socket as `http://localhost`: no TLS handshakes and record
   * encryption between processes of one machine).
   */
  socketPath?: string;
}

export const DEFAULT_QPS = 20;
export const DEFAULT_BURST = 30;
export const DEFAULT_USER_AGENT = 'kcm/v0.1.0';

/**
 * The user agent of a component that stands in for a Kubernetes one, in
 * client-go's shape (`kube-controller-manager/<version> (<os>/<arch>) kubernetes/<commit>`):
 * the API server names a non-apply write's field manager after what comes
 * before the first '/', so objects show `kube-controller-manager`, `kube-scheduler`
 * and `kubelet` in their managedFields, as in a real cluster.
 */
export function componentUserAgent(component: 'kube-controller-manager' | 'kube-scheduler' | 'kubelet'): string {
  return `${component}/v0.1.0 (${process.platform}/${process.arch}) kcm`;
}

/** A RestConfig with the defaults filled in. */
export function newRestConfig(partial: Partial<RestConfig> & { host: string }): RestConfig {
  return {
    host: partial.host,
    tls: { ...(partial.tls ?? {}) },
    auth: { ...(partial.auth ?? {}) },
    qps: partial.qps ?? DEFAULT_QPS,
    burst: partial.burst ?? DEFAULT_BURST,
    timeoutMs: partial.timeoutMs ?? 0,
    userAgent: partial.userAgent ?? DEFAULT_USER_AGENT,
    ...(partial.socketPath ? { socketPath: partial.socketPath } : {}),
    ...(partial.ownConnections !== undefined ? { ownConnections: partial.ownConnections } : {}),
  };
}

/**
 * `config` reaching its server over a Unix domain socket as
 * `http://localhost` (kcm up's private socket to its API server), or
 * `config` itself without a socket. Credentials and TLS data stay as they were.
 */
export function viaUnixSocket(config: RestConfig, socketPath: string | undefined): RestConfig {
  return socketPath ? { ...config, host: 'http://localhost', socketPath } : config;
}

/**
 * The configuration of a component's leader-election client, made as
 * kube-controller-manager and kube-scheduler make theirs: the component's,
 * with "/leader-election" added to the user agent and the renew deadline as
 * the request timeout. Its own client, so its own rate limiter: a burst of
 * the component's writes (a thousand pods and their events) never queues a
 * lease renewal past its deadline. Its connections are its own too.
 */
export function leaderElectionRestConfig(base: RestConfig, renewDeadlineMs: number): RestConfig {
  return { ...base, userAgent: `${base.userAgent}/leader-election`, timeoutMs: renewDeadlineMs, ownConnections: true };
}
