/**
 * SharedInformerFactory (client-go informers/factory.go): one shared
 * informer per resource for a whole process, so every controller reading
 * pods shares one watch and one cache.
 *
 * - forResource(gvr) creates the informer on first request and returns the
 *   same object afterwards, before or after start(); informerFor(key, new)
 *   is the generic form (forResource uses the key gvrString(gvr)).
 * - start() runs every informer not yet running; call it again after asking
 *   for more informers.
 * - Every informer has the `namespace` index and, by default, a transform
 *   dropping metadata.managedFields (as kube-controller-manager does);
 *   `transform` replaces that default.
 */
import { setMaxListeners } from 'node:events';
import type { GroupVersionResource, KubeObject, PartialObjectMetadata } from '../../api/types.js';
import { GVR, gvrString } from '../../api/gvr.js';
import type { Client, ListOptions, ResourceInterface, WatchOptions } from '../../client/interfaces.js';
import { knownVersionFallbacks } from '../../client/version-fallback.js';
import type { Clock } from '../../util/clock/clock.js';
import { realClock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { newLogger } from '../../util/log/logger.js';
import type * as corev1 from 'kubernetes-types/core/v1.js';
import type * as appsv1 from 'kubernetes-types/apps/v1.js';
import type * as batchv1 from 'kubernetes-types/batch/v1.js';
import type * as autoscalingv2 from 'kubernetes-types/autoscaling/v2.js';
import type * as policyv1 from 'kubernetes-types/policy/v1.js';
import type * as coordinationv1 from 'kubernetes-types/coordination/v1.js';
import type * as discoveryv1 from 'kubernetes-types/discovery/v1.js';
import type * as eventsv1 from 'kubernetes-types/events/v1.js';
import type * as rbacv1 from 'kubernetes-types/rbac/v1.js';
import type * as storagev1 from 'kubernetes-types/storage/v1.js';
import type * as networkingv1 from 'kubernetes-types/networking/v1.js';
import type * as schedulingv1 from 'kubernetes-types/scheduling/v1.js';
import type * as certificatesv1 from 'kubernetes-types/certificates/v1.js';
import type * as nodev1 from 'kubernetes-types/node/v1.js';
import type * as apiextensionsv1 from 'kubernetes-types/apiextensions/v1.js';
import type { SharedIndexInformer, TransformFunc } from './interfaces.js';
import { listWatchFromClient } from './list-watch.js';
import { newSharedIndexInformer } from './shared-informer.js';
import { namespaceIndexers } from './store.js';

/** A kubernetes-types interface usable where a KubeObject is required. */
export type Kube<T> = T & KubeObject;

/** The object type of each built-in resource of GVR. */
export interface BuiltinObjects {
  pods: corev1.Pod;
  nodes: corev1.Node;
  namespaces: corev1.Namespace;
  services: corev1.Service;
  endpoints: corev1.Endpoints;
  configMaps: corev1.ConfigMap;
  secrets: corev1.Secret;
  serviceAccounts: corev1.ServiceAccount;
  events: corev1.Event;
  replicationControllers: corev1.ReplicationController;
  resourceQuotas: corev1.ResourceQuota;
  limitRanges: corev1.LimitRange;
  persistentVolumes: corev1.PersistentVolume;
  persistentVolumeClaims: corev1.PersistentVolumeClaim;
  podTemplates: corev1.PodTemplate;
  deployments: appsv1.Deployment;
  replicaSets: appsv1.ReplicaSet;
  statefulSets: appsv1.StatefulSet;
  daemonSets: appsv1.DaemonSet;
  controllerRevisions: appsv1.ControllerRevision;
  jobs: batchv1.Job;
  cronJobs: batchv1.CronJob;
  horizontalPodAutoscalers: autoscalingv2.HorizontalPodAutoscaler;
  podDisruptionBudgets: policyv1.PodDisruptionBudget;
  leases: coordinationv1.Lease;
  endpointSlices: discoveryv1.EndpointSlice;
  eventsV1: eventsv1.Event;
  roles: rbacv1.Role;
  clusterRoles: rbacv1.ClusterRole;
  roleBindings: rbacv1.RoleBinding;
  clusterRoleBindings: rbacv1.ClusterRoleBinding;
  storageClasses: storagev1.StorageClass;
  volumeAttachments: storagev1.VolumeAttachment;
  csiDrivers: storagev1.CSIDriver;
  csiNodes: storagev1.CSINode;
  ingresses: networkingv1.Ingress;
  ingressClasses: networkingv1.IngressClass;
  networkPolicies: networkingv1.NetworkPolicy;
  priorityClasses: schedulingv1.PriorityClass;
  certificateSigningRequests: certificatesv1.CertificateSigningRequest;
  runtimeClasses: nodev1.RuntimeClass;
  customResourceDefinitions: apiextensionsv1.CustomResourceDefinition;
}

/** `factory.pods()`, `factory.deployments()`, ...: one accessor per key of GVR. */
export type BuiltinInformers = {
  [K in keyof typeof GVR]: () => SharedIndexInformer<Kube<BuiltinObjects[K]>>;
};

export interface SharedInformerFactoryOptions {
  /** Resync period of every informer (default 0: none). */
  defaultResyncMs?: number;
  /** Watch one namespace only (default: all). */
  namespace?: string;
  tweakListOptions?: (opts: ListOptions | WatchOptions) => void;
  clock?: Clock;
  /** Replaces the default transform (stripManagedFields). */
  transform?: TransformFunc;
  logger?: Logger;
  /**
   * Full informers of these resources come from `from`, another factory of
   * this process that watches them anyway (kcm up's scheduler and simulated
   * kubelets lend theirs to its controller manager): one watch, one decode
   * and one cache per object instead of two. A borrowed informer keeps
   * `from`'s resync period (handlers added here get no default resync of
   * their own), runs from the first start() of either factory and stops with
   * `from`'s shutdown, never with this factory's. Ignored with `namespace`
   * or `tweakListOptions`, which `from`'s informers would not honour.
   */
  borrow?: { from: SharedInformerFactory; resources: readonly GroupVersionResource[] };
}

/** The lifetime given to a lender's start(): its informers stop with its own shutdown only. */
const NEVER = new AbortController().signal;

export interface SharedInformerFactory extends BuiltinInformers {
  forResource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource): SharedIndexInformer<T>;
  /** Metadata-only informer (PartialObjectMetadata), listed and watched through client.metadata(gvr). */
  forResourceMetadata(gvr: GroupVersionResource): SharedIndexInformer<PartialObjectMetadata>;
  /** Whether a full informer for `gvr` was already asked for (forResource or the typed accessors). */
  hasInformer(gvr: GroupVersionResource): boolean;
  /** The informer registered under `key`, created with `create` the first time. */
  informerFor<T extends KubeObject>(
    key: string,
    create: (client: Client, defaultResyncMs: number) => SharedIndexInformer<T>,
  ): SharedIndexInformer<T>;
  /** Runs every informer not yet started until the signal aborts or shutdown(). */
  start(signal: AbortSignal): void;
  /** Waits for the started informers; per key, whether it synced (false when aborted). */
  waitForCacheSync(signal: AbortSignal): Promise<Map<string, boolean>>;
  /** Stops every informer and resolves once all have stopped. Later start() calls do nothing. */
  shutdown(): Promise<void>;
}

/** Drops metadata.managedFields (copying metadata, never mutating the input). */
export function stripManagedFields(obj: unknown): unknown {
  const o = obj as KubeObject | null;
  const meta = o?.metadata;
  if (!meta || meta.managedFields === undefined) return obj;
  const { managedFields: _drop, ...rest } = meta;
  return { ...o, metadata: rest };
}

class Factory {
  private readonly informers = new Map<string, SharedIndexInformer<KubeObject>>();
  /** Informers borrowed from opts.borrow.from, by key. */
  private readonly borrowed = new Map<string, SharedIndexInformer<KubeObject>>();
  private readonly lendable: Set<string>;
  private readonly running = new Map<string, Promise<void>>();
  private readonly stop = new AbortController();
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly log: Logger;

  constructor(
    private readonly client: Client,
    private readonly opts: SharedInformerFactoryOptions,
  ) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? newLogger('informers');
    this.lendable = new Set(opts.borrow && !opts.namespace && !opts.tweakListOptions ? opts.borrow.resources.map(gvrString) : []);
    // One listener per informer: not a leak however many informers there are.
    setMaxListeners(0, this.stop.signal);
  }

  informerFor<T extends KubeObject>(
    key: string,
    create: (client: Client, defaultResyncMs: number) => SharedIndexInformer<T>,
  ): SharedIndexInformer<T> {
    let inf = this.informers.get(key);
    if (!inf) {
      inf = create(this.client, this.opts.defaultResyncMs ?? 0) as unknown as SharedIndexInformer<KubeObject>;
      this.informers.set(key, inf);
    }
    return inf as unknown as SharedIndexInformer<T>;
  }

  forResource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource): SharedIndexInformer<T> {
    const name = gvrString(gvr);
    if (this.lendable.has(name)) {
      let inf = this.borrowed.get(name);
      if (!inf) {
        inf = this.opts.borrow!.from.forResource(gvr);
        this.borrowed.set(name, inf);
      }
      return inf as unknown as SharedIndexInformer<T>;
    }
    return this.informerFor<T>(name, (client, resyncMs) => {
      let ri = client.resource<T>(gvr);
      if (this.opts.namespace) ri = ri.namespace(this.opts.namespace);
      return this.newInformer<T>(name, this.listWatch(ri), resyncMs);
    });
  }

  hasInformer(gvr: GroupVersionResource): boolean {
    return this.informers.has(gvrString(gvr)) || this.borrowed.has(gvrString(gvr));
  }

  forResourceMetadata(gvr: GroupVersionResource): SharedIndexInformer<PartialObjectMetadata> {
    const name = `metadata:${gvrString(gvr)}`;
    return this.informerFor<PartialObjectMetadata>(name, (client, resyncMs) => {
      let ri = client.metadata(gvr);
      if (this.opts.namespace) ri = ri.namespace(this.opts.namespace);
      return this.newInformer(name, this.listWatch(ri), resyncMs);
    });
  }

  start(signal: AbortSignal): void {
    if (this.shuttingDown) return;
    if (this.borrowed.size > 0) this.opts.borrow!.from.start(NEVER);
    const starting = [...this.informers].filter(([key]) => !this.running.has(key));
    if (starting.length === 0) return;
    // The informers started now stop when `signal` or the factory's shutdown aborts: one listener on
    // each, however many informers (Node warns past 10 listeners on one signal).
    const stopThese = new AbortController();
    setMaxListeners(0, stopThese.signal);
    const abort = () => stopThese.abort();
    signal.addEventListener('abort', abort, { once: true });
    this.stop.signal.addEventListener('abort', abort, { once: true });
    if (signal.aborted || this.stop.signal.aborted) stopThese.abort();
    const runs = starting.map(([key, inf]) => {
      const run = inf.run(stopThese.signal).then(
        () => undefined,
        (err: unknown) => this.log.error(err, { informer: key }, 'informer failed'),
      );
      this.running.set(key, run);
      return run;
    });
    void Promise.all(runs).finally(() => {
      signal.removeEventListener('abort', abort);
      this.stop.signal.removeEventListener('abort', abort);
    });
  }

  async waitForCacheSync(signal: AbortSignal): Promise<Map<string, boolean>> {
    const out = new Map<string, boolean>();
    // One listener on the caller's signal, however many informers wait on it.
    const waiting = new AbortController();
    setMaxListeners(0, waiting.signal);
    const onAbort = () => waiting.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all([
        ...Array.from(this.running.keys()).map(async (key) => {
          out.set(key, await this.informers.get(key)!.whenSynced(waiting.signal));
        }),
        ...Array.from(this.borrowed).map(async ([key, inf]) => {
          out.set(key, await inf.whenSynced(waiting.signal));
        }),
      ]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return out;
  }

  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    this.stop.abort();
    await Promise.all(this.running.values());
  }

  /** Informers with the default transform (stripManagedFields) have managedFields cut before their events are parsed. */
  private listWatch<T extends KubeObject>(ri: ResourceInterface<T>) {
    return listWatchFromClient(ri, { tweak: this.opts.tweakListOptions, dropManagedFields: this.opts.transform === undefined });
  }

  private newInformer<T extends KubeObject>(name: string, lw: ReturnType<typeof listWatchFromClient<T>>, resyncMs: number): SharedIndexInformer<T> {
    const inf = newSharedIndexInformer<T>(lw, {
      name,
      resyncPeriodMs: resyncMs,
      indexers: namespaceIndexers<T>(),
      clock: this.clock,
      logger: this.log.child({ informer: name }),
    });
    inf.setTransform(this.opts.transform ?? stripManagedFields);
    return inf;
  }
}

/**
 * The informer a controller that needs only objects' identity and metadata
 * uses (the garbage collector's and resource quota's monitors): the full one
 * when another controller asked for it, else the metadata-only one, so that
 * each resource has one watch, as upstream's InformerFactory.ForResource
 * shares the typed informers. Callers built after every other controller get
 * the full informer wherever one exists.
 */
export function sharedOrMetadataInformer(f: SharedInformerFactory, gvr: GroupVersionResource): SharedIndexInformer<PartialObjectMetadata> {
  // A 1.20 server serves some resources only in their older version (batch/v1beta1 CronJobs, ...), which discovery
  // names and the controllers watch as the current one through withVersionFallbacks.
  const current = currentVersionOf.get(gvrString(gvr));
  const full = f.hasInformer(gvr) ? gvr : current && f.hasInformer(current) ? current : undefined;
  return full ? (f.forResource(full) as unknown as SharedIndexInformer<PartialObjectMetadata>) : f.forResourceMetadata(gvr);
}

const currentVersionOf = new Map(knownVersionFallbacks().map((v) => [gvrString(v.older), v.current]));

/** A factory of shared informers over `client`. */
export function newSharedInformerFactory(client: Client, opts: SharedInformerFactoryOptions = {}): SharedInformerFactory {
  const f = new Factory(client, opts);
  const api = {
    forResource: <T extends KubeObject = KubeObject>(gvr: GroupVersionResource) => f.forResource<T>(gvr),
    forResourceMetadata: (gvr: GroupVersionResource) => f.forResourceMetadata(gvr),
    hasInformer: (gvr: GroupVersionResource) => f.hasInformer(gvr),
    informerFor: <T extends KubeObject>(key: string, create: (client: Client, defaultResyncMs: number) => SharedIndexInformer<T>) =>
      f.informerFor<T>(key, create),
    start: (signal: AbortSignal) => f.start(signal),
    waitForCacheSync: (signal: AbortSignal) => f.waitForCacheSync(signal),
    shutdown: () => f.shutdown(),
  } as Record<string, unknown>;
  for (const [key, gvr] of Object.entries(GVR)) api[key] = () => f.forResource(gvr);
  return api as unknown as SharedInformerFactory;
}
