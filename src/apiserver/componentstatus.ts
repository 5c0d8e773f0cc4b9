/**
 * `GET /api/v1/componentstatuses` (deprecated upstream, still used by
 * `kubectl get cs`): kube-apiserver builds these on request by probing each
 * component, nothing is stored. kcm reports:
 *
 * - `etcd-0`: the storage answers (kcm's storage stands where etcd would).
 * - `controller-manager` / `scheduler`: healthy when the component holds its
 *   Lease in kube-system and renewed it within the lease duration (what
 *   `kcm up` and leader-electing components do); otherwise probed as
 *   upstream does, at https://127.0.0.1:10257/healthz and :10259/healthz.
 */
import { request } from 'node:https';
import type { KubeObject } from '../api/types.js';
import type { RequestScope, ServerContext } from './context.js';
import { includeObjectParam, writeJson } from './output.js';
import { storagePrefix } from './store.js';
import { toTable, partialObjectMetadata } from './table.js';
import { notFound } from './status.js';

interface Probe {
  healthy: boolean;
  message: string;
  error: string;
}

const LEASE_COMPONENTS: Array<{ name: string; lease: string; url: string }> = [
  { name: 'scheduler', lease: 'kube-scheduler', url: 'https://127.0.0.1:10259/healthz' },
  { name: 'controller-manager', lease: 'kube-controller-manager', url: 'https://127.0.0.1:10257/healthz' },
];

function httpProbe(url: string): Promise<Probe> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 1000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        resolve(res.statusCode === 200 && body.trim() === 'ok' ? { healthy: true, message: 'ok', error: '' } : { healthy: false, message: '', error: `Get "${url}": unhealthy (${res.statusCode}): ${body.trim().slice(0, 200)}` }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const host = new URL(url).host;
      const why = err.code === 'ECONNREFUSED' ? `dial tcp ${host}: connect: connection refused` : err.message;
      resolve({ healthy: false, message: '', error: `Get "${url}": ${why}` });
    });
    req.end();
  });
}

async function leaseHeld(server: ServerContext, name: string): Promise<boolean> {
  const r = server.resources.storageResource('coordination.k8s.io', 'leases');
  if (!r) return false;
  const got = await server.storage.get(`${storagePrefix(r, 'kube-system')}${name}`);
  const spec = (got?.object as { spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number } } | undefined)?.spec;
  if (!spec?.holderIdentity || !spec.renewTime) return false;
  const renewed = Date.parse(spec.renewTime);
  return !Number.isNaN(renewed) && server.clock.now() - renewed <= (spec.leaseDurationSeconds ?? 15) * 1000;
}

async function probeAll(server: ServerContext): Promise<KubeObject[]> {
  const results = await Promise.all(
    LEASE_COMPONENTS.map(async (c) => ({ name: c.name, probe: (await leaseHeld(server, c.lease)) ? { healthy: true, message: 'ok', error: '' } : await httpProbe(c.url) })),
  );
  let etcd: Probe;
  try {
    await server.storage.get('/registry/health');
    etcd = { healthy: true, message: 'ok', error: '' };
  } catch (err) {
    etcd = { healthy: false, message: '', error: err instanceof Error ? err.message : String(err) };
  }
  results.push({ name: 'etcd-0', probe: etcd });
  return results.map(({ name, probe }) => ({
    kind: 'ComponentStatus',
    apiVersion: 'v1',
    metadata: { name },
    conditions: [{ type: 'Healthy', status: probe.healthy ? 'True' : 'False', message: probe.message, ...(probe.error ? { error: probe.error } : {}) }],
  }));
}

const deprecation = '299 - "v1 ComponentStatus is deprecated in v1.19+"';

/** list and get of componentstatuses. */
export async function handleComponentStatuses(s: RequestScope): Promise<void> {
  s.res.setHeader('Warning', deprecation);
  let items = await probeAll(s.server);
  if (s.name) {
    items = items.filter((o) => o.metadata?.name === s.name);
    if (items.length === 0) throw notFound({ group: '', resource: 'componentstatuses' }, s.name);
  }
  const single = s.name ? items[0]! : undefined;
  switch (s.rendering) {
    case 'object':
      return writeJson(s.res, 200, single ?? { kind: 'ComponentStatusList', apiVersion: 'v1', metadata: {}, items });
    case 'metadata':
      return writeJson(s.res, 200, single ? partialObjectMetadata(single) : { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: {}, items: items.map(partialObjectMetadata) });
    case 'table':
      return writeJson(s.res, 200, toTable('', 'componentstatuses', items, includeObjectParam(s.query), s.server.clock.now(), {}));
  }
}
