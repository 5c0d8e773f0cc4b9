/**
 * The resources this server serves: the built-in registry (src/api/registry.ts)
 * joined with each resource's Strategy and the store behaviours upstream sets
 * per resource (AllowCreateOnUpdate, ReturnDeletedObject).
 */
import { builtinResources, groupVersions, type ResourceInfo } from '../api/registry.js';
import { strategyFor, type Strategy } from './registry/strategy.js';

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
}

function toSubresources(info: ResourceInfo): Map<string, SubresourceInfo> {
  const out = new Map<string, SubresourceInfo>();
  for (const [name, sub] of Object.entries(info.subresources)) {
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
    list.push(r);
    byKey.set(`${info.group}/${info.version}/${info.resource}`, r);
  }
  const gvs = groupVersions();
  return {
    find: (g, v, res) => byKey.get(`${g}/${v}/${res}`),
    all: () => list,
    groups: () => gvs.map((x) => ({ group: x.group, versions: [...x.versions] })),
    storageResource(group, resource) {
      const gv = gvs.find((x) => x.group === group);
      for (const v of gv?.versions ?? []) {
        const r = byKey.get(`${group}/${v}/${resource}`);
        if (r) return r;
      }
      return list.find((r) => r.group === group && r.resource === resource);
    },
  };
}
