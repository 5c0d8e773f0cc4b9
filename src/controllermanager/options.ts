/**
 * kube-controller-manager's flags (same names and defaults), the
 * KubeControllerManagerConfiguration file (`--config`; flags given on the
 * command line win over it), and the effective configuration they make.
 *
 * Flags no kcm controller reads yet are still accepted; their help says so
 * ("not used by kcm yet"), so nothing is silently ignored.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { FlagError, loggingFlags, parseDuration, type FlagDef, type FlagSpec, type FlagValues, type ParsedFlags } from '../cmd/flags.js';
import type { ControllerOptions } from '../controllers/types.js';
import { delegatedAuthFlags, validateAuthFlags } from './auth-flags.js';
import { validateCloudProviderName } from '../cloudprovider/registry.js';

const UNUSED = ' (accepted; not used by kcm yet)';

function concurrency(n: number, what: string, section: string): FlagDef {
  return { type: 'int', default: n, usage: `The number of ${what} that are allowed to sync concurrently. Larger number = more responsive, but more CPU (and network) load.`, section };
}

/** Every flag of `kcm controller-manager`, by section. */
export const controllerManagerFlags = {
  // Generic
  kubeconfig: { type: 'string', default: '', usage: 'Path to kubeconfig file with authorization and master location information.', section: 'Generic' },
  master: { type: 'string', default: '', usage: 'The address of the Kubernetes API server (overrides any value in kubeconfig).', section: 'Generic' },
  config: { type: 'string', default: '', usage: 'The path to a KubeControllerManagerConfiguration file (kubecontrollermanager.config.k8s.io/v1alpha1). Flags given on the command line override it.', section: 'Generic' },
  controllers: {
    type: 'stringList',
    default: ['*'],
    usage:
      "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'. Disabled-by-default controllers: bootstrap-signer-controller, token-cleaner-controller. Run 'kcm controller-manager --help' for names; see docs/controller-manager.md for which ones kcm implements.",
    section: 'Generic',
  },
  'min-resync-period': { type: 'duration', default: 12 * 3_600_000, usage: 'The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod.', section: 'Generic' },
  'kube-api-qps': { type: 'float', default: 20, usage: 'QPS to use while talking with kubernetes apiserver.', section: 'Generic' },
  'kube-api-burst': { type: 'int', default: 30, usage: 'Burst to use while talking with kubernetes apiserver.', section: 'Generic' },
  'kube-api-content-type': { type: 'string', default: 'application/vnd.kubernetes.protobuf', usage: 'Content type of requests sent to apiserver. kcm always speaks JSON.' + UNUSED, section: 'Generic' },
  'controller-start-interval': { type: 'duration', default: 0, usage: 'Interval between starting controller managers.', section: 'Generic' },
  'use-service-account-credentials': { type: 'bool', default: false, usage: 'If true, use individual service account credentials for each controller.' + UNUSED, section: 'Generic' },
  'cloud-provider': { type: 'string', default: '', usage: "The provider for cloud services. Empty string for no provider. kcm has 'local' (kcm up's simulated cloud); 'external' leaves the cloud controllers to an external cloud controller manager.", section: 'Generic' },
  'cloud-config': { type: 'string', default: '', usage: 'The path to the cloud provider configuration file. Empty string for no configuration file.', section: 'Generic' },
  'cluster-name': { type: 'string', default: 'kubernetes', usage: 'The instance prefix for the cluster.', section: 'Generic' },
  'feature-gates': { type: 'stringList', default: [], usage: 'A set of key=value pairs that describe feature gates for alpha/experimental features.' + UNUSED, section: 'Generic' },
  'shutdown-timeout': { type: 'duration', default: 10_000, usage: 'How long in-flight syncs may take to finish on SIGTERM before the process exits anyway.', section: 'Generic' },
  'apiserver-wait-timeout': { type: 'duration', default: 10_000, usage: "How long to wait for the API server's /healthz at start-up (kube-controller-manager waits 10s).", section: 'Generic', hidden: true },

  // Leader election
  'leader-elect': { type: 'bool', default: true, usage: 'Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.', section: 'Leader election' },
  'leader-elect-lease-duration': { type: 'duration', default: 15_000, usage: 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot.', section: 'Leader election' },
  'leader-elect-renew-deadline': { type: 'duration', default: 10_000, usage: 'The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration.', section: 'Leader election' },
  'leader-elect-retry-period': { type: 'duration', default: 2_000, usage: 'The duration the clients should wait between attempting acquisition and renewal of a leadership.', section: 'Leader election' },
  'leader-elect-resource-lock': { type: 'string', default: 'leases', oneOf: ['leases'], usage: "The type of resource object that is used for locking during leader election. Supported option is 'leases'.", section: 'Leader election' },
  'leader-elect-resource-name': { type: 'string', default: 'kube-controller-manager', usage: 'The name of resource object that is used for locking during leader election.', section: 'Leader election' },
  'leader-elect-resource-namespace': { type: 'string', default: 'kube-system', usage: 'The namespace of resource object that is used for locking during leader election.', section: 'Leader election' },

  // Secure serving
  'secure-port': { type: 'int', default: 10257, usage: 'The port on which to serve HTTPS with authentication and authorization. If 0, don\'t serve HTTPS at all.', section: 'Secure serving' },
  'bind-address': { type: 'string', default: '0.0.0.0', typeName: 'ip', usage: 'The IP address on which to listen for the --secure-port port.', section: 'Secure serving' },
  'cert-dir': { type: 'string', default: '', usage: 'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored.', section: 'Secure serving' },
  'tls-cert-file': { type: 'string', default: '', usage: 'File containing the default x509 Certificate for HTTPS. If not given, a self-signed certificate is generated.', section: 'Secure serving' },
  'tls-private-key-file': { type: 'string', default: '', usage: 'File containing the default x509 private key matching --tls-cert-file.', section: 'Secure serving' },

  // Authentication and authorization of the secure port (delegated to the API server)
  ...delegatedAuthFlags,

  // Node lifecycle and IPAM
  'node-monitor-period': { type: 'duration', default: 5_000, usage: 'The period for syncing NodeStatus in cloud-node-lifecycle-controller.', section: 'Node lifecycle controller' },
  'node-monitor-grace-period': { type: 'duration', default: 50_000, usage: 'Amount of time which we allow running Node to be unresponsive before marking it unhealthy.', section: 'Node lifecycle controller' },
  'node-startup-grace-period': { type: 'duration', default: 60_000, usage: 'Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.', section: 'Node lifecycle controller' },
  'node-eviction-rate': { type: 'float', default: 0.1, usage: 'Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy.', section: 'Node lifecycle controller' },
  'secondary-node-eviction-rate': { type: 'float', default: 0.01, usage: 'Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy.', section: 'Node lifecycle controller' },
  'unhealthy-zone-threshold': { type: 'float', default: 0.55, usage: 'Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy.', section: 'Node lifecycle controller' },
  'large-cluster-size-threshold': { type: 'int', default: 50, usage: 'Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic purposes.', section: 'Node lifecycle controller' },
  'allocate-node-cidrs': { type: 'bool', default: false, usage: 'Should CIDRs for Pods be allocated and set on the cloud provider.', section: 'Node IPAM controller' },
  'cluster-cidr': { type: 'string', default: '', typeName: 'cidr', usage: 'CIDR Range for Pods in cluster. Requires --allocate-node-cidrs to be true.', section: 'Node IPAM controller' },
  'node-cidr-mask-size': { type: 'int', default: 0, usage: 'Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.', section: 'Node IPAM controller' },
  'node-cidr-mask-size-ipv4': { type: 'int', default: 0, usage: 'Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.', section: 'Node IPAM controller' },
  'node-cidr-mask-size-ipv6': { type: 'int', default: 0, usage: 'Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.', section: 'Node IPAM controller' },
  'service-cluster-ip-range': { type: 'string', default: '', typeName: 'cidr', usage: 'CIDR Range for Services in cluster. Requires --allocate-node-cidrs to be true.', section: 'Node IPAM controller' },
  'configure-cloud-routes': { type: 'bool', default: true, usage: 'Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider.', section: 'Generic' },
  'route-reconciliation-period': { type: 'duration', default: 10_000, usage: 'The period for reconciling routes created for Nodes by cloud provider.', section: 'Generic' },

  // Pod GC
  'terminated-pod-gc-threshold': { type: 'int', default: 12500, usage: 'Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.', section: 'Pod GC controller' },

  // Service accounts and certificates
  'root-ca-file': { type: 'string', default: '', usage: "If set, this root certificate authority will be included in service account's token secret. This must be a valid PEM-encoded CA bundle.", section: 'Service account controller' },
  'service-account-private-key-file': { type: 'string', default: '', usage: 'Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens.', section: 'Service account controller' },
  'cluster-signing-cert-file': { type: 'string', default: '', usage: 'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.', section: 'CSR signing controller' },
  'cluster-signing-key-file': { type: 'string', default: '', usage: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.', section: 'CSR signing controller' },
  'cluster-signing-duration': { type: 'duration', default: 8760 * 3_600_000, usage: 'The max length of duration signed certificates will be given.', section: 'CSR signing controller' },

  // Garbage collector, namespaces, HPA
  'enable-garbage-collector': { type: 'bool', default: true, usage: 'Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-apiserver.', section: 'Garbage collector controller' },
  'namespace-sync-period': { type: 'duration', default: 5 * 60_000, usage: 'The period for syncing namespace life-cycle updates.', section: 'Namespace controller' },
  'mirroring-max-endpoints-per-subset': { type: 'int', default: 1000, usage: 'The maximum number of endpoints that will be added to an EndpointSlice by the EndpointSliceMirroring controller. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 1000.', section: 'EndpointSliceMirroring controller' },
  'mirroring-endpointslice-updates-batch-period': { type: 'duration', default: 0, usage: 'The length of EndpointSlice updates batching period for EndpointSliceMirroring controller. Processing of EndpointSlice changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of EndpointSlice updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated', section: 'EndpointSliceMirroring controller' },
  'max-endpoints-per-slice': { type: 'int', default: 100, usage: 'The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.', section: 'EndpointSlice controller' },
  'endpoint-updates-batch-period': { type: 'duration', default: 0, usage: 'The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated', section: 'Endpoint controller' },
  'endpointslice-updates-batch-period': { type: 'duration', default: 0, usage: 'The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated', section: 'EndpointSlice controller' },
  'resource-quota-sync-period': { type: 'duration', default: 5 * 60_000, usage: 'The period for syncing quota usage status in the system.', section: 'ResourceQuota controller' },
  'horizontal-pod-autoscaler-sync-period': { type: 'duration', default: 15_000, usage: 'The period for syncing the number of pods in horizontal pod autoscaler.', section: 'HPA controller' },
  'horizontal-pod-autoscaler-downscale-stabilization': { type: 'duration', default: 5 * 60_000, usage: 'The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.', section: 'HPA controller' },
  'horizontal-pod-autoscaler-tolerance': { type: 'float', default: 0.1, usage: 'The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.', section: 'HPA controller' },
  'pvclaimbinder-sync-period': { type: 'duration', default: 15_000, usage: 'The period for syncing persistent volumes and persistent volume claims.', section: 'Persistent volume binder controller' },

  // Concurrency
  'concurrent-deployment-syncs': concurrency(5, 'deployment objects', 'Deployment controller'),
  'concurrent-replicaset-syncs': concurrency(5, 'replica sets', 'ReplicaSet controller'),
  'concurrent-rc-syncs': concurrency(5, 'replication controllers', 'ReplicationController controller'),
  'concurrent-statefulset-syncs': concurrency(5, 'statefulset objects', 'StatefulSet controller'),
  'concurrent-daemonset-syncs': concurrency(2, 'daemonset objects', 'DaemonSet controller'),
  'concurrent-job-syncs': concurrency(5, 'job objects', 'Job controller'),
  'concurrent-cron-job-syncs': concurrency(5, 'cron job objects', 'CronJob controller'),
  'concurrent-endpoint-syncs': concurrency(5, 'endpoint syncing operations', 'Endpoint controller'),
  'concurrent-service-endpoint-syncs': concurrency(5, 'service endpoint syncing operations', 'EndpointSlice controller'),
  'mirroring-concurrent-service-endpoint-syncs': concurrency(5, 'service endpoint syncing operations (mirroring)', 'EndpointSliceMirroring controller'),
  'concurrent-gc-syncs': concurrency(20, 'garbage collector workers', 'Garbage collector controller'),
  'concurrent-namespace-syncs': concurrency(10, 'namespace objects', 'Namespace controller'),
  'concurrent-resource-quota-syncs': concurrency(5, 'resource quotas', 'ResourceQuota controller'),
  'concurrent-serviceaccount-token-syncs': concurrency(5, 'service account token objects', 'Service account controller'),
  'concurrent-ttl-after-finished-syncs': concurrency(5, 'ttl-after-finished-controller workers', 'TTL-after-finished controller'),
  'concurrent-horizontal-pod-autoscaler-syncs': concurrency(5, 'horizontal pod autoscaler objects', 'HPA controller'),
  'concurrent-ephemeralvolume-syncs': concurrency(5, 'ephemeral volume syncing operations', 'Ephemeral volume controller'),
  'concurrent-validating-admission-policy-status-syncs': concurrency(5, 'ValidatingAdmissionPolicyStatusController workers', 'ValidatingAdmissionPolicyStatus controller'),
  'concurrent-service-syncs': concurrency(1, 'services', 'Service controller'),

  ...loggingFlags,
} as const satisfies FlagSpec;

export type ControllerManagerFlags = typeof controllerManagerFlags;
export type ControllerManagerFlagValues = FlagValues<ControllerManagerFlags>;

/** Which controller each `--concurrent-*-syncs` flag sizes. */
export const concurrencyFlags: Record<string, string> = {
  'concurrent-deployment-syncs': 'deployment-controller',
  'concurrent-replicaset-syncs': 'replicaset-controller',
  'concurrent-rc-syncs': 'replicationcontroller-controller',
  'concurrent-statefulset-syncs': 'statefulset-controller',
  'concurrent-daemonset-syncs': 'daemonset-controller',
  'concurrent-job-syncs': 'job-controller',
  'concurrent-cron-job-syncs': 'cronjob-controller',
  'concurrent-endpoint-syncs': 'endpoints-controller',
  'concurrent-service-endpoint-syncs': 'endpointslice-controller',
  'mirroring-concurrent-service-endpoint-syncs': 'endpointslice-mirroring-controller',
  'concurrent-gc-syncs': 'garbage-collector-controller',
  'concurrent-namespace-syncs': 'namespace-controller',
  'concurrent-resource-quota-syncs': 'resourcequota-controller',
  'concurrent-serviceaccount-token-syncs': 'serviceaccount-token-controller',
  'concurrent-ttl-after-finished-syncs': 'ttl-after-finished-controller',
  'concurrent-horizontal-pod-autoscaler-syncs': 'horizontal-pod-autoscaler-controller',
  'concurrent-ephemeralvolume-syncs': 'ephemeral-volume-controller',
  'concurrent-validating-admission-policy-status-syncs': 'validatingadmissionpolicy-status-controller',
  'concurrent-service-syncs': 'service-lb-controller',
};

/**
 * Where each flag lives in a KubeControllerManagerConfiguration (dotted path).
 * Durations there are Go duration strings (`15s`).
 */
const configPaths: Partial<Record<keyof ControllerManagerFlags, string>> = {
  controllers: 'generic.controllers',
  'min-resync-period': 'generic.minResyncPeriod',
  'kube-api-qps': 'generic.clientConnection.qps',
  'kube-api-burst': 'generic.clientConnection.burst',
  'kube-api-content-type': 'generic.clientConnection.contentType',
  kubeconfig: 'generic.clientConnection.kubeconfig',
  'controller-start-interval': 'generic.controllerStartInterval',
  'leader-elect': 'generic.leaderElection.leaderElect',
  'leader-elect-lease-duration': 'generic.leaderElection.leaseDuration',
  'leader-elect-renew-deadline': 'generic.leaderElection.renewDeadline',
  'leader-elect-retry-period': 'generic.leaderElection.retryPeriod',
  'leader-elect-resource-lock': 'generic.leaderElection.resourceLock',
  'leader-elect-resource-name': 'generic.leaderElection.resourceName',
  'leader-elect-resource-namespace': 'generic.leaderElection.resourceNamespace',
  'cloud-provider': 'kubeCloudShared.cloudProvider.name',
  'cloud-config': 'kubeCloudShared.cloudProvider.cloudConfigFile',
  'configure-cloud-routes': 'kubeCloudShared.configureCloudRoutes',
  'route-reconciliation-period': 'kubeCloudShared.routeReconciliationPeriod',
  'concurrent-service-syncs': 'serviceController.concurrentServiceSyncs',
  'cluster-name': 'kubeCloudShared.clusterName',
  'cluster-cidr': 'kubeCloudShared.clusterCIDR',
  'allocate-node-cidrs': 'kubeCloudShared.allocateNodeCIDRs',
  'node-monitor-period': 'kubeCloudShared.nodeMonitorPeriod',
  'use-service-account-credentials': 'kubeCloudShared.useServiceAccountCredentials',
  'node-monitor-grace-period': 'nodeLifecycleController.nodeMonitorGracePeriod',
  'node-startup-grace-period': 'nodeLifecycleController.nodeStartupGracePeriod',
  'node-eviction-rate': 'nodeLifecycleController.nodeEvictionRate',
  'secondary-node-eviction-rate': 'nodeLifecycleController.secondaryNodeEvictionRate',
  'unhealthy-zone-threshold': 'nodeLifecycleController.unhealthyZoneThreshold',
  'large-cluster-size-threshold': 'nodeLifecycleController.largeClusterSizeThreshold',
  'service-cluster-ip-range': 'nodeIPAMController.serviceCIDR',
  'node-cidr-mask-size': 'nodeIPAMController.nodeCIDRMaskSize',
  'node-cidr-mask-size-ipv4': 'nodeIPAMController.nodeCIDRMaskSizeIPv4',
  'node-cidr-mask-size-ipv6': 'nodeIPAMController.nodeCIDRMaskSizeIPv6',
  'terminated-pod-gc-threshold': 'podGCController.terminatedPodGCThreshold',
  'root-ca-file': 'saController.rootCAFile',
  'service-account-private-key-file': 'saController.serviceAccountKeyFile',
  'concurrent-serviceaccount-token-syncs': 'saController.concurrentSATokenSyncs',
  'cluster-signing-cert-file': 'csrSigningController.clusterSigningCertFile',
  'cluster-signing-key-file': 'csrSigningController.clusterSigningKeyFile',
  'cluster-signing-duration': 'csrSigningController.clusterSigningDuration',
  'enable-garbage-collector': 'garbageCollectorController.enableGarbageCollector',
  'concurrent-gc-syncs': 'garbageCollectorController.concurrentGCSyncs',
  'namespace-sync-period': 'namespaceController.namespaceSyncPeriod',
  'resource-quota-sync-period': 'resourceQuotaController.resourceQuotaSyncPeriod',
  'concurrent-namespace-syncs': 'namespaceController.concurrentNamespaceSyncs',
  'horizontal-pod-autoscaler-sync-period': 'horizontalPodAutoscalerController.horizontalPodAutoscalerSyncPeriod',
  'concurrent-horizontal-pod-autoscaler-syncs': 'horizontalPodAutoscalerController.concurrentHorizontalPodAutoscalerSyncs',
  'pvclaimbinder-sync-period': 'persistentVolumeBinderController.pvClaimBinderSyncPeriod',
  'concurrent-deployment-syncs': 'deploymentController.concurrentDeploymentSyncs',
  'concurrent-replicaset-syncs': 'replicaSetController.concurrentRSSyncs',
  'concurrent-rc-syncs': 'replicationController.concurrentRCSyncs',
  'concurrent-statefulset-syncs': 'statefulSetController.concurrentStatefulSetSyncs',
  'concurrent-daemonset-syncs': 'daemonSetController.concurrentDaemonSetSyncs',
  'concurrent-job-syncs': 'jobController.concurrentJobSyncs',
  'concurrent-cron-job-syncs': 'cronJobController.concurrentCronJobSyncs',
  'concurrent-endpoint-syncs': 'endpointController.concurrentEndpointSyncs',
  'concurrent-service-endpoint-syncs': 'endpointSliceController.concurrentServiceEndpointSyncs',
  'mirroring-concurrent-service-endpoint-syncs': 'endpointSliceMirroringController.mirroringConcurrentServiceEndpointSyncs',
  'concurrent-resource-quota-syncs': 'resourceQuotaController.concurrentResourceQuotaSyncs',
  'concurrent-ttl-after-finished-syncs': 'ttlAfterFinishedController.concurrentTTLSyncs',
  'concurrent-ephemeralvolume-syncs': 'ephemeralVolumeController.concurrentEphemeralVolumeSyncs',
  'concurrent-validating-admission-policy-status-syncs': 'validatingAdmissionPolicyStatusController.concurrentPolicySyncs',
};

function lookup(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function fromConfig(def: FlagDef, raw: unknown, path: string): unknown {
  const bad = () => new FlagError(`invalid value ${JSON.stringify(raw)} for ${path} in --config`);
  switch (def.type) {
    case 'string':
      if (typeof raw !== 'string') throw bad();
      if (def.oneOf && !def.oneOf.includes(raw)) throw bad();
      return raw;
    case 'bool':
      if (typeof raw !== 'boolean') throw bad();
      return raw;
    case 'int':
    case 'float':
      if (typeof raw !== 'number' || (def.type === 'int' && !Number.isInteger(raw))) throw bad();
      return raw;
    case 'duration':
      if (typeof raw === 'number') return raw / 1e6; // nanoseconds, as Go marshals a Duration number
      if (typeof raw !== 'string') throw bad();
      try {
        return parseDuration(raw);
      } catch (err) {
        throw new FlagError(`invalid value ${JSON.stringify(raw)} for ${path} in --config: ${(err as Error).message}`, { cause: err });
      }
    case 'stringList':
      if (!Array.isArray(raw) || !raw.every((x) => typeof x === 'string')) throw bad();
      return [...raw];
  }
}

/**
 * Applies `--config` under the flags: a value from the file is used only when
 * the flag was not given on the command line. Throws FlagError for an
 * unreadable file, a wrong kind or a bad value.
 */
export function applyConfigFile(parsed: ParsedFlags<ControllerManagerFlags>, readFile: (p: string) => string = (p) => readFileSync(p, 'utf8')): void {
  const file = parsed.values.config;
  if (!file) return;
  let doc: unknown;
  try {
    doc = parseYaml(readFile(file));
  } catch (err) {
    throw new FlagError(`failed to read --config ${file}: ${(err as Error).message}`, { cause: err });
  }
  const kind = (doc as { kind?: unknown } | null)?.kind;
  if (kind !== 'KubeControllerManagerConfiguration') {
    throw new FlagError(`--config ${file}: kind must be KubeControllerManagerConfiguration, got ${JSON.stringify(kind)}`);
  }
  const values = parsed.values as Record<string, unknown>;
  for (const [flag, path] of Object.entries(configPaths)) {
    if (parsed.changed.has(flag as keyof ControllerManagerFlags)) continue;
    const raw = lookup(doc, path!);
    if (raw === undefined || raw === null) continue;
    values[flag] = fromConfig(controllerManagerFlags[flag as keyof ControllerManagerFlags], raw, path!);
  }
}

/** Cross-flag checks kube-controller-manager makes at start-up; throws FlagError. */
export function validateFlags(v: ControllerManagerFlagValues): void {
  if (v['leader-elect'] && v['leader-elect-lease-duration'] <= v['leader-elect-renew-deadline']) {
    throw new FlagError('leaderElection.leaseDuration must be greater than leaderElection.renewDeadline');
  }
  if (v['leader-elect'] && v['leader-elect-renew-deadline'] <= v['leader-elect-retry-period'] * 1.2) {
    throw new FlagError('leaderElection.renewDeadline must be greater than retryPeriod*JitterFactor');
  }
  if (v['secure-port'] < 0 || v['secure-port'] > 65535) throw new FlagError(`--secure-port ${v['secure-port']} must be between 0 and 65535, inclusive. 0 for turning off secure port`);
  if (v['kube-api-burst'] < 0) throw new FlagError('--kube-api-burst must not be negative');
  try {
    validateCloudProviderName(v['cloud-provider']);
  } catch (err) {
    throw new FlagError((err as Error).message, { cause: err });
  }
  const authProblem = validateAuthFlags(v);
  if (authProblem) throw new FlagError(authProblem);
  for (const flag of Object.keys(concurrencyFlags)) {
    const n = (v as Record<string, unknown>)[flag] as number;
    if (n < 1 && flag !== 'concurrent-gc-syncs') throw new FlagError(`--${flag} must be at least 1, got ${n}`);
  }
}

/** The options controllers read, from flag values; PEM contents are read by the caller. */
export function buildControllerOptions(v: ControllerManagerFlagValues, pem: { rootCA?: string; serviceAccountPrivateKey?: string } = {}): ControllerOptions {
  const conc: Record<string, number> = {};
  for (const [flag, controller] of Object.entries(concurrencyFlags)) conc[controller] = (v as Record<string, unknown>)[flag] as number;
  const extra: Record<string, string | number | boolean> = {};
  for (const flag of ['cluster-name', 'enable-garbage-collector', 'namespace-sync-period', 'resource-quota-sync-period', 'max-endpoints-per-slice', 'endpoint-updates-batch-period', 'endpointslice-updates-batch-period', 'mirroring-max-endpoints-per-subset', 'mirroring-endpointslice-updates-batch-period', 'pvclaimbinder-sync-period', 'horizontal-pod-autoscaler-sync-period', 'horizontal-pod-autoscaler-downscale-stabilization', 'horizontal-pod-autoscaler-tolerance', 'cluster-signing-duration', 'node-startup-grace-period', 'configure-cloud-routes', 'route-reconciliation-period'] as const) {
    extra[flag] = v[flag];
  }
  return {
    concurrency: conc,
    minResyncPeriodMs: v['min-resync-period'],
    nodeMonitorPeriodMs: v['node-monitor-period'],
    nodeMonitorGracePeriodMs: v['node-monitor-grace-period'],
    nodeStartupGracePeriodMs: v['node-startup-grace-period'],
    nodeEvictionRate: v['node-eviction-rate'],
    secondaryNodeEvictionRate: v['secondary-node-eviction-rate'],
    unhealthyZoneThreshold: v['unhealthy-zone-threshold'],
    largeClusterSizeThreshold: v['large-cluster-size-threshold'],
    terminatedPodGCThreshold: v['terminated-pod-gc-threshold'],
    allocateNodeCIDRs: v['allocate-node-cidrs'],
    clusterCIDR: v['cluster-cidr'],
    nodeCIDRMaskSize: v['node-cidr-mask-size'],
    nodeCIDRMaskSizeIPv4: v['node-cidr-mask-size-ipv4'],
    nodeCIDRMaskSizeIPv6: v['node-cidr-mask-size-ipv6'],
    serviceClusterIPRange: v['service-cluster-ip-range'],
    ...(pem.rootCA !== undefined ? { rootCA: pem.rootCA } : {}),
    ...(pem.serviceAccountPrivateKey !== undefined ? { serviceAccountPrivateKey: pem.serviceAccountPrivateKey } : {}),
    ...(v['cluster-signing-cert-file'] ? { clusterSigningCertFile: v['cluster-signing-cert-file'] } : {}),
    ...(v['cluster-signing-key-file'] ? { clusterSigningKeyFile: v['cluster-signing-key-file'] } : {}),
    extra,
  };
}

/** The effective configuration as /configz shows it (KubeControllerManagerConfiguration shape, durations as Go strings). */
export function effectiveConfiguration(v: ControllerManagerFlagValues, formatDuration: (ms: number) => string): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: 'KubeControllerManagerConfiguration', apiVersion: 'kubecontrollermanager.config.k8s.io/v1alpha1' };
  for (const [flag, path] of Object.entries(configPaths)) {
    const def = controllerManagerFlags[flag as keyof ControllerManagerFlags];
    let val = (v as Record<string, unknown>)[flag];
    if (def.type === 'duration') val = formatDuration(val as number);
    const parts = path!.split('.');
    let cur = out;
    for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
    cur[parts[parts.length - 1]!] = val;
  }
  return out;
}
