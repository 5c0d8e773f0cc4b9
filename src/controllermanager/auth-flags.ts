/**
 * The delegated authentication and authorization flags of
 * kube-controller-manager and kube-scheduler (k8s.io/apiserver's
 * DelegatingAuthenticationOptions and DelegatingAuthorizationOptions), same
 * names and defaults, and their translation to DelegatedAuthConfig.
 *
 * Deliberate difference: with `--authentication-kubeconfig` or
 * `--authorization-kubeconfig` empty, upstream uses the in-cluster config
 * and otherwise gives up (every token anonymous, every request not in
 * `--authorization-always-allow-paths` forbidden); kcm uses the
 * component's own connection to the API server (`--kubeconfig`, `--master`
 * or in-cluster), which is what kubeadm configures anyway.
 */
import type { RestConfig } from '../client/rest-config.js';
import type { FlagSpec } from '../cmd/flags.js';
import type { DelegatedAuthConfig } from './delegated-auth.js';

const ownConnection = ' Default: the connection the component itself uses to reach the API server (--kubeconfig, --master or in-cluster).';

function flags(tolerateLookupFailure: boolean) {
  return {
    'authentication-kubeconfig': {
      type: 'string',
      default: '',
      usage: "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io." + ownConnection,
      section: 'Authentication',
    },
    'authentication-skip-lookup': { type: 'bool', default: false, usage: 'If false, the authentication-kubeconfig will be used to lookup missing authentication configuration from the cluster.', section: 'Authentication' },
    'authentication-token-webhook-cache-ttl': { type: 'duration', default: 10_000, usage: 'The duration to cache responses from the webhook token authenticator.', section: 'Authentication' },
    'authentication-tolerate-lookup-failure': {
      type: 'bool',
      default: tolerateLookupFailure,
      usage: 'If true, failures to look up missing authentication configuration from the cluster are not considered fatal. Note that this can result in authentication that treats all requests as anonymous.',
      section: 'Authentication',
    },
    'client-ca-file': {
      type: 'string',
      default: '',
      usage: 'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.',
      section: 'Authentication',
    },
    'requestheader-allowed-names': {
      type: 'stringList',
      default: [],
      usage: 'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.',
      section: 'Authentication',
    },
    'requestheader-client-ca-file': {
      type: 'string',
      default: '',
      usage: 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.',
      section: 'Authentication',
    },
    'requestheader-extra-headers-prefix': { type: 'stringList', default: ['x-remote-extra-'], usage: 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.', section: 'Authentication' },
    'requestheader-group-headers': { type: 'stringList', default: ['x-remote-group'], usage: 'List of request headers to inspect for groups. X-Remote-Group is suggested.', section: 'Authentication' },
    'requestheader-username-headers': { type: 'stringList', default: ['x-remote-user'], usage: 'List of request headers to inspect for usernames. X-Remote-User is common.', section: 'Authentication' },

    'authorization-always-allow-paths': {
      type: 'stringList',
      default: ['/healthz', '/readyz', '/livez'],
      usage: "A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the 'core' kubernetes server.",
      section: 'Authorization',
    },
    'authorization-kubeconfig': {
      type: 'string',
      default: '',
      usage: "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io." + ownConnection,
      section: 'Authorization',
    },
    'authorization-webhook-cache-authorized-ttl': { type: 'duration', default: 10_000, usage: "The duration to cache 'authorized' responses from the webhook authorizer.", section: 'Authorization' },
    'authorization-webhook-cache-unauthorized-ttl': { type: 'duration', default: 10_000, usage: "The duration to cache 'unauthorized' responses from the webhook authorizer.", section: 'Authorization' },
  } as const satisfies FlagSpec;
}

/** kube-controller-manager's: a failed lookup of the cluster's authentication ConfigMap stops start-up. */
export const delegatedAuthFlags = flags(false);
/** kube-scheduler's: the same flags, but a failed lookup is tolerated (upstream sets TolerateInClusterLookupFailure). */
export const schedulerDelegatedAuthFlags = flags(true);

type AuthFlagValues = {
  'authentication-kubeconfig': string;
  'authentication-skip-lookup': boolean;
  'authentication-token-webhook-cache-ttl': number;
  'authentication-tolerate-lookup-failure': boolean;
  'client-ca-file': string;
  'requestheader-allowed-names': readonly string[];
  'requestheader-client-ca-file': string;
  'requestheader-extra-headers-prefix': readonly string[];
  'requestheader-group-headers': readonly string[];
  'requestheader-username-headers': readonly string[];
  'authorization-always-allow-paths': readonly string[];
  'authorization-kubeconfig': string;
  'authorization-webhook-cache-authorized-ttl': number;
  'authorization-webhook-cache-unauthorized-ttl': number;
};

/** Cross-flag checks (RequestHeaderAuthenticationOptions.Validate); returns the first problem. */
export function validateAuthFlags(v: AuthFlagValues): string | undefined {
  for (const flag of ['requestheader-username-headers', 'requestheader-group-headers', 'requestheader-extra-headers-prefix', 'requestheader-allowed-names'] as const) {
    if (v[flag].some((h) => h.trim() === '')) return `empty value in "${flag}"`;
  }
  for (const flag of ['authentication-token-webhook-cache-ttl', 'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl'] as const) {
    if (v[flag] < 0) return `--${flag} must not be negative`;
  }
  return undefined;
}

/**
 * The delegated-auth configuration from flag values. `own` is the
 * component's own connection, used when a kubeconfig flag is empty;
 * `load` reads a kubeconfig file.
 */
export async function delegatedAuthConfig(v: AuthFlagValues, own: RestConfig, load: (path: string) => Promise<RestConfig>): Promise<DelegatedAuthConfig> {
  const authentication = v['authentication-kubeconfig'] ? await load(v['authentication-kubeconfig']) : own;
  const authorization = v['authorization-kubeconfig'] ? await load(v['authorization-kubeconfig']) : own;
  return {
    authentication,
    authorization,
    tokenCacheTtlMs: v['authentication-token-webhook-cache-ttl'],
    clientCAFile: v['client-ca-file'],
    skipLookup: v['authentication-skip-lookup'],
    tolerateLookupFailure: v['authentication-tolerate-lookup-failure'],
    requestHeader: {
      clientCAFile: v['requestheader-client-ca-file'],
      usernameHeaders: [...v['requestheader-username-headers']],
      groupHeaders: [...v['requestheader-group-headers']],
      extraHeaderPrefixes: [...v['requestheader-extra-headers-prefix']],
      allowedNames: [...v['requestheader-allowed-names']],
    },
    alwaysAllowPaths: [...v['authorization-always-allow-paths']],
    allowCacheTtlMs: v['authorization-webhook-cache-authorized-ttl'],
    denyCacheTtlMs: v['authorization-webhook-cache-unauthorized-ttl'],
  };
}
