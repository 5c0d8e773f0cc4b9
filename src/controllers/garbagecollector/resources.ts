/**
 * What the garbage collector learns from discovery: the resources it must
 * watch (every resource supporting delete, list and watch, minus events, as
 * upstream's GetDeletableResources and DefaultIgnoredResources) and a REST
 * mapping from an owner reference's apiVersion/kind to its resource and scope.
 */
import type { APIResourceList } from 'kubernetes-types/meta/v1.js';
import { parseApiVersion, type GroupVersionResource } from '../../api/types.js';
import type { DiscoveryClient } from '../../client/discovery.js';
import type { Logger } from '../../util/log/logger.js';

/** A resource the collector tracks: where it lives and the identity its objects carry. */
export interface ResourceInfo {
  gvr: GroupVersionResource;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
}

/** Resources the garbage collector never watches (events are numerous and never owners). */
export const IGNORED_RESOURCES: ReadonlyArray<{ group: string; resource: string }> = [
  { group: '', resource: 'events' },
  { group: 'events.k8s.io', resource: 'events' },
];

function isIgnored(group: string, resource: string, extra: ReadonlyArray<{ group: string; resource: string }>): boolean {
  return [...IGNORED_RESOURCES, ...extra].some((r) => r.group === group && r.resource === resource);
}

function infos(lists: APIResourceList[]): ResourceInfo[] {
  const out: ResourceInfo[] = [];
  for (const list of lists) {
    const { group, version } = parseApiVersion(list.groupVersion);
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue;
      out.push({ gvr: { group, version, resource: r.name }, apiVersion: list.groupVersion, kind: r.kind, namespaced: r.namespaced });
    }
  }
  return out;
}

/**
 * Resources (preferred versions) supporting delete, list and watch. Group
 * versions that fail discovery are skipped with a log line (their resources
 * are kept from the previous answer by the caller).
 */
export async function deletableResources(
  discovery: DiscoveryClient,
  log: Logger,
  ignored: ReadonlyArray<{ group: string; resource: string }> = [],
): Promise<{ resources: ResourceInfo[]; failedGroupVersions: string[] }> {
  const { resources, error } = await discovery.serverPreferredResources();
  if (error) log.warn({ err: error.message }, 'failed to discover some groups');
  const out: ResourceInfo[] = [];
  for (const list of resources) {
    const { group, version } = parseApiVersion(list.groupVersion);
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue;
      const verbs = new Set(r.verbs ?? []);
      if (!verbs.has('delete') || !verbs.has('list') || !verbs.has('watch')) continue;
      if (isIgnored(group, r.name, ignored)) continue;
      out.push({ gvr: { group, version, resource: r.name }, apiVersion: list.groupVersion, kind: r.kind, namespaced: r.namespaced });
    }
  }
  return { resources: out, failedGroupVersions: error ? [...error.failed.keys()] : [] };
}

/** apiVersion/kind to resource, over every served group version (not only preferred ones). */
export interface RestMapper {
  /** Undefined when the kind is not served (an unknown CRD kind, a bad group version). */
  mapping(apiVersion: string, kind: string): ResourceInfo | undefined;
  /** Re-reads discovery (call when a lookup failed and the server may have new kinds). */
  refresh(): Promise<void>;
}

class DiscoveryRestMapper implements RestMapper {
  private byKind = new Map<string, ResourceInfo>();
  /** group|kind -> the first served version's mapping. */
  private byGroupKind = new Map<string, ResourceInfo>();
  constructor(
    private readonly discovery: DiscoveryClient,
    private readonly log: Logger,
  ) {}

  mapping(apiVersion: string, kind: string): ResourceInfo | undefined {
    const exact = this.byKind.get(`${apiVersion}|${kind}`);
    if (exact) return exact;
    // An owner written in a version this server does not serve (kcm's batch/v1 CronJob on a 1.20
    // server, which serves batch/v1beta1): the same object is served in another version of its group.
    return this.byGroupKind.get(`${parseApiVersion(apiVersion).group}|${kind}`);
  }

  async refresh(): Promise<void> {
    const { resources, error } = await this.discovery.serverGroupsAndResources();
    if (error) this.log.warn({ err: error.message }, 'failed to discover some groups for the REST mapper');
    const next = new Map<string, ResourceInfo>();
    // Keep mappings of group versions that failed this time.
    if (error) for (const [k, v] of this.byKind) if (error.failed.has(v.apiVersion)) next.set(k, v);
    for (const info of infos(resources)) next.set(`${info.apiVersion}|${info.kind}`, info);
    this.byKind = next;
    const byGroupKind = new Map<string, ResourceInfo>();
    for (const info of next.values()) {
      const k = `${info.gvr.group}|${info.kind}`;
      if (!byGroupKind.has(k)) byGroupKind.set(k, info);
    }
    this.byGroupKind = byGroupKind;
  }
}

export function newRestMapper(discovery: DiscoveryClient, log: Logger): RestMapper {
  return new DiscoveryRestMapper(discovery, log);
}
