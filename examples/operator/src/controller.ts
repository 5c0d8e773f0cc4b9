/**
 * The StaticSite controller. For each StaticSite it keeps:
 *
 * - a ConfigMap `<name>-content` with the files (createOrUpdate);
 * - a Deployment `<name>` of web servers mounting it, rolled when the files
 *   change (server-side apply, as field manager `staticsite-operator`);
 * - a Service `<name>` in front of them (server-side apply);
 * - a DNS record `<domain> -> <cluster IP>` (dns.ts), removed by the
 *   finalizer `sites.example.com/dns-record` before the site goes;
 * - its status: replicas, availableReplicas, selector (for `kubectl scale`),
 *   clusterIP, url, and the conditions Ready, Progressing and Degraded,
 *   each with the observedGeneration they were computed from.
 *
 * The children carry the site as controller owner: the garbage collector
 * deletes them with it, and a change to any of them (by hand, or their
 * status) reconciles the site again, which puts back what it owns.
 */
import { createHash } from 'node:crypto';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap, Service } from 'kubernetes-types/core/v1.js';
import {
  AlreadyOwnedError,
  TerminalError,
  controller,
  createOrUpdate,
  ensureFinalizer,
  findStatusCondition,
  isInvalid,
  kinds,
  setControllerReference,
  setStatusCondition,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
  type RuntimeController,
} from 'kcm/runtime';
import { publish, unpublish } from './dns.js';
import { StaticSite } from './resources.js';

export const FINALIZER = 'sites.example.com/dns-record';
export const CONTENT_HASH_ANNOTATION = 'sites.example.com/content-hash';
export const FIELD_MANAGER = 'staticsite-operator';

export interface StaticSiteControllerOptions {
  /** Where the DNS records live (default `dns`). */
  dnsNamespace?: string;
  maxConcurrentReconciles?: number;
}

type SiteStatus = NonNullable<StaticSite['status']>;

/** The labels that select a site's pods. */
export function selectorLabels(site: StaticSite): Record<string, string> {
  return { 'app.kubernetes.io/name': 'staticsite', 'app.kubernetes.io/instance': site.metadata!.name! };
}

function labels(site: StaticSite): Record<string, string> {
  return { ...selectorLabels(site), 'app.kubernetes.io/managed-by': FIELD_MANAGER };
}

/** A short hash of the files, so that new content rolls the pods. */
export function contentHash(content: Record<string, string>): string {
  const h = createHash('sha256');
  for (const name of Object.keys(content).sort()) h.update(`${name}\0${content[name]}\0`);
  return h.digest('hex').slice(0, 16);
}

export function desiredDeployment(site: StaticSite): Deployment {
  const name = site.metadata!.name!;
  const d: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: site.metadata!.namespace, labels: labels(site) },
    spec: {
      replicas: site.spec.replicas,
      selector: { matchLabels: selectorLabels(site) },
      template: {
        metadata: { labels: selectorLabels(site), annotations: { [CONTENT_HASH_ANNOTATION]: contentHash(site.spec.content) } },
        spec: {
          containers: [
            {
              name: 'web',
              image: site.spec.image,
              ports: [{ name: 'http', containerPort: 80 }],
              volumeMounts: [{ name: 'content', mountPath: '/usr/share/nginx/html', readOnly: true }],
            },
          ],
          volumes: [{ name: 'content', configMap: { name: `${name}-content` } }],
        },
      },
    },
  };
  setControllerReference(site, d);
  return d;
}

export function desiredService(site: StaticSite): Service {
  const s: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: site.metadata!.name!, namespace: site.metadata!.namespace, labels: labels(site) },
    spec: { selector: selectorLabels(site), ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  };
  setControllerReference(site, s);
  return s;
}

/** The status a site should have, given its children as they are. Pure: it only fills in what changed. */
export function computeStatus(site: StaticSite, deployment: Deployment | undefined, service: Service | undefined, now?: string): SiteStatus {
  const generation = site.metadata?.generation ?? 0;
  const status: SiteStatus = structuredClone(site.status ?? {});
  const want = site.spec.replicas;
  const replicas = deployment?.status?.replicas ?? 0;
  const available = deployment?.status?.availableReplicas ?? 0;
  const updated = deployment?.status?.updatedReplicas ?? 0;
  status.observedGeneration = generation;
  status.replicas = replicas;
  status.availableReplicas = available;
  status.selector = Object.entries(selectorLabels(site))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (service?.spec?.clusterIP) status.clusterIP = service.spec.clusterIP;
  status.url = `http://${site.spec.domain}`;
  const set = (type: string, s: 'True' | 'False' | 'Unknown', reason: string, message: string) =>
    setStatusCondition(status, { type, status: s, reason, message, observedGeneration: generation, ...(now ? { lastTransitionTime: now } : {}) });
  const rolledOut =
    !!deployment &&
    (deployment.status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 1) &&
    updated >= want &&
    replicas === want;
  if (want === 0) set('Ready', 'False', 'ScaledToZero', 'The site has no web server pods');
  else if (available >= want) set('Ready', 'True', 'Available', `${available}/${want} web server pods available at ${status.url}`);
  else set('Ready', 'False', 'Unavailable', `${available}/${want} web server pods available`);
  if (rolledOut) set('Progressing', 'False', 'RolloutComplete', `${updated} pods serve the current content`);
  else set('Progressing', 'True', 'RollingOut', `${updated}/${want} pods updated`);
  set('Degraded', 'False', 'AsExpected', 'The last reconcile succeeded');
  return status;
}

function sameStatus(a: SiteStatus | undefined, b: SiteStatus): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b);
}

/** One reconcile of one StaticSite. */
export function staticSiteReconciler(opts: StaticSiteControllerOptions = {}) {
  const dnsNamespace = opts.dnsNamespace ?? 'dns';
  return async (ctx: ReconcileContext<StaticSite>, req: Request): Promise<Result | void> => {
    const site = await ctx.get();
    if (!site) return; // deleted: the garbage collector takes the children
    const { client, recorder } = ctx;

    const state = await ensureFinalizer(client, site, FINALIZER, async (s) => {
      try {
        if (await unpublish(client, dnsNamespace, s.spec.domain)) recorder.event(s, 'Normal', 'DNSRecordRemoved', `Removed the DNS record of ${s.spec.domain}`);
      } catch (err) {
        recorder.event(s, 'Warning', 'DNSCleanupFailed', `Cannot remove the DNS record of ${s.spec.domain}: ${(err as Error).message}`);
        throw err;
      }
    });
    if (state !== 'present') return;

    let deployment: Deployment;
    let service: Service;
    try {
      const cm: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${req.name}-content`, namespace: req.namespace } };
      const content = await createOrUpdate(client, cm, (c) => {
        setControllerReference(site, c);
        c.metadata!.labels = { ...c.metadata!.labels, ...labels(site) };
        c.data = { ...site.spec.content };
      });
      if (content.result !== 'unchanged') recorder.event(site, 'Normal', content.result === 'created' ? 'CreatedConfigMap' : 'UpdatedConfigMap', `${content.result === 'created' ? 'Created' : 'Updated'} ConfigMap ${req.name}-content`);

      const oldDeployment = await client.get(kinds.Deployment, req);
      deployment = await client.apply(desiredDeployment(site), { fieldManager: FIELD_MANAGER, force: true });
      if (!oldDeployment) recorder.event(site, 'Normal', 'CreatedDeployment', `Created Deployment ${req.name}`);
      else if (oldDeployment.metadata?.generation !== deployment.metadata?.generation) recorder.event(site, 'Normal', 'UpdatedDeployment', `Updated Deployment ${req.name}`);

      const oldService = await client.get(kinds.Service, req);
      service = await client.apply(desiredService(site), { fieldManager: FIELD_MANAGER, force: true });
      if (!oldService) recorder.event(site, 'Normal', 'CreatedService', `Created Service ${req.name}`);
    } catch (err) {
      await reportDegraded(ctx, site, err);
      // A child another controller owns, or a spec the API refuses (a bad file name): retrying cannot help until the spec changes.
      if (err instanceof AlreadyOwnedError || isInvalid(err)) throw new TerminalError((err as Error).message, { cause: err });
      throw err;
    }

    const ip = service.spec?.clusterIP;
    if (ip && ip !== 'None' && (await publish(client, dnsNamespace, site.spec.domain, ip))) {
      recorder.event(site, 'Normal', 'DNSRecordPublished', `Published ${site.spec.domain} -> ${ip}`);
    }

    const status = computeStatus(site, deployment, service);
    if (!sameStatus(site.status, status)) {
      const wasReady = findStatusCondition(site.status?.conditions, 'Ready')?.status;
      site.status = status;
      await client.updateStatus(site);
      const ready = findStatusCondition(status.conditions, 'Ready');
      if (ready?.status === 'True' && wasReady !== 'True') recorder.event(site, 'Normal', 'Ready', ready.message);
    }
  };
}

/** Marks the site Degraded with the error's message (best effort: the error is what matters). */
async function reportDegraded(ctx: ReconcileContext<StaticSite>, site: StaticSite, err: unknown): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  ctx.recorder.event(site, 'Warning', 'ReconcileFailed', message);
  const status: SiteStatus = structuredClone(site.status ?? {});
  if (!setStatusCondition(status, { type: 'Degraded', status: 'True', reason: 'ReconcileFailed', message, observedGeneration: site.metadata?.generation ?? 0 })) return;
  try {
    await ctx.client.updateStatus({ ...site, status });
  } catch (statusErr) {
    ctx.log.error(statusErr, 'cannot record the Degraded condition');
  }
}

/** Registers the StaticSite controller with the manager. */
export function setupStaticSiteController(mgr: Manager, opts: StaticSiteControllerOptions = {}): RuntimeController {
  return controller(mgr)
    .for(StaticSite)
    .owns(kinds.ConfigMap)
    .owns(kinds.Deployment)
    .owns(kinds.Service)
    .withOptions({ maxConcurrentReconciles: opts.maxConcurrentReconciles ?? 2 })
    .complete(staticSiteReconciler(opts));
}
