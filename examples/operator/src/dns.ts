/**
 * A stand-in for an external DNS provider: records live in the ConfigMap
 * `records` of the DNS namespace (`<domain>: <cluster IP>`). It is outside
 * the StaticSite's namespace, so owner references cannot clean it up: the
 * operator's finalizer removes the record before a StaticSite goes.
 */
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { isNotFound, kinds, type RuntimeClient } from 'kcm/runtime';

export const RECORDS = 'records';

/** The IP `domain` points at, or undefined. Read live: the DNS namespace is not cached. */
export async function lookup(client: RuntimeClient, dnsNamespace: string, domain: string): Promise<string | undefined> {
  const records = await client.live.get(kinds.ConfigMap, { namespace: dnsNamespace, name: RECORDS });
  return records?.data?.[domain];
}

/**
 * Points `domain` at `ip` (creating the records ConfigMap when needed).
 * Returns whether anything changed.
 */
export async function publish(client: RuntimeClient, dnsNamespace: string, domain: string, ip: string): Promise<boolean> {
  const records = await client.live.get(kinds.ConfigMap, { namespace: dnsNamespace, name: RECORDS });
  if (!records) {
    const cm: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: RECORDS, namespace: dnsNamespace }, data: { [domain]: ip } };
    try {
      await client.create(cm);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The DNS namespace does not exist yet.
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: dnsNamespace } });
      await client.create(cm);
    }
    return true;
  }
  if (records.data?.[domain] === ip) return false;
  // A JSON merge patch with the resourceVersion: a concurrent change makes it fail with 409 and the reconcile retries.
  await client.patch(records, { type: 'merge', data: { metadata: { resourceVersion: records.metadata?.resourceVersion }, data: { [domain]: ip } } });
  return true;
}

/** Removes the record of `domain`; returns whether there was one. Fails (and is retried) when the provider refuses. */
export async function unpublish(client: RuntimeClient, dnsNamespace: string, domain: string): Promise<boolean> {
  const records = await client.live.get(kinds.ConfigMap, { namespace: dnsNamespace, name: RECORDS });
  if (!records?.data || !(domain in records.data)) return false;
  await client.patch(records, { type: 'merge', data: { metadata: { resourceVersion: records.metadata?.resourceVersion }, data: { [domain]: null } } });
  return true;
}
