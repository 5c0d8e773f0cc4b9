/**
 * `kcm apiserver`: the embedded Kubernetes API server alone. Runs until
 * SIGTERM or SIGINT, then shuts down gracefully and exits 0 (a second signal
 * exits 1 at once).
 *
 * On stdout, once serving: the kubeconfig path, a kubectl hint, and the line
 * `kcm apiserver listening on https://127.0.0.1:<port>` (printed last; tools
 * may wait for it).
 */
import { join, resolve } from 'node:path';
import { startApiServer } from '../apiserver/serve/index.js';
import type { ServiceAccountTokenOptions } from '../apiserver/serve/sa-setup.js';
import { ensureServiceAccountKey } from '../up/sa-key.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { FlagError, loggingFlags, type FlagSpec } from './flags.js';
import { boundApiServerHeapGrowth } from '../up/v8-flags.js';

export const apiserverFlags = {
  'data-dir': { type: 'string', default: './.kcm', usage: 'Directory for the database, certificates and the admin kubeconfig; created when missing.', section: 'Storage' },
  storage: { type: 'string', default: 'sqlite', oneOf: ['sqlite', 'memory'], usage: 'Storage backend: "sqlite" (durable, in <data-dir>/db) or "memory" (lost on exit).', section: 'Storage' },
  'bind-address': { type: 'string', default: '127.0.0.1', typeName: 'ip', usage: 'The IP address on which to listen for the --secure-port port.', section: 'Secure serving' },
  'secure-port': { type: 'int', default: 6443, usage: 'The port on which to serve HTTPS with authentication and authorization. 0 picks a free port.', section: 'Secure serving' },
  'service-cluster-ip-range': { type: 'string', default: '10.0.0.0/24', typeName: 'cidr', usage: 'A CIDR notation IP range from which to assign service cluster IPs.', section: 'Generic' },
  'request-timeout': {
    type: 'duration',
    default: 60_000,
    usage:
      'An optional field indicating the duration a handler must keep a request open before timing it out. This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests. 0 disables it (kube-apiserver would time every request out at once).',
    section: 'Generic',
  },
  'authorization-mode': { type: 'string', default: 'AlwaysAllow', oneOf: ['AlwaysAllow', 'RBAC'], usage: 'Authorization of authenticated requests: AlwaysAllow or RBAC (roles and bindings enforced; system:masters always allowed).', section: 'Authorization' },
  'service-account-key-file': { type: 'stringList', default: [], usage: 'File containing PEM-encoded RSA or ECDSA private or public keys (or certificates), used to verify ServiceAccount tokens. May be given several times. Default: the public half of --service-account-signing-key-file.', section: 'Authentication' },
  'service-account-signing-key-file': { type: 'string', default: '', usage: 'Path to the file that contains the current private key of the service account token issuer; TokenRequest tokens are signed with it. Default when no service-account key flag is given: <data-dir>/pki/sa.key (created when missing).', section: 'Authentication' },
  'service-account-issuer': { type: 'stringList', default: ['https://kubernetes.default.svc.cluster.local'], usage: 'Identifier of the service account token issuer (the iss claim). The first value signs; every value is accepted.', section: 'Authentication' },
  'api-audiences': { type: 'stringList', default: [], usage: 'Identifiers of the API. Service account tokens must carry one of them in aud. Default: the issuers.', section: 'Authentication' },
  'kubelet-token': { type: 'string', default: '', usage: 'Bearer token the API server presents to kubelets for logs, exec, attach, port-forward and proxy requests (kcm-specific; kcm up passes a random one to both sides). Empty: no Authorization header.', section: 'Kubelet client' },
  'kubelet-preferred-address-types': { type: 'stringList', default: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'], usage: 'List of the preferred NodeAddressTypes to use for kubelet connections (when a node has no kcm.dev/kubelet-endpoint annotation).', section: 'Kubelet client' },
  ...loggingFlags,
} as const satisfies FlagSpec;

/**
 * The service-account key flags as startApiServer takes them; with no key
 * flag at all, the data directory's `pki/sa.key` (created when missing)
 * signs and verifies, so tokens survive restarts.
 */
export function serviceAccountOptions(
  v: { 'data-dir': string; 'service-account-key-file': readonly string[]; 'service-account-signing-key-file': string; 'service-account-issuer': readonly string[]; 'api-audiences': readonly string[] },
): ServiceAccountTokenOptions {
  let signingKeyFile = v['service-account-signing-key-file'];
  const keyFiles = [...v['service-account-key-file']];
  if (!signingKeyFile && keyFiles.length === 0) signingKeyFile = ensureServiceAccountKey(join(resolve(v['data-dir']), 'pki')).keyPath;
  return { keyFiles, ...(signingKeyFile ? { signingKeyFile } : {}), issuers: [...v['service-account-issuer']], apiAudiences: [...v['api-audiences']] };
}

const description = 'Run the embedded Kubernetes API server: HTTPS, SQLite storage with a watch cache, an admin kubeconfig in the data directory.';

export async function run(args: string[]): Promise<number> {
  boundApiServerHeapGrowth();
  const flags = parseCommandLine(apiserverFlags, args, {
    command: 'kcm apiserver',
    usageLine: 'kcm apiserver [flags]',
    description,
    validate: ({ values: v }) => {
      if (v['request-timeout'] < 0) throw new FlagError('--request-timeout can not be negative value');
      for (const t of v['kubelet-preferred-address-types']) {
        if (!['Hostname', 'InternalIP', 'ExternalIP', 'InternalDNS', 'ExternalDNS'].includes(t)) throw new FlagError(`--kubelet-preferred-address-types: unsupported address type ${JSON.stringify(t)}`);
      }
    },
  });
  if (typeof flags === 'number') return flags;
  const v = flags.values;
  const log = setUpLogging(v, 'apiserver');

  let serviceAccounts: ServiceAccountTokenOptions;
  try {
    serviceAccounts = serviceAccountOptions(v);
  } catch (err) {
    process.stderr.write(`Error: cannot set up the service-account key: ${(err as Error).message}\n`);
    return 1;
  }
  const server = await startApiServer({
    serviceAccounts,
    dataDir: v['data-dir'],
    bindAddress: v['bind-address'],
    securePort: v['secure-port'],
    serviceClusterIPRange: v['service-cluster-ip-range'],
    storage: v.storage === 'memory' ? 'memory' : 'sqlite',
    authorizationMode: v['authorization-mode'] === 'RBAC' ? 'RBAC' : 'AlwaysAllow',
    requestTimeoutMs: v['request-timeout'],
    kubelet: { ...(v['kubelet-token'] ? { token: v['kubelet-token'] } : {}), preferredAddressTypes: [...v['kubelet-preferred-address-types']] },
    logger: log,
  });
  process.stdout.write(
    `Admin kubeconfig: ${server.kubeconfigPath}\n` +
      `  export KUBECONFIG=${server.kubeconfigPath}; kubectl get ns\n` +
      `kcm apiserver listening on ${server.url}\n`,
  );

  await new Promise<void>((resolve) => onTerminationSignal(resolve, { log }));
  await server.close();
  return 0;
}
