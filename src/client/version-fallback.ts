/**
 * Older API versions for servers that do not serve the current one.
 *
 * kcm's controllers are written against current Kubernetes (batch/v1
 * CronJob, discovery.k8s.io/v1 EndpointSlice, policy/v1 PodDisruptionBudget,
 * autoscaling/v2 HorizontalPodAutoscaler). A 1.20 kube-apiserver serves these
 * only in their beta versions, and kube-controller-manager 1.20 used those.
 * `withVersionFallbacks` wraps a client so that a controller asking for the
 * current version talks to the older one the server serves: requests go to
 * the older path, objects are converted down on the way out and up on the
 * way in (as kube-apiserver's conversion would), so listers, informers and
 * controllers only ever see the current version.
 *
 * The fallbacks in use are chosen once, by discovery, at start.
 */
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { labelSelectorIsEmpty } from '../api/labels.js';
import { apiVersionOf, type GroupVersionResource, type KubeList, type KubeObject, type PartialObjectMetadata, type WatchEvent } from '../api/types.js';
import type { KubeClient } from './client.js';
import type { ResourceInterface, Watch } from './interfaces.js';
import { deepCopy } from '../util/json/deep-copy.js';

export interface VersionFallback {
  /** The version controllers use. */
  current: GroupVersionResource;
  /** The version older servers serve. */
  older: GroupVersionResource;
  /** current -> older (object bodies sent to the server). Returns a copy. */
  down(obj: KubeObject): KubeObject;
  /** older -> current (objects read from the server). Returns a copy. */
  up(obj: KubeObject): KubeObject;
}

const gvrKey = (r: GroupVersionResource) => `${r.group}/${r.version}/${r.resource}`;
const apiVersion = (r: GroupVersionResource) => apiVersionOf(r.group, r.version);

/** A fallback whose two versions have the same fields (only apiVersion differs). */
function sameShape(group: string, current: string, older: string, resource: string): VersionFallback {
  const c = { group, version: current, resource };
  const o = { group, version: older, resource };
  return {
    current: c,
    older: o,
    down: (obj) => ({ ...deepCopy(obj), apiVersion: apiVersion(o) }),
    up: (obj) => ({ ...deepCopy(obj), apiVersion: apiVersion(c) }),
  };
}

/**
 * policy/v1beta1 selects no pod with an empty selector, policy/v1 every pod;
 * kube-apiserver keeps the v1beta1 meaning across versions with this
 * requirement, which no pod label satisfies.
 */
export const pdbEmptySelectorKey = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';

function pdbFallback(): VersionFallback {
  const base = sameShape('policy', 'v1', 'v1beta1', 'poddisruptionbudgets');
  return {
    ...base,
    up(obj) {
      const out = base.up(obj);
      const spec = (out.spec ??= {}) as { selector?: LabelSelector };
      if (labelSelectorIsEmpty(spec.selector)) spec.selector = { matchExpressions: [{ key: pdbEmptySelectorKey, operator: 'Exists' }] };
      return out;
    },
    down(obj) {
      const out = base.down(obj);
      const spec = out.spec as { selector?: { matchExpressions?: Array<{ key: string }> } } | undefined;
      const exprs = spec?.selector?.matchExpressions;
      if (exprs?.length === 1 && exprs[0]!.key === pdbEmptySelectorKey) spec!.selector = {};
      return out;
    },
  };
}

interface SliceEndpoint {
  nodeName?: string;
  zone?: string;
  deprecatedTopology?: Record<string, string>;
  topology?: Record<string, string>;
  [k: string]: unknown;
}
const hostnameKey = 'kubernetes.io/hostname';
const zoneKey = 'topology.kubernetes.io/zone';

/** discovery.k8s.io v1beta1 keeps node and zone in `topology`; v1 has nodeName, zone and deprecatedTopology (upstream's conversion). */
function endpointSliceFallback(): VersionFallback {
  const base = sameShape('discovery.k8s.io', 'v1', 'v1beta1', 'endpointslices');
  const eps = (obj: KubeObject) => ((obj as { endpoints?: SliceEndpoint[] | null }).endpoints ?? []) as SliceEndpoint[];
  return {
    ...base,
    up(obj) {
      const out = base.up(obj);
      for (const ep of eps(out)) {
        const topo = { ...(ep.topology ?? {}) };
        delete ep.topology;
        if (topo[hostnameKey] !== undefined && ep.nodeName === undefined) ep.nodeName = topo[hostnameKey];
        delete topo[hostnameKey];
        if (topo[zoneKey] !== undefined) ep.zone = topo[zoneKey];
        delete topo[zoneKey];
        if (Object.keys(topo).length) ep.deprecatedTopology = topo;
      }
      return out;
    },
    down(obj) {
      const out = base.down(obj);
      for (const ep of eps(out)) {
        const topo: Record<string, string> = { ...(ep.deprecatedTopology ?? {}) };
        delete ep.deprecatedTopology;
        if (ep.nodeName) topo[hostnameKey] = ep.nodeName;
        if (ep.zone) topo[zoneKey] = ep.zone;
        delete ep.zone;
        if (Object.keys(topo).length) ep.topology = topo;
      }
      return out;
    },
  };
}

/** Every fallback kcm knows: the resources that were beta in Kubernetes 1.20 and GA since. */
export function knownVersionFallbacks(): VersionFallback[] {
  return [
    sameShape('batch', 'v1', 'v1beta1', 'cronjobs'),
    endpointSliceFallback(),
    pdbFallback(),
    sameShape('autoscaling', 'v2', 'v2beta2', 'horizontalpodautoscalers'),
    sameShape('events.k8s.io', 'v1', 'v1beta1', 'events'),
  ];
}

/**
 * The fallbacks needed against a server serving `served` (keys
 * `group/version/resource`): those whose current version is not served and
 * whose older one is.
 */
export function chooseVersionFallbacks(served: (gvr: GroupVersionResource) => boolean, known = knownVersionFallbacks()): VersionFallback[] {
  return known.filter((f) => !served(f.current) && served(f.older));
}

function adapt<T extends KubeObject>(ri: ResourceInterface<T>, f: VersionFallback, metadataOnly: boolean): ResourceInterface<T> {
  const up = (o: T): T => (metadataOnly ? o : (f.up(o) as T));
  const down = (o: T): T => f.down(o) as T;
  const upList = (l: KubeList<T>): KubeList<T> => ({ ...l, apiVersion: metadataOnly ? l.apiVersion : apiVersion(f.current), items: l.items.map(up) });
  const upAny = <R>(v: R): R => (v && typeof v === 'object' && (v as KubeObject).apiVersion === apiVersion(f.older) && (v as KubeObject).kind !== 'Status' ? (up(v as unknown as T) as unknown as R) : v);
  return {
    gvr: f.current,
    namespace: (ns) => adapt(ri.namespace(ns), f, metadataOnly),
    get: async (name, opts) => up(await ri.get(name, opts)),
    list: async (opts) => upList(await ri.list(opts)),
    listAll: async (opts) => upList(await ri.listAll(opts)),
    async watch(opts, signal): Promise<Watch<T>> {
      const w = await ri.watch(opts, signal);
      return {
        stop: () => w.stop(),
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
          for await (const ev of w) {
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') yield { ...ev, object: up(ev.object) };
            else yield ev;
          }
        },
      };
    },
    create: async (obj, opts) => up(await ri.create(down(obj), opts)),
    update: async (obj, opts) => up(await ri.update(down(obj), opts)),
    updateStatus: async (obj, opts) => up(await ri.updateStatus(down(obj), opts)),
    patch: async (name, type, patch, opts) => up(await ri.patch(name, type, patch, opts)),
    delete: async (name, opts) => upAny(await ri.delete(name, opts)),
    deleteCollection: async (opts, listOpts) => {
      const r = await ri.deleteCollection(opts, listOpts);
      return (r as KubeList<T>).items ? upList(r as KubeList<T>) : r;
    },
    getSubresource: (name, sub) => ri.getSubresource(name, sub),
    createSubresource: (name, sub, body, opts) => ri.createSubresource(name, sub, body, opts),
    updateSubresource: (name, sub, body, opts) => ri.updateSubresource(name, sub, body, opts),
  };
}

/** `client` with requests for each fallback's current version sent to its older one. Everything else is `client` itself. */
export function withVersionFallbacks(client: KubeClient, fallbacks: readonly VersionFallback[]): KubeClient {
  if (fallbacks.length === 0) return client;
  const byKey = new Map(fallbacks.map((f) => [gvrKey(f.current), f]));
  return {
    get config() {
      return client.config;
    },
    get discovery() {
      return client.discovery;
    },
    get restMapper() {
      return client.restMapper;
    },
    request<T = unknown>(...args: Parameters<KubeClient['request']>): Promise<T> {
      return client.request<T>(...args);
    },
    close: () => client.close(),
    resource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource): ResourceInterface<T> {
      const f = byKey.get(gvrKey(gvr));
      return f ? adapt(client.resource<T>(f.older), f, false) : client.resource<T>(gvr);
    },
    metadata(gvr: GroupVersionResource): ResourceInterface<PartialObjectMetadata> {
      const f = byKey.get(gvrKey(gvr));
      return f ? adapt(client.metadata(f.older), f, true) : client.metadata(gvr);
    },
  };
}

/** What a server serves, for starting only the informers it can feed. */
export interface ServedResources {
  /** `group/version/resource` (`v1/pods` for the core group) of every resource served in any version, plus the current version of each fallback. */
  served: Set<string>;
  /** The resources served only in an older version (a 1.20 server: batch/v1beta1 CronJob, ...), to use through withVersionFallbacks. */
  fallbacks: VersionFallback[];
  /** Set when some group versions could not be discovered. */
  error?: Error;
}

/** The key of `served`: `apps/v1/deployments`, `v1/pods`. */
export function servedKey(g: GroupVersionResource): string {
  return `${g.group ? `${g.group}/` : ''}${g.version}/${g.resource}`;
}

/** Discovers what the server serves (preferred and every other version) and the version fallbacks it needs. */
export async function discoverServed(client: KubeClient): Promise<ServedResources> {
  const preferred = await client.discovery.serverPreferredResources();
  const all = await client.discovery.serverGroupsAndResources();
  const served = new Set<string>();
  for (const l of [...preferred.resources, ...all.resources]) for (const r of l.resources) served.add(`${l.groupVersion}/${r.name}`);
  const fallbacks = chooseVersionFallbacks((r) => served.has(servedKey(r)));
  for (const f of fallbacks) served.add(servedKey(f.current));
  return { served, fallbacks, ...(preferred.error ? { error: preferred.error } : {}) };
}
