/**
 * The resources this server serves: the built-in registry (src/api/registry.ts)
 * joined with each resource's Strategy and the store behaviours upstream sets
 * per resource (AllowCreateOnUpdate, ReturnDeletedObject).
 */
import { builtinResources, groupVersions, type ResourceInfo } from '../api/registry.js';
import { strategyFor, type Strategy } from './registry/strategy.js';
import { conversionFor } from './registry/conversions.js';
import type { KubeObject } from '../api/types.js';

export interface SubresourceInfo {
  name: string;
  kind: string;
  group: string;
  version: string;
  verbs: string[];
}

export interface ServedResource {
  group: string;
  version: string;
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  subresources: Map<string, SubresourceInfo>;
  strategy: Strategy;
  /** PUT to a missing object creates it (upstream AllowCreateOnUpdate). */
  allowCreateOnUpdate: boolean;
  /** DELETE answers with the deleted object rather than a Status (upstream ReturnDeletedObject). */
  returnDeletedObject: boolean;
  /** Create-only virtual resources (reviews, bindings) are not stored. */
  virtual: boolean;
  /** Served from a CustomResourceDefinition (json/merge/apply patches only; added and removed at run time). */
  customResource?: boolean;
  /** For custom resources: this is the CRD's storage version. */
  storageVersion?: boolean;
  /**
   * Applied to a private copy of every object read from storage before it is
   * served (get, list, watch, and the old object of an update). Custom
   * resources prune and default there, as apiextensions-apiserver does when
   * decoding from etcd, so a default added to a CRD later shows on reads.
   */
  decode?(obj: KubeObject): void;
  /**
   * Applied to the object about to be stored (after validation and Go's JSON
   * round trip), in place: a built-in kind served in another version than
   * its storage's is converted to the stored shape (registry/conversions.ts).
   */
  encode?(obj: KubeObject): void;
  /** Stored under another group/resource (events.k8s.io Events are core Events). */
  storedAs?: { group: string; resource: string };
  /**
   * Custom resources: converts objects (each in any version of this
   * resource, as its apiVersion says) to `version`, as the CRD's conversion
   * strategy does (None: apiVersion only; Webhook: one ConversionReview for
   * all that need it), pruned with that version's schema. Objects already
   * at `version` are not sent. Returns copies. Rejects with a StatusError
   * with upstream's texts (`conversion webhook for ... failed: ...`).
   */
  convert?(objs: KubeObject[], version: string): Promise<KubeObject[]>;
  /**
   * Custom resources: stored objects (each at the version it was stored at)
   * served at this version: decoded with their stored version's schema
   * (pruned, defaulted), converted as `convert` does (one call for all;
   * `list`: they are a list's items), pruned with this version's schema.
   * Used instead of `decode` wherever objects leave storage (store.ts
   * presentStored). Returns fresh copies; rejects as `convert` does.
   */
  fromStorage?(objs: readonly KubeObject[], opts?: { list?: boolean }): Promise<KubeObject[]>;
  /**
   * Custom resources: the object about to be stored (served at this
   * version, final) converted to the CRD's storage version and pruned with
   * its schema. Used instead of `encode`. Rejects as `convert` does.
   */
  toStorage?(obj: KubeObject): Promise<KubeObject>;
  /**
   * Custom resources: the fields of `obj` (outside apiVersion, kind and
   * metadata) their structural schema does not know, as pruning reports
   * them (`spec.foo`, `spec.list[0].bar`), sorted. Field validation and
   * server-side apply use it instead of the published OpenAPI.
   */
  unknownFields?(obj: KubeObject): string[];
}

const returnDeleted = new Set(['/pods', '/services', '/namespaces']);

export interface ResourceTable {
  /** The resource at exactly this group/version, or undefined. */
  find(group: string, version: string, resource: string): ServedResource | undefined;
  /** Every served resource, each group/version once. */
  all(): readonly ServedResource[];
  /** Preferred-first versions per group, in discovery order (core first as ''). */
  groups(): { group: string; versions: string[] }[];
  /** The storage version of a group/resource (the preferred one), for keys and cross-version reads. */
  storageResource(group: string, resource: string): ServedResource | undefined;
  /**
   * Replaces the dynamic resources registered under `owner` (a CRD name) with
   * `resources` (empty: removes them); `versionOrder` lists the group's
   * versions preferred first. Built-in resources cannot be replaced.
   */
  setDynamic(owner: string, resources: ServedResource[]): void;
  /** Called after every setDynamic (discovery and OpenAPI caches). */
  onChange(listener: () => void): () => void;
}

/** Served beside the registry's subresources: pods/attach and pods/proxy (node streaming, handlers/node-proxy.ts), as kube-apiserver's discovery lists them. */
const extraSubresources: Record<string, Record<string, Omit<SubresourceInfo, 'name'>>> = {
  '/pods': {
    attach: { kind: 'PodAttachOptions', group: '', version: 'v1', verbs: ['create', 'get'] },
    proxy: { kind: 'PodProxyOptions', group: '', version: 'v1', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
  },
};

function toSubresources(info: ResourceInfo): Map<string, SubresourceInfo> {
  const out = new Map<string, SubresourceInfo>();
  const extra = info.version === 'v1' ? extraSubresources[`${info.group}/${info.resource}`] : undefined;
  const all: Record<string, Omit<SubresourceInfo, 'name'>> = { ...(extra ?? {}), ...(info.subresources as unknown as Record<string, Omit<SubresourceInfo, 'name'>>) };
  const names = extra ? Object.keys(all).sort() : Object.keys(all);
  for (const name of names) {
    const sub = all[name]!;
    out.set(name, { name, kind: sub.kind, group: sub.group, version: sub.version, verbs: [...sub.verbs] });
  }
  return out;
}

export function newResourceTable(): ResourceTable {
  const list: ServedResource[] = [];
  const byKey = new Map<string, ServedResource>();
  for (const info of builtinResources) {
    const verbs = [...info.verbs];
    const strategy = strategyFor(info.group, info.resource, { kind: info.kind, namespaced: info.namespaced });
    const r: ServedResource = {
      group: info.group,
      version: info.version,
      resource: info.resource,
      singular: info.singular,
      kind: info.kind,
      listKind: info.listKind,
      namespaced: info.namespaced,
      shortNames: [...info.shortNames],
      categories: [...info.categories],
      verbs,
      subresources: toSubresources(info),
      strategy,
      allowCreateOnUpdate: strategy.allowCreateOnUpdate,
      returnDeletedObject: returnDeleted.has(`${info.group}/${info.resource}`),
      virtual: !verbs.includes('get') && !verbs.includes('list'),
    };
    const conv = conversionFor(info.group, info.version, info.resource);
    if (conv) {
      r.encode = conv.encode;
      r.decode = conv.decode;
      if (conv.storedAs) r.storedAs = conv.storedAs;
    }
    list.push(r);
    byKey.set(`${info.group}/${info.version}/${info.resource}`, r);
  }
  const builtinGvs = groupVersions().map((x) => ({ group: x.group, versions: [...x.versions] }));
  const builtinList = [...list];
  const dynamic = new Map<string, ServedResource[]>();
  const listeners = new Set<() => void>();
  let all: readonly ServedResource[] = builtinList;
  let gvs = builtinGvs;
  const rebuild = () => {
    const extra = [...dynamic.values()].flat();
    all = [...builtinList, ...extra];
    byKey.clear();
    for (const r of all) if (!byKey.has(`${r.group}/${r.version}/${r.resource}`)) byKey.set(`${r.group}/${r.version}/${r.resource}`, r);
    const groups = new Map<string, Set<string>>();
    for (const r of extra) {
      if (builtinGvs.some((g) => g.group === r.group)) continue;
      let set = groups.get(r.group);
      if (!set) groups.set(r.group, (set = new Set()));
      set.add(r.version);
    }
    const added = [...groups.keys()].sort().map((group) => ({ group, versions: [...groups.get(group)!].sort(compareKubeAwareVersions) }));
    gvs = [...builtinGvs, ...added];
  };
  return {
    find: (g, v, res) => byKey.get(`${g}/${v}/${res}`),
    all: () => all,
    groups: () => gvs.map((x) => ({ group: x.group, versions: [...x.versions] })),
    storageResource(group, resource) {
      const candidates = all.filter((r) => r.group === group && r.resource === resource);
      const stored = candidates.find((r) => r.storageVersion);
      if (stored) return stored;
      const gv = gvs.find((x) => x.group === group);
      for (const v of gv?.versions ?? []) {
        const r = byKey.get(`${group}/${v}/${resource}`);
        if (r) return r;
      }
      return candidates[0];
    },
    setDynamic(owner, resources) {
      const kept = resources.filter((r) => !builtinList.some((b) => b.group === r.group && b.version === r.version && b.resource === r.resource));
      if (kept.length) dynamic.set(owner, kept);
      else if (!dynamic.delete(owner)) return;
      rebuild();
      for (const l of [...listeners]) l();
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * apimachinery version.CompareKubeAwareVersionStrings as a sort comparator
 * (preferred first): GA before beta before alpha, higher numbers first, then
 * non-Kubernetes versions alphabetically.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return { major: Number(m[1]), rank: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, minor: m[3] ? Number(m[3]) : 0 };
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && pb) {
    if (pa.rank !== pb.rank) return pb.rank - pa.rank;
    if (pa.major !== pb.major) return pb.major - pa.major;
    return pb.minor - pa.minor;
  }
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
