/**
 * Legacy (unaggregated) discovery documents: /api, /api/v1, /apis,
 * /apis/<group>, /apis/<group>/<version>, and /version. Requests asking for
 * aggregated discovery (apidiscovery.k8s.io) get these too, as
 * application/json, which kubectl and client-go accept as the fallback.
 */
import { createHash } from 'node:crypto';
import type { ResourceTable, ServedResource } from './resources.js';

export const serverVersion = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0-kcm',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-04-23T00:00:00Z',
  goVersion: 'go1.24.2',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function apiVersions(): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
}

function groupDoc(g: { group: string; versions: string[] }): object {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.group}/${v}`, version: v }));
  return { name: g.group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(t: ResourceTable): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: t.groups().filter((g) => g.group !== '').map(groupDoc) };
}

export function apiGroup(t: ResourceTable, group: string): object | undefined {
  const g = t.groups().find((x) => x.group === group && group !== '');
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g) } : undefined;
}

function resourceEntry(t: ResourceTable, r: ServedResource): Record<string, unknown> {
  const e: Record<string, unknown> = { name: r.resource, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: [...r.verbs] };
  if (r.shortNames.length) e.shortNames = [...r.shortNames];
  if (r.categories.length) e.categories = [...r.categories];
  const hash = storageVersionHash(t, r);
  if (hash) e.storageVersionHash = hash;
  return e;
}

/**
 * The storageVersionHash of a stored resource (upstream's
 * discovery.StorageVersionHash): the first 8 bytes of the SHA-256 of
 * "<group>/<version>/<kind>" of the version it is stored in, base64. Storage
 * version migrators compare it; resources without storage (reviews,
 * bindings, componentstatuses) have none.
 */
export function storageVersionHash(t: ResourceTable, r: ServedResource): string | undefined {
  if (r.virtual || (r.group === '' && r.resource === 'componentstatuses')) return undefined;
  // events.k8s.io Events are stored as core v1 Events.
  const s = r.group === 'events.k8s.io' && r.resource === 'events' ? { group: '', version: 'v1', kind: 'Event' } : t.storageResource(r.group, r.resource) ?? r;
  return createHash('sha256').update(`${s.group}/${s.version}/${s.kind}`).digest().subarray(0, 8).toString('base64');
}

export function apiResourceList(t: ResourceTable, group: string, version: string): object | undefined {
  const rs = t.all().filter((r) => r.group === group && r.version === version);
  if (!rs.length) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const r of rs) {
    resources.push(resourceEntry(t, r));
    for (const sub of r.subresources.values()) {
      // Go's APIResource field order: group and version come before kind.
      const e: Record<string, unknown> = { name: `${r.resource}/${sub.name}`, singularName: '', namespaced: r.namespaced };
      if (sub.group !== r.group || sub.version !== r.version) {
        e.group = sub.group;
        e.version = sub.version;
      }
      e.kind = sub.kind;
      e.verbs = [...sub.verbs];
      resources.push(e);
    }
  }
  // kube-apiserver's core list (/api/v1) has no apiVersion; the groups' lists have "v1".
  if (!group) return { kind: 'APIResourceList', groupVersion: version, resources };
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
}

/**
 * The aggregated discovery version the Accept header asks for ('v2' or
 * 'v2beta1'), or undefined for legacy discovery. Alternatives are taken in
 * order, as client-go lists them (v2, v2beta1, then plain JSON).
 */
export function wantsAggregatedDiscovery(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  for (const alt of accept.split(',')) {
    const [type, ...params] = alt.split(';').map((x) => x.trim());
    if (type !== 'application/json') continue;
    const p = new Map(params.map((x) => { const i = x.indexOf('='); return [x.slice(0, i).trim(), x.slice(i + 1).trim()] as [string, string]; }));
    if (!p.has('g') && !p.has('as')) return undefined;
    if (p.get('g') !== 'apidiscovery.k8s.io' || p.get('as') !== 'APIGroupDiscoveryList') continue;
    const v = p.get('v');
    if (v === 'v2' || v === 'v2beta1') return v;
  }
  return undefined;
}

function scopeOf(r: ServedResource): string {
  return r.namespaced ? 'Namespaced' : 'Cluster';
}

function discoveryResource(r: ServedResource): Record<string, unknown> {
  const e: Record<string, unknown> = {
    resource: r.resource,
    responseKind: { group: r.group, version: r.version, kind: r.kind },
    scope: scopeOf(r),
    singularResource: r.singular,
    verbs: [...r.verbs],
  };
  if (r.shortNames.length) e.shortNames = [...r.shortNames];
  if (r.categories.length) e.categories = [...r.categories];
  if (r.subresources.size) {
    e.subresources = [...r.subresources.values()].map((sub) => ({
      subresource: sub.name,
      responseKind: { group: sub.group, version: sub.version, kind: sub.kind },
      verbs: [...sub.verbs],
    }));
  }
  return e;
}

/**
 * The APIGroupDiscoveryList for `/api` ('core': the legacy group only) or
 * `/apis` ('groups': every named group), versions preferred first, each
 * version's resources with their subresources: everything kubectl needs in
 * one round trip.
 */
export function aggregatedDiscovery(t: ResourceTable, which: 'core' | 'groups', version: 'v2' | 'v2beta1'): object {
  const all = t.all();
  const items = t
    .groups()
    .filter((g) => (which === 'core' ? g.group === '' : g.group !== ''))
    .map((g) => {
      const metadata: Record<string, unknown> = { creationTimestamp: null };
      if (g.group) metadata.name = g.group;
      return {
        metadata,
        versions: g.versions
          .map((v) => ({ version: v, resources: all.filter((r) => r.group === g.group && r.version === v).map(discoveryResource), freshness: 'Current' }))
          .filter((v) => v.resources.length > 0),
      };
    })
    .filter((g) => g.versions.length > 0);
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}
