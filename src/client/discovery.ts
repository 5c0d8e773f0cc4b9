/**
 * Discovery (client-go's DiscoveryClient, memory-cached): API groups,
 * resources per group version, preferred resources and the server version.
 * Answers are cached until invalidate(). A group version that fails to
 * answer does not fail the whole call: the others are returned with the
 * failures listed (client-go's ErrGroupDiscoveryFailed).
 */
import type { APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions } from 'kubernetes-types/meta/v1.js';
import type { Info } from 'kubernetes-types/version.js';
import { isNotFound } from './errors.js';
import type { RestClient } from './rest-client.js';

export type { APIGroup, APIGroupList, APIResource, APIResourceList, Info as VersionInfo };

/** Some group versions could not be discovered; `failed` maps `group/version` to its error. */
export class GroupDiscoveryFailedError extends Error {
  constructor(readonly failed: Map<string, unknown>) {
    super(`unable to retrieve the complete list of server APIs: ${[...failed].map(([gv, e]) => `${gv}: ${(e as Error)?.message ?? String(e)}`).join(', ')}`);
    this.name = 'GroupDiscoveryFailedError';
  }
}

export interface GroupsAndResources {
  groups: APIGroup[];
  /** One list per group version that answered, in discovery order. */
  resources: APIResourceList[];
  /** Set when some group versions failed. */
  error?: GroupDiscoveryFailedError;
}

export interface PreferredResources {
  /** Per group version, the resources served in their preferred version (subresources left out). */
  resources: APIResourceList[];
  error?: GroupDiscoveryFailedError;
}

export interface DiscoveryClient {
  /** Every group, the core group ('') first, with its versions in preference order. */
  serverGroups(): Promise<APIGroupList>;
  /** `v1` or `apps/v1`. */
  serverResourcesForGroupVersion(groupVersion: string): Promise<APIResourceList>;
  serverGroupsAndResources(): Promise<GroupsAndResources>;
  serverPreferredResources(): Promise<PreferredResources>;
  serverVersion(): Promise<Info>;
  /** Forgets every cached answer. */
  invalidate(): void;
}

/**
 * Whether a server reporting `version` (GET /version: `major`, and `minor`
 * with a possible '+' suffix) is older than 1.`minor`. False when the
 * version cannot be read: unknown servers are taken as current.
 */
export function serverOlderThan(version: { major?: string; minor?: string }, minor: number): boolean {
  const maj = parseInt(version.major ?? '', 10);
  const min = parseInt(version.minor ?? '', 10);
  if (Number.isNaN(maj) || Number.isNaN(min)) return false;
  return maj < 1 || (maj === 1 && min < minor);
}

function gvPath(gv: string): string {
  return gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`;
}

/** Splits a resource list's groupVersion. */
function splitGv(gv: string): { group: string; version: string } {
  const i = gv.indexOf('/');
  return i < 0 ? { group: '', version: gv } : { group: gv.slice(0, i), version: gv.slice(i + 1) };
}

class CachedDiscovery implements DiscoveryClient {
  private groups?: Promise<APIGroupList>;
  private readonly resources = new Map<string, Promise<APIResourceList>>();
  private version?: Promise<Info>;

  constructor(private readonly rest: RestClient) {}

  invalidate(): void {
    this.groups = undefined;
    this.resources.clear();
    this.version = undefined;
  }

  serverGroups(): Promise<APIGroupList> {
    if (!this.groups) {
      const p = this.fetchGroups();
      this.groups = p;
      p.catch(() => {
        if (this.groups === p) this.groups = undefined;
      });
    }
    return this.groups;
  }

  private async fetchGroups(): Promise<APIGroupList> {
    const groups: APIGroup[] = [];
    let legacy: APIVersions | undefined;
    try {
      legacy = await this.rest.request<APIVersions>('GET', '/api');
    } catch (err) {
      // A server without the core group (an aggregated API server) answers 404.
      if (!isNotFound(err)) throw err;
    }
    if (legacy?.versions?.length) {
      const versions = legacy.versions.map((v) => ({ groupVersion: v, version: v }));
      groups.push({ name: '', versions, preferredVersion: versions[0] });
    }
    const list = await this.rest.request<APIGroupList>('GET', '/apis');
    groups.push(...(list?.groups ?? []));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  serverResourcesForGroupVersion(groupVersion: string): Promise<APIResourceList> {
    let p = this.resources.get(groupVersion);
    if (!p) {
      const q = this.rest.request<APIResourceList>('GET', gvPath(groupVersion)).then((r) => {
        const list = r ?? ({ groupVersion, resources: [] } as APIResourceList);
        list.groupVersion ||= groupVersion;
        list.resources ??= [];
        return list;
      });
      p = q;
      this.resources.set(groupVersion, q);
      q.catch(() => {
        if (this.resources.get(groupVersion) === q) this.resources.delete(groupVersion);
      });
    }
    return p;
  }

  async serverGroupsAndResources(): Promise<GroupsAndResources> {
    const { groups } = await this.serverGroups();
    const gvs = groups.flatMap((g) => g.versions.map((v) => v.groupVersion));
    const results = await Promise.allSettled(gvs.map((gv) => this.serverResourcesForGroupVersion(gv)));
    const resources: APIResourceList[] = [];
    const failed = new Map<string, unknown>();
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') resources.push(r.value);
      else failed.set(gvs[i]!, r.reason);
    });
    return failed.size ? { groups, resources, error: new GroupDiscoveryFailedError(failed) } : { groups, resources };
  }

  async serverPreferredResources(): Promise<PreferredResources> {
    const { groups, resources, error } = await this.serverGroupsAndResources();
    const byGv = new Map(resources.map((r) => [r.groupVersion, r]));
    const out: APIResourceList[] = [];
    for (const g of groups) {
      const seen = new Set<string>();
      const versions = [...g.versions];
      const pref = g.preferredVersion?.groupVersion;
      versions.sort((a, b) => (a.groupVersion === pref ? -1 : b.groupVersion === pref ? 1 : 0));
      for (const v of versions) {
        const list = byGv.get(v.groupVersion);
        if (!list) continue;
        const picked: APIResource[] = [];
        for (const r of list.resources) {
          if (r.name.includes('/') || seen.has(r.name)) continue;
          seen.add(r.name);
          picked.push(r);
        }
        if (picked.length) out.push({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: v.groupVersion, resources: picked });
      }
    }
    return error ? { resources: out, error } : { resources: out };
  }

  serverVersion(): Promise<Info> {
    if (!this.version) {
      const p = this.rest.request<Info>('GET', '/version');
      this.version = p;
      p.catch(() => {
        if (this.version === p) this.version = undefined;
      });
    }
    return this.version;
  }
}

export function newDiscoveryClient(rest: RestClient): DiscoveryClient {
  return new CachedDiscovery(rest);
}

export { splitGv as splitGroupVersion };
