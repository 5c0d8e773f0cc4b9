/**
 * `kcm up`'s flags: its own, the API server's, and every controller-manager
 * flag passed through (same names), except the ones that would clash:
 * `--secure-port`/`--bind-address` are the API server's here, the controller
 * manager's are `--controller-manager-secure-port`/`--controller-manager-bind-address`;
 * `--kubeconfig`/`--master` and `--authentication-kubeconfig`/`--authorization-kubeconfig`
 * do not apply (the embedded server's admin kubeconfig is used, also for the
 * TokenReviews and SubjectAccessReviews that guard the controller manager's port).
 */
import { readFileSync } from 'node:fs';
import { parseSchedulerConfiguration } from '../scheduler/config.js';
import { FlagError, loggingFlags, parseFlags, type FlagSpec, type ParsedFlags } from '../cmd/flags.js';
import { applyConfigFile, controllerManagerFlags, validateFlags, type ControllerManagerFlagValues, type ControllerManagerFlags } from '../controllermanager/options.js';
import { resolveEnabledControllers } from '../controllers/registry.js';
import { delegatedAuthFlags } from '../controllermanager/auth-flags.js';
import { DEFAULT_LB_IP_RANGE } from '../cloudprovider/local/local-cloud.js';
import { parseIpRange } from '../cloudprovider/local/ip-pool.js';

const {
  kubeconfig: _k,
  master: _m,
  'secure-port': _p,
  'bind-address': _b,
  v: _v,
  'logging-format': _f,
  'authentication-kubeconfig': _ak,
  'authorization-kubeconfig': _zk,
  ...passThrough
} = controllerManagerFlags;

/** The same flags, shown in another help section. */
function inSection<S extends FlagSpec>(spec: S, section: string): S {
  return Object.fromEntries(Object.entries(spec).map(([name, def]) => [name, { ...def, section }])) as S;
}

const { 'authentication-kubeconfig': _ak2, 'authorization-kubeconfig': _zk2, ...cmAuthFlags } = delegatedAuthFlags;

const DEFAULT_CLUSTER_CIDR = '10.244.0.0/16';

const ownFlags = {
  'data-dir': { type: 'string', default: './.kcm', usage: 'Directory for the cluster state (database, certificates, service-account key, admin kubeconfig); reused on restart.', section: 'kcm up' },
  storage: { type: 'string', default: 'sqlite', oneOf: ['sqlite', 'memory'], usage: 'Storage backend: "sqlite" (durable, in <data-dir>/db) or "memory" (lost on exit).', section: 'kcm up' },
  nodes: { type: 'int', default: 3, usage: 'Number of simulated nodes (kcm-node-0 ...). 0 runs none.', section: 'kcm up' },
  'graceful-shutdown': {
    type: 'bool',
    default: true,
    usage: 'Simulated kubelets stop a deleted pod as a kubelet does: preStop hooks, SIGTERM, SIGKILL after the grace period. --graceful-shutdown=false stops pods at once.',
    section: 'kcm up',
  },
  'unpullable-images': {
    type: 'stringList',
    default: [],
    usage: 'Images the simulated nodes fail to pull (ErrImagePull, ImagePullBackOff), as globs matched against the image as written and as containerd names it (docker.io/library/nginx:latest), e.g. "*:broken,registry.example.com/*". Images that cannot exist (.invalid registries, tags such as :404 or :non-existent) always fail.',
    section: 'kcm up',
  },
  'pullable-images': {
    type: 'stringList',
    default: [],
    usage: 'When set, the only images the simulated nodes can pull (globs as --unpullable-images); every other image fails as not found, as on an air-gapped node.',
    section: 'kcm up',
  },
  scheduler: { type: 'bool', default: true, usage: 'Run the default scheduler.', section: 'kcm up' },
  'scheduler-config': {
    type: 'string',
    default: '',
    usage: "A KubeSchedulerConfiguration file for the scheduler (as kube-scheduler's --config): its profiles (several schedulerNames, plugins enabled or disabled, score weights), percentageOfNodesToScore and plugin arguments.",
    section: 'kcm up',
  },
  'local-path-provisioner': {
    type: 'bool',
    default: true,
    usage: 'Run the local-path provisioner (volumes are directories in <data-dir>/volumes) and create the default StorageClass "standard" once, as kind and k3s do.',
    section: 'kcm up',
  },
  isolation: {
    type: 'string',
    default: 'process',
    oneOf: ['process', 'thread'],
    usage: 'Where the controller side (controller manager, scheduler, nodes) runs beside the API server: "process" (a child process) or "thread" (a worker thread).',
    section: 'kcm up',
  },
  'scheduler-kube-api-qps': {
    type: 'float',
    default: 200,
    usage: "QPS of the scheduler towards the API server (higher than kube-scheduler's 50 in kcm up: at 50 binding alone caps the cluster at 50 pods/s).",
    section: 'kcm up',
  },
  'scheduler-kube-api-burst': { type: 'int', default: 400, usage: "Burst of the scheduler towards the API server (kube-scheduler's default is 100).", section: 'kcm up' },
  'secure-port': { type: 'int', default: 6443, usage: "The API server's HTTPS port. 0 picks a free port.", section: 'API server' },
  'bind-address': { type: 'string', default: '127.0.0.1', typeName: 'ip', usage: 'The IP address the API server listens on.', section: 'API server' },
  'authorization-mode': { type: 'string', default: 'AlwaysAllow', oneOf: ['AlwaysAllow', 'RBAC'], usage: "The API server's authorization of authenticated requests: AlwaysAllow or RBAC.", section: 'API server' },
  'service-account-key-file': { type: 'stringList', default: [], usage: 'PEM files with keys that verify ServiceAccount tokens. Default: the signing key.', section: 'API server' },
  'service-account-signing-key-file': { type: 'string', default: '', usage: 'Private key that signs TokenRequest tokens. Default: --service-account-private-key-file, else <data-dir>/pki/sa.key.', section: 'API server' },
  'service-account-issuer': { type: 'stringList', default: ['https://kubernetes.default.svc.cluster.local'], usage: 'Service account token issuer (iss). The first value signs; every value is accepted.', section: 'API server' },
  'api-audiences': { type: 'stringList', default: [], usage: 'Identifiers of the API; service account tokens must carry one in aud. Default: the issuers.', section: 'API server' },
  'request-timeout': {
    type: 'duration',
    default: 60_000,
    usage: "How long the API server lets a request that is not long-running (watch, exec, attach, log, port-forward, proxy) take before it answers 504 Timeout. 0 disables it (kube-apiserver would time every request out at once).",
    section: 'API server',
  },
  'controller-manager-secure-port': {
    type: 'int',
    default: 10257,
    usage: "The controller manager's HTTPS port: /healthz, /livez, /readyz for anyone, /metrics and /configz for callers the API server authenticates and authorizes (as kube-controller-manager). 0 disables it. The scheduler opens no port in kcm up.",
    section: 'Controller manager serving',
  },
  'controller-manager-bind-address': { type: 'string', default: '127.0.0.1', typeName: 'ip', usage: "The IP address the controller manager's endpoints listen on.", section: 'Controller manager serving' },
  'dashboard-port': {
    type: 'int',
    default: 8070,
    usage: 'The port of the live web view of the control loops (controllers and their queues, owner trees, timelines, nodes), on 127.0.0.1; its sign-in URL is printed at start. If the port is taken a free one is used. 0 disables it.',
    section: 'kcm up',
  },
  'metric-resolution': {
    type: 'duration',
    default: 15_000,
    usage: 'How often the simulated metrics-server scrapes the nodes (metrics-server --metric-resolution): the resource metrics API (metrics.k8s.io, kubectl top, the HPA) changes at most this often.',
    section: 'kcm up',
  },
  'load-balancer-ip-range': {
    type: 'string',
    default: DEFAULT_LB_IP_RANGE,
    usage: 'Addresses the local cloud gives LoadBalancer Services (FIRST-LAST or a CIDR); freed when the Service goes. Used with --cloud-provider=local.',
    section: 'kcm up',
  },
} as const satisfies FlagSpec;

/** The whole `kcm up` flag set. Leader election is off by default here (one controller manager; a restart need not wait for the old lease). */
export const upFlags = {
  ...ownFlags,
  ...passThrough,
  ...inSection(cmAuthFlags, 'Controller manager serving'),
  'kube-api-qps': { ...controllerManagerFlags['kube-api-qps'], default: 200, usage: 'QPS of the controller manager towards the API server (higher than upstream\'s 20 in kcm up: one local server, start-up lists every resource).' },
  'kube-api-burst': { ...controllerManagerFlags['kube-api-burst'], default: 400, usage: 'Burst of the controller manager towards the API server.' },
  'leader-elect': {
    ...controllerManagerFlags['leader-elect'],
    usage: 'Run leader election for the controller manager on the Lease kube-system/kube-controller-manager, as a real cluster (kcm up uses the stable identity <hostname>_kcm-up, so a restart takes its own lease back at once).',
  },
  'allocate-node-cidrs': { ...controllerManagerFlags['allocate-node-cidrs'], default: true, usage: 'Give each node a spec.podCIDR from --cluster-cidr (on in kcm up, as kubeadm and kind set it up; the simulated nodes take pod IPs from it).' },
  'cluster-cidr': {
    ...controllerManagerFlags['cluster-cidr'],
    default: DEFAULT_CLUSTER_CIDR,
    usage: 'CIDR range for pods in the cluster (kcm up default 10.244.0.0/16; with more than 256 --nodes, 10.244.0.0/14, and with more than 1,024, 10.224.0.0/12, so that each node has its /24).',
  },
  'service-cluster-ip-range': { ...controllerManagerFlags['service-cluster-ip-range'], default: '10.0.0.0/24', usage: 'CIDR range for Service cluster IPs (API server and controller manager).' },
  'cloud-provider': {
    ...controllerManagerFlags['cloud-provider'],
    default: 'local',
    usage: "The cloud provider: 'local' (default: LoadBalancer IPs from --load-balancer-ip-range, node zones and provider IDs, simulated instances), '' for none, 'external' when another cloud controller manager runs the cloud controllers.",
  },
  ...loggingFlags,
} as const satisfies FlagSpec;

export type UpFlags = typeof upFlags;

export interface UpOptions {
  flags: ParsedFlags<UpFlags>;
  /** Controller-manager flag values after --config and validation. */
  cm: ControllerManagerFlagValues;
  controllers: string[];
}

/**
 * The default pod range for `nodes` nodes of a /24 each (node-cidr-mask-size's default): a /16 holds
 * 256, too few for a large simulated cluster, whose nodes beyond it would get CIDRNotAvailable. The
 * wider ranges stay clear of the service range (10.96.0.0/12).
 */
export function clusterCIDRFor(nodes: number): string {
  if (nodes <= 256) return DEFAULT_CLUSTER_CIDR;
  if (nodes <= 1024) return '10.244.0.0/14';
  return '10.224.0.0/12';
}

/** Parses `kcm up` flags; throws FlagError (or UnknownControllerError) with the one-line message. */
export function parseUpFlags(args: readonly string[]): UpOptions {
  const flags = parseFlags(upFlags, args);
  if (flags.positional.length > 0) throw new FlagError(`unknown command "${flags.positional[0]}" for "kcm up"`);
  if (flags.values.nodes < 0) throw new FlagError(`--nodes must not be negative, got ${flags.values.nodes}`);
  if (flags.values['scheduler-kube-api-qps'] < 0) throw new FlagError(`--scheduler-kube-api-qps must not be negative, got ${flags.values['scheduler-kube-api-qps']}`);
  if (flags.values['metric-resolution'] <= 0) throw new FlagError(`--metric-resolution must be positive, got ${flags.values['metric-resolution']}ms`);
  if (flags.values['request-timeout'] < 0) throw new FlagError('--request-timeout can not be negative value');
  if (flags.values['scheduler-kube-api-burst'] < 0) throw new FlagError(`--scheduler-kube-api-burst must not be negative, got ${flags.values['scheduler-kube-api-burst']}`);
  if (flags.values['scheduler-config']) {
    try {
      parseSchedulerConfiguration(readFileSync(flags.values['scheduler-config'], 'utf8'));
    } catch (err) {
      throw new FlagError(`invalid argument "${flags.values['scheduler-config']}" for "--scheduler-config" flag: ${(err as Error).message}`, { cause: err });
    }
  }
  try {
    parseIpRange(flags.values['load-balancer-ip-range']);
  } catch (err) {
    throw new FlagError(`invalid argument "${flags.values['load-balancer-ip-range']}" for "--load-balancer-ip-range" flag: ${(err as Error).message}`, { cause: err });
  }
  const cmValues = {} as Record<string, unknown>;
  for (const name of Object.keys(controllerManagerFlags)) {
    cmValues[name] = name in upFlags ? (flags.values as Record<string, unknown>)[name] : (controllerManagerFlags as FlagSpec)[name]!.default;
  }
  cmValues['secure-port'] = flags.values['controller-manager-secure-port'];
  cmValues['bind-address'] = flags.values['controller-manager-bind-address'];
  const changed = new Set([...flags.changed].filter((n) => n in controllerManagerFlags)) as Set<keyof ControllerManagerFlags & string>;
  const cmParsed: ParsedFlags<ControllerManagerFlags> = { values: cmValues as ControllerManagerFlagValues, changed, positional: [], help: false };
  applyConfigFile(cmParsed);
  if (!cmParsed.changed.has('cluster-cidr') && cmParsed.values['cluster-cidr'] === DEFAULT_CLUSTER_CIDR) {
    (cmParsed.values as { 'cluster-cidr': string })['cluster-cidr'] = clusterCIDRFor(flags.values.nodes);
  }
  validateFlags(cmParsed.values);
  const controllers = resolveEnabledControllers(cmParsed.values.controllers);
  return { flags, cm: cmParsed.values, controllers };
}
