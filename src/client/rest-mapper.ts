/**
 * REST mapper over discovery (client-go's DeferredDiscoveryRESTMapper):
 * kind <-> resource, scope and preferred version. A lookup that misses
 * refreshes discovery once before failing, so CRDs added later are found.
 */
import type { GroupVersionKind, GroupVersionResource } from '../api/types.js';
import type { DiscoveryClient } from './discovery.js';
import { splitGroupVersion } from './discovery.js';
import type { Logger } from '../util/log/logger.js';

export interface RestMapping {
  gvr: GroupVersionResource;
  gvk: GroupVersionKind;
  namespaced: boolean;
}

/** No resource or kind matched, even after refreshing discovery. */
export class NoMatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoMatchError';
  }
}

export function isNoMatch(err: unknown): err is NoMatchError {
  return err instanceof NoMatchError;
}

export interface RestMapper {
  /**
   * The resource in its preferred version (or `version`). `resource` may be
   * the plural, singular or a short name; `group` undefined searches every
   * group in discovery order.
   */
  resourceFor(group: string | undefined, resource: string, version?: string): Promise<GroupVersionResource>;
  /** The kind served at a resource. */
  kindFor(gvr: GroupVersionResource): Promise<GroupVersionKind>;
  /** The mapping for a kind, in its preferred version unless `version` is given. */
  restMapping(group: string, kind: string, version?: string): Promise<RestMapping>;
  /** The mapping for a resource (scope included). */
  mappingFor(gvr: GroupVersionResource): Promise<RestMapping>;
  /** Forgets the mapping; the next lookup reads discovery again. */
  reset(): void;
}

interface Entry {
  mapping: RestMapping;
  singular: string;
  shortNames: string[];
  /** Order of the version in its group (0 = preferred), then discovery order. */
  rank: number;
}

class DiscoveryRestMapper implements RestMapper {
  private entries?: Promise<Entry[]>;

  constructor(
    private readonly discovery: DiscoveryClient,
    private readonly log?: Logger,
  ) {}

  reset(): void {
    this.entries = undefined;
  }

  private load(): Promise<Entry[]> {
    if (!this.entries) {
      const p = this.build();
      this.entries = p;
      p.catch(() => {
        if (this.entries === p) this.entries = undefined;
      });
    }
    return this.entries;
  }

  private async build(): Promise<Entry[]> {
    const { groups, resources, error } = await this.discovery.serverGroupsAndResources();
    if (error) this.log?.warn({ err: error.message }, 'REST mapper built from partial discovery');
    const rankOf = new Map<string, number>();
    let groupIndex = 0;
    for (const g of groups) {
      const pref = g.preferredVersion?.groupVersion;
      const ordered = [...g.versions].sort((a, b) => (a.groupVersion === pref ? -1 : b.groupVersion === pref ? 1 : 0));
      ordered.forEach((v, i) => rankOf.set(v.groupVersion, groupIndex * 1000 + i));
      groupIndex++;
    }
    const entries: Entry[] = [];
    for (const list of resources) {
      const { group, version } = splitGroupVersion(list.groupVersion);
      for (const r of list.resources) {
        if (r.name.includes('/')) continue;
        entries.push({
          mapping: {
            gvr: { group, version, resource: r.name },
            gvk: { group: r.group ?? group, version: r.version ?? version, kind: r.kind },
            namespaced: r.namespaced,
          },
          singular: r.singularName || r.kind.toLowerCase(),
          shortNames: r.shortNames ?? [],
          rank: rankOf.get(list.groupVersion) ?? Number.MAX_SAFE_INTEGER,
        });
      }
    }
    entries.sort((a, b) => a.rank - b.rank);
    return entries;
  }

  /** Finds the best entry, refreshing discovery once on a miss. */
  private async find(pred: (e: Entry) => boolean, what: string): Promise<Entry> {
    let hit = (await this.load()).find(pred);
    if (hit) return hit;
    this.discovery.invalidate();
    this.reset();
    hit = (await this.load()).find(pred);
    if (hit) return hit;
    throw new NoMatchError(what);
  }

  async resourceFor(group: string | undefined, resource: string, version?: string): Promise<GroupVersionResource> {
    const name = resource.toLowerCase();
    const e = await this.find(
      (x) =>
        (group === undefined || x.mapping.gvr.group === group) &&
        (!version || x.mapping.gvr.version === version) &&
        (x.mapping.gvr.resource === name || x.singular === name || x.shortNames.includes(name)),
      `the server doesn't have a resource type "${group ? `${resource}.${group}` : resource}"${version ? ` in version "${version}"` : ''}`,
    );
    return e.mapping.gvr;
  }

  async kindFor(gvr: GroupVersionResource): Promise<GroupVersionKind> {
    return (await this.mappingFor(gvr)).gvk;
  }

  async mappingFor(gvr: GroupVersionResource): Promise<RestMapping> {
    const e = await this.find(
      (x) => x.mapping.gvr.group === gvr.group && x.mapping.gvr.version === gvr.version && x.mapping.gvr.resource === gvr.resource,
      `no matches for resource "${gvr.resource}" in version "${gvr.group ? `${gvr.group}/` : ''}${gvr.version}"`,
    );
    return e.mapping;
  }

  async restMapping(group: string, kind: string, version?: string): Promise<RestMapping> {
    const e = await this.find(
      (x) => x.mapping.gvk.group === group && x.mapping.gvk.kind === kind && (!version || x.mapping.gvk.version === version),
      `no matches for kind "${kind}" in ${version ? `version "${group ? `${group}/` : ''}${version}"` : `group "${group}"`}`,
    );
    return e.mapping;
  }
}

export function newRestMapper(discovery: DiscoveryClient, log?: Logger): RestMapper {
  return new DiscoveryRestMapper(discovery, log);
}
