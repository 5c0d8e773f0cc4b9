/**
 * The resources the quota system counts (resource_quota_controller.go's
 * GetQuotableResources): every namespaced resource, in its preferred
 * version, that supports create, list, watch and delete, minus the ones
 * quota ignores (events, virtual review resources).
 */
import { parseApiVersion, type GroupVersionResource } from '../../api/types.js';
import { isIgnoredQuotaResource } from '../../api/quota/index.js';
import type { DiscoveryClient } from '../../client/discovery.js';
import type { Logger } from '../../util/log/logger.js';

const REQUIRED_VERBS = ['create', 'list', 'watch', 'delete'];

/**
 * Quotable resources from discovery. Group versions that fail to answer are
 * listed in `failedGroupVersions` (the caller keeps what it had for them).
 */
export async function quotableResources(
  discovery: DiscoveryClient,
  log: Logger,
): Promise<{ resources: GroupVersionResource[]; failedGroupVersions: string[] }> {
  const { resources, error } = await discovery.serverPreferredResources();
  if (error) log.warn({ err: error.message }, 'failed to discover some groups');
  const out: GroupVersionResource[] = [];
  for (const list of resources) {
    const { group, version } = parseApiVersion(list.groupVersion);
    for (const r of list.resources ?? []) {
      if (r.name.includes('/') || !r.namespaced) continue;
      const verbs = new Set(r.verbs ?? []);
      if (!REQUIRED_VERBS.every((v) => verbs.has(v))) continue;
      if (isIgnoredQuotaResource(group, r.name)) continue;
      out.push({ group, version, resource: r.name });
    }
  }
  return { resources: out, failedGroupVersions: error ? [...error.failed.keys()] : [] };
}
