/**
 * What a built-in controller receives from the controller manager, and how it
 * describes itself in the registry (src/controllers/registry.ts).
 */
import type { GroupVersionResource } from '../api/types.js';
import type { CloudProvider } from '../cloudprovider/cloud.js';
import type { Controller } from '../controller/types.js';
import type { Client } from '../client/interfaces.js';
import type { DiscoveryClient } from '../client/discovery.js';
import type { SharedInformerFactory } from '../tools/cache/factory.js';
import type { EventRecorder } from '../tools/record/interfaces.js';
import type { Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';

/**
 * kube-controller-manager's options that controllers read. Durations in ms.
 * Names follow the flags (`--concurrent-replicaset-syncs` -> concurrentReplicaSetSyncs).
 */
export interface ControllerOptions {
  /** Workers per controller, keyed by canonical controller name (`replicaset-controller`: 5, ...). */
  concurrency: Record<string, number>;
  minResyncPeriodMs: number;
  nodeMonitorPeriodMs: number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  unhealthyZoneThreshold: number;
  largeClusterSizeThreshold: number;
  terminatedPodGCThreshold: number;
  allocateNodeCIDRs: boolean;
  clusterCIDR: string;
  nodeCIDRMaskSize: number;
  nodeCIDRMaskSizeIPv4: number;
  nodeCIDRMaskSizeIPv6: number;
  serviceClusterIPRange: string;
  /** PEM of the cluster CA (`--root-ca-file`), for kube-root-ca.crt and token secrets. */
  rootCA?: string;
  /** PEM private key for service-account tokens (`--service-account-private-key-file`). */
  serviceAccountPrivateKey?: string;
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  /** Extra knobs by flag name for controllers that need more. */
  extra: Record<string, string | number | boolean>;
}

export interface ControllerContext {
  /** The API client (a fake in unit tests). */
  client: Client;
  /** Server discovery, for controllers that act on every resource (garbage collector, namespace). */
  discovery?: DiscoveryClient;
  /** Shared informers: register what you need in create(); the manager starts them once after all controllers are built. */
  informers: SharedInformerFactory;
  clock: Clock;
  options: ControllerOptions;
  /** A recorder whose events carry `component` as their source (e.g. `replicaset-controller`). */
  recorder(component: string): EventRecorder;
  logger(name: string): Logger;
  /** The cloud provider of `--cloud-provider`; absent without one (the cloud controllers are not started then). */
  cloud?: CloudProvider;
}

export interface ControllerDescriptor {
  /** Canonical name, as kube-controller-manager's names.go (`replicaset-controller`). */
  name: string;
  /** Other names accepted by `--controllers` (`replicaset`, ...). */
  aliases: string[];
  /** Off unless named in `--controllers` (bootstrapsigner, tokencleaner upstream). */
  disabledByDefault?: boolean;
  /** Resources the server must serve; otherwise the controller is skipped with a log line. */
  requiredResources: GroupVersionResource[];
  /** Default worker count (`--concurrent-*-syncs`); overridden by options.concurrency[name]. */
  defaultWorkers: number;
  /** Builds the controller, registering informers and handlers. */
  create(ctx: ControllerContext): Controller | Promise<Controller>;
}
