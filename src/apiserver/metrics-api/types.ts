/**
 * The resource metrics API (metrics.k8s.io/v1beta1) as metrics-server serves
 * it: NodeMetrics (cluster-scoped, `nodes`) and PodMetrics (namespaced,
 * `pods`), get and list only. The API server serves it when given a
 * ResourceMetricsSource (kcm up gives one that simulates usage); the server
 * reads the pods and nodes from its own storage and asks the source for
 * their usage.
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
export const METRICS_API_VERSION = `${METRICS_GROUP}/${METRICS_VERSION}`;

export interface ContainerMetrics {
  name: string;
  /** `cpu` (nanocores, e.g. `1053784n`) and `memory` (working set, e.g. `3508Ki`). */
  usage: Record<string, string>;
}

/** What the source knows of one pod at its last scrape. */
export interface PodUsageSample {
  /** RFC 3339 (seconds): when the sample was taken. */
  timestamp: string;
  /** Go duration string (`15s`): the window the cpu rate was computed over. */
  window: string;
  containers: ContainerMetrics[];
}

export interface NodeUsageSample {
  timestamp: string;
  window: string;
  usage: Record<string, string>;
}

/** Reads objects from the server's storage (current state, all namespaces when `namespace` is ''). */
export interface MetricsObjectReader {
  list(group: string, resource: string, namespace?: string): Promise<KubeObject[]>;
}

/**
 * Where the usage comes from (metrics-server's scraped kubelets). Pods or
 * nodes without a sample are absent from the API, as pods metrics-server
 * has not scraped twice yet.
 */
export interface ResourceMetricsSource {
  /** Samples for `pods` (undefined: no metrics for that pod), in the same order. */
  podSamples(pods: readonly Pod[], reader: MetricsObjectReader): Promise<(PodUsageSample | undefined)[]>;
  /** Samples for `nodes`, in the same order. */
  nodeSamples(nodes: readonly Node[], reader: MetricsObjectReader): Promise<(NodeUsageSample | undefined)[]>;
}

export interface PodMetrics extends KubeObject, PodUsageSample {}
export interface NodeMetrics extends KubeObject, NodeUsageSample {}
